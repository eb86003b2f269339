// What the host takes from the measured CPU: a thread that reads the TSC back
// to back sees a gap wherever an interrupt, a preemption or (on a VM) an exit
// to the hypervisor took the CPU away.  Surveyed once per run, before
// anything is attached: how often that happens and for how long.
//
// A timed sample hit by such a gap is excluded as disturbed (sample_book.h),
// but only while most samples are not hit: when samples are so long that
// nearly every one holds a gap, the median moves by the gap and nothing tells
// it from the events' cost (on a host that takes 4 us every 200 us, a sample
// of 200 us reads 2% high).  So a traced sample spans at most the time in
// which one sample in ten is hit (`sample_cap_cycles`), or the clock's
// minimum span when that is longer.
#pragma once

#include <cstdint>
#include <vector>

namespace tracebench {

inline constexpr double kHitShare = 0.1;  // of samples a gap may hit, at the cap
// A gap this long or longer is another task run on the CPU (a preemption),
// not an exit to the hypervisor or an interrupt's handler.
inline constexpr double kPreemptionNs = 20000;

struct CpuGaps {
  double window_s = 0;               // how long the survey read
  std::uint64_t count = 0;           // gaps seen
  double per_second = 0;             // count / window
  double median_ns = 0, p90_ns = 0;  // their lengths
  double share = 0;                  // of the window spent in them (the time taken)
  double short_share = 0;            // of the window in those under kPreemptionNs (short_gap_share)
  double threshold_ns = 0;           // a read-to-read difference above this is a gap
};

// The gaps among `candidates` (consecutive TSC-read differences, cycles,
// read over `window_s` seconds at `tsc_hz`): those above max(500 ns, 20x
// the median of `typical` differences).  Pure, for tests.
CpuGaps gaps_in(const std::vector<std::uint64_t>& typical, const std::vector<std::uint64_t>& candidates,
                double window_s, double tsc_hz);

// The share of time the host's short gaps take: of each of `windows` equal
// windows of a `span`-cycle survey, the time in `gaps` (cycles, each ending
// `ends` cycles in) above `threshold_ns` and under kPreemptionNs; the
// median over the windows, so that a burst in one of them does not set it.
// Pure, for tests.
inline constexpr int kShareWindows = 5;
double short_gap_share(const std::vector<std::uint64_t>& gaps, const std::vector<std::uint64_t>& ends,
                       std::uint64_t span, int windows, double threshold_ns, double tsc_hz);

// Reads the TSC back to back on the calling (pinned) thread for `seconds`.
CpuGaps survey_cpu_gaps(double seconds, double tsc_hz);

// The longest a traced sample may span, in cycles: kHitShare / per_second,
// never below `min_sample_cycles`; 0 when the survey saw no gap (no cap).
double sample_cap_cycles(const CpuGaps& g, double tsc_hz, double min_sample_cycles);

}  // namespace tracebench
