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

double short_gap_share(const std::vector<std::uint64_t>& gaps, const std::vector<std::uint64_t>& ends,
                       std::uint64_t span, int windows, double threshold_ns, double tsc_hz) {
  if (span == 0 || windows < 1 || !(tsc_hz > 0)) return 0;
  std::vector<double> in_window(static_cast<std::size_t>(windows), 0);
  for (std::size_t i = 0; i < gaps.size() && i < ends.size(); ++i) {
    const double ns = static_cast<double>(gaps[i]) / tsc_hz * 1e9;
    if (ns <= threshold_ns || ns >= kPreemptionNs) continue;
    const auto w = std::min<std::uint64_t>(static_cast<std::uint64_t>(windows) - 1,
                                           ends[i] * static_cast<std::uint64_t>(windows) / span);
    in_window[w] += ns;
  }
  const double window_ns = static_cast<double>(span) / tsc_hz * 1e9 / windows;
  for (double& ns : in_window) ns /= window_ns;
  return summarize(std::move(in_window)).p50;
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
  std::vector<std::uint64_t> gaps(1 << 16, 0), ends(1 << 16, 0);
  std::size_t found = 0;
  const auto could_be_gap = static_cast<std::uint64_t>(500e-9 * tsc_hz);
  const auto span = static_cast<std::uint64_t>(seconds * tsc_hz);
  const std::uint64_t start = seen_tsc(__rdtsc());
  prev = start;
  for (std::uint64_t now = start; now - start < span; prev = now) {
    now = seen_tsc(__rdtsc());
    if (now - prev > could_be_gap && found < gaps.size()) {
      ends[found] = now - start;
      gaps[found++] = now - prev;
    }
  }
  gaps.resize(found);
  ends.resize(found);
  CpuGaps g = gaps_in(deltas, gaps, static_cast<double>(prev - start) / tsc_hz, tsc_hz);
  g.short_share = short_gap_share(gaps, ends, prev - start, kShareWindows, g.threshold_ns, tsc_hz);
  return g;
}

double sample_cap_cycles(const CpuGaps& g, double tsc_hz, double min_sample_cycles) {
  if (!(g.per_second > 0)) return 0;
  return std::max(min_sample_cycles, kHitShare / g.per_second * tsc_hz);
}

}  // namespace tracebench
