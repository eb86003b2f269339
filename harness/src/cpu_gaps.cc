#include "tracebench/cpu_gaps.h"

#include <x86intrin.h>

#include <algorithm>
#include <cmath>

#include "tracebench/host_simulation.h"
#include "tracebench/stats.h"

namespace tracebench {

CpuGaps gaps_in(const std::vector<std::uint64_t>& deltas, double window_s, double tsc_hz) {
  CpuGaps g;
  g.window_s = window_s;
  if (deltas.empty() || !(tsc_hz > 0)) return g;
  std::vector<double> all(deltas.begin(), deltas.end());
  const double typical = summarize(all).p50;
  const double threshold = std::max(500e-9 * tsc_hz, 20 * typical);
  g.threshold_ns = threshold / tsc_hz * 1e9;
  std::vector<double> gaps;
  for (std::uint64_t d : deltas)
    if (static_cast<double>(d) > threshold) gaps.push_back(static_cast<double>(d) / tsc_hz * 1e9);
  g.count = gaps.size();
  g.per_second = window_s > 0 ? static_cast<double>(g.count) / window_s : 0;
  if (!gaps.empty()) {
    const Summary s = summarize(std::move(gaps));
    g.median_ns = s.p50;
    g.p90_ns = s.p90;
  }
  return g;
}

CpuGaps survey_cpu_gaps(double seconds, double tsc_hz) {
  const auto span = static_cast<std::uint64_t>(seconds * tsc_hz);
  std::vector<std::uint64_t> deltas;
  deltas.reserve(1 << 20);
  const std::uint64_t start = seen_tsc(__rdtsc());
  std::uint64_t prev = start;
  // Beyond the first million differences (the typical one is known by
  // then) only those that could be gaps are kept: 500 ns or more.
  const auto could_be_gap = static_cast<std::uint64_t>(500e-9 * tsc_hz);
  for (std::uint64_t now = start; now - start < span; prev = now) {
    now = seen_tsc(__rdtsc());
    if (now > prev && (deltas.size() < (1u << 20) || now - prev > could_be_gap)) deltas.push_back(now - prev);
  }
  return gaps_in(deltas, static_cast<double>(prev - start) / tsc_hz, tsc_hz);
}

double sample_cap_cycles(const CpuGaps& g, double tsc_hz, double min_sample_cycles) {
  if (!(g.per_second > 0)) return 0;
  return std::max(min_sample_cycles, kHitShare / g.per_second * tsc_hz);
}

}  // namespace tracebench
