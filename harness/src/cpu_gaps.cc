#include "tracebench/cpu_gaps.h"

#include <x86intrin.h>

#include <algorithm>
#include <cmath>

#include "tracebench/host_simulation.h"
#include "tracebench/stats.h"

namespace tracebench {

CpuGaps gaps_in(const std::vector<std::uint64_t>& typical, const std::vector<std::uint64_t>& candidates,
                double window_s, double tsc_hz) {
  CpuGaps g;
  g.window_s = window_s;
  if (typical.empty() || !(tsc_hz > 0)) return g;
  const double threshold = std::max(500e-9 * tsc_hz, 20 * summarize({typical.begin(), typical.end()}).p50);
  g.threshold_ns = threshold / tsc_hz * 1e9;
  std::vector<double> gaps;
  for (std::uint64_t d : candidates)
    if (static_cast<double>(d) > threshold) gaps.push_back(static_cast<double>(d) / tsc_hz * 1e9);
  g.count = gaps.size();
  g.per_second = window_s > 0 ? static_cast<double>(g.count) / window_s : 0;
  if (!gaps.empty()) {
    double total_ns = 0;
    for (double ns : gaps) total_ns += ns;
    g.share = window_s > 0 ? total_ns / 1e9 / window_s : 0;
    const Summary s = summarize(std::move(gaps));
    g.median_ns = s.p50;
    g.p90_ns = s.p90;
  }
  return g;
}

CpuGaps survey_cpu_gaps(double seconds, double tsc_hz) {
  // The typical difference first, from a short run of reads into memory
  // touched beforehand; then the gaps alone, into memory touched beforehand
  // too: a page first touched while surveying is a fault, a gap the survey
  // would make itself (every few microseconds, storing every difference).
  std::vector<std::uint64_t> deltas(1 << 14, 0);
  std::uint64_t prev = seen_tsc(__rdtsc());
  for (auto& d : deltas) {
    const std::uint64_t now = seen_tsc(__rdtsc());
    d = now - prev;
    prev = now;
  }
  std::vector<std::uint64_t> gaps(1 << 16, 0);
  std::size_t found = 0;
  const auto could_be_gap = static_cast<std::uint64_t>(500e-9 * tsc_hz);
  const auto span = static_cast<std::uint64_t>(seconds * tsc_hz);
  const std::uint64_t start = seen_tsc(__rdtsc());
  prev = start;
  for (std::uint64_t now = start; now - start < span; prev = now) {
    now = seen_tsc(__rdtsc());
    if (now - prev > could_be_gap && found < gaps.size()) gaps[found++] = now - prev;
  }
  gaps.resize(found);
  return gaps_in(deltas, gaps, static_cast<double>(prev - start) / tsc_hz, tsc_hz);
}

double sample_cap_cycles(const CpuGaps& g, double tsc_hz, double min_sample_cycles) {
  if (!(g.per_second > 0)) return 0;
  return std::max(min_sample_cycles, kHitShare / g.per_second * tsc_hz);
}

}  // namespace tracebench
