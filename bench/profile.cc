// A workload for profile probes: it only burns CPU, and the tracer's own
// timer (a sampling clock on the firing thread) fires the probe while it
// runs.  Its events are the timer's firings, which the tracer counts.
#include <cstdint>

#include "tracebench/workload.h"

namespace tracebench {
namespace {

// One op: a chain of 12000 dependent multiply-adds, ~35k cycles (13 µs at
// 2.6 GHz) whatever the compiler does: each step needs the last one's result.
constexpr std::uint64_t kStepsPerOp = 12000;

class Spin final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    std::uint64_t x = seed_;
    for (std::uint64_t i = 0; i < n * kStepsPerOp; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    seed_ = x;
    asm volatile("" : : "r"(x) : "memory");
  }

 private:
  std::uint64_t seed_ = 1;
};

}  // namespace

// 250 ops (~3 ms) per timed sample at least: a sample then spans ~30 of a
// 10 kHz timer's periods, so whether it holds n or n+1 firings moves its
// time by 3 % of the firings' cost at most.
TRACEBENCH_REGISTER_WORKLOAD(
    spin,
    Workload{
        "spin",
        "profile",
        "~35k cycles of dependent arithmetic per op, no probe of its own: a profile probe (the tracer's timer on the "
        "thread's CPU clock) fires while it runs",
        ProbePoint{"profile:cpu-clock", ProbeKind::kProfile, "cpu-clock", 0,
                   "the tracer's timer on the firing thread's CPU clock (bpftrace's profile:hz, perf record -F)"},
        false,
        [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
          *out = std::make_unique<Spin>();
          return Status::ok();
        },
        {},
        250});

}  // namespace tracebench
