#include "plain_loop.h"

#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "site.h"
#include "tracebench/clock.h"
#include "tracebench/host_simulation.h"
#include "tracebench/stats.h"
#include "tracebench/system.h"
#include "tracebench/workload.h"

namespace tbdelay {
namespace {

using tracebench::seen_tsc;

constexpr int kPairs = 21;                // interleaved traced/untraced block pairs
constexpr int kSamples = 201;             // samples per block
constexpr double kSampleSeconds = 20e-6;  // a sample: many events for the timing's own cost, few gaps

// Per event, in TSC cycles: the median of `kSamples` samples of `batch` events.
double block_median(tracebench::WorkloadState& w, std::uint64_t batch) {
  std::vector<double> per_event(kSamples);
  for (double& v : per_event) {
    const std::uint64_t t0 = seen_tsc(tracebench::tsc_begin());
    w.fire(batch);
    const std::uint64_t t1 = seen_tsc(tracebench::tsc_end_lfence());
    v = static_cast<double>(t1 - t0) / static_cast<double>(batch);
  }
  return tracebench::median_of(std::move(per_event));
}

// Turns the switch off on every way out.
struct SwitchOff {
  ~SwitchOff() { g_spin_cycles.store(0, std::memory_order_relaxed); }
};

}  // namespace

tracebench::Status plain_added_ns(const char* workload, std::uint64_t spin_cycles, double tsc_hz, int cpu,
                                  PlainFigure* out) {
  const tracebench::Workload* w = tracebench::find_workload(workload);
  if (w == nullptr || w->only_tracer != "delay")
    return tracebench::Status::error(fmt::format("{} is not a delay site", workload));
  if (spin_cycles == 0 || !(tsc_hz > 0)) return tracebench::Status::error("no spin to time");
  TB_TRY(tracebench::pin_current_thread(cpu));
  std::unique_ptr<tracebench::WorkloadState> state;
  TB_TRY(w->setup(tracebench::WorkloadParams{}, &state));
  SwitchOff off;
  // The batch from one traced sample of 64 events, after a warm-up of both.
  g_spin_cycles.store(spin_cycles, std::memory_order_relaxed);
  state->fire(1000);
  const double traced = block_median(*state, 64);
  g_spin_cycles.store(0, std::memory_order_relaxed);
  state->fire(1000);
  const auto batch = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(kSampleSeconds * tsc_hz / traced));
  std::vector<double> diffs;
  for (int p = 0; p < kPairs; ++p) {
    double median[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const bool on = (k + p) % 2 == 0;  // the order alternates
      g_spin_cycles.store(on ? spin_cycles : 0, std::memory_order_relaxed);
      median[on] = block_median(*state, batch);
    }
    diffs.push_back((median[1] - median[0]) / tsc_hz * 1e9);
  }
  const tracebench::MedianCI ci = tracebench::median_ci(std::move(diffs));
  out->added_ns = ci.median;
  out->halfwidth_ns = 0.5 * (ci.high - ci.low);
  return tracebench::Status::ok();
}

}  // namespace tbdelay
