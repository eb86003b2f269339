// The delay tracer's workloads (tracers/delay/): a user function and a
// syscall with a delay site at their probe point, where the handler adds a
// calibrated cost to traced events only (`tracebench selftest`).
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <memory>

#include "tracebench/workload.h"
#include "tracers/delay/site.h"

extern "C" __attribute__((noinline, used)) void tb_delay_site() {
  tbdelay::site();
  asm volatile("" ::: "memory");
}

namespace tracebench {
namespace {

class SiteLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) tb_delay_site();
  }
};

// The site just before the syscall: the handler runs on its way in, as a
// syscall-entry probe's would.
class GetpidLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) {
      tbdelay::site();
      syscall(SYS_getpid);
    }
  }
};

template <typename Loop>
Status make_loop(const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
  *out = std::make_unique<Loop>();
  return Status::ok();
}

}  // namespace

TRACEBENCH_REGISTER_WORKLOAD(
    delay_site,
    Workload{.name = "delay_site",
             .family = "delay_sites",
             .description = "call of tb_delay_site(), a delay site (the delay tracer's known cost)",
             .probe = ProbePoint{"delay:tb_delay_site", ProbeKind::kUserFunction, "tb_delay_site",
                                 reinterpret_cast<std::uintptr_t>(&tb_delay_site), "delay site in a noinline function"},
             .setup = make_loop<SiteLoop>,
             .only_tracer = "delay"});

TRACEBENCH_REGISTER_WORKLOAD(
    delay_getpid, Workload{.name = "delay_getpid",
                           .family = "delay_sites",
                           .description = "syscall(SYS_getpid) after a delay site (the delay tracer's known cost)",
                           .probe = ProbePoint{"delay:getpid", ProbeKind::kSyscall, "getpid", 0,
                                               "delay site before the getpid syscall"},
                           .setup = make_loop<GetpidLoop>,
                           .only_tracer = "delay"});

}  // namespace tracebench
