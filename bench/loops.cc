// Baselines that never enter the kernel: an empty loop (what the harness
// itself costs per event) and a noinline function call.
#include <cstdint>

#include "tracebench/workload.h"

extern "C" __attribute__((noinline, used)) void tb_noinline_call() {
  asm volatile("" ::: "memory");  // the call must stay a call
}

namespace tracebench {
namespace {

class EmptyLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) asm volatile("" ::: "memory");
  }
};

class CallLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) tb_noinline_call();
  }
};

}  // namespace

TRACEBENCH_REGISTER_WORKLOAD(empty, Workload{"empty", "loops",
                                             "one iteration of an empty loop (the harness's own per-event cost)",
                                             ProbePoint{"none", ProbeKind::kNone, "", 0, "fires nothing"}, false,
                                             [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
                                               *out = std::make_unique<EmptyLoop>();
                                               return Status::ok();
                                             }});

TRACEBENCH_REGISTER_WORKLOAD(call,
                             Workload{"call", "loops", "a call of the noinline function tb_noinline_call",
                                      ProbePoint{"user:tb_noinline_call", ProbeKind::kUserFunction, "tb_noinline_call",
                                                 reinterpret_cast<std::uintptr_t>(&tb_noinline_call),
                                                 "entry of a noinline C function"},
                                      false, [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
                                        *out = std::make_unique<CallLoop>();
                                        return Status::ok();
                                      }});

}  // namespace tracebench
