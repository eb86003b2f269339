// Is the machine as fast at the end of a round as at its start?  On a
// virtual machine whose neighbours come and go (here a Firecracker guest:
// for a few hundred ms to seconds at a time every syscall is ~35% slower,
// traced or not), a round whose two sides ran in different states compares
// the states, not the tools.  A probe of the measured CPU's speed before,
// between and after the two sides tells such rounds apart; the command
// redoes them (a few times at most) and says so.
//
// The probe: getpid(2) from this thread pinned to the measured CPU, 5000
// calls in chunks of 100 timed with clock_gettime, the median chunk (an
// interrupt lands in one chunk and does not move it).  Not a figure that is
// compared: only its steadiness is read.
#pragma once

#include <vector>

namespace tracebench::crosscheck {

// What a round saw of the speed may differ by this much (max / min - 1):
// the slow state is ~35% slower, the suite's and the loop's untraced getpid
// are ~3% apart, the suite's quantized in steps of ~2%.
inline constexpr double kSteadyTolerance = 0.08;
// Attempts at a round whose probes differ more, the last one kept.
inline constexpr int kRoundAttempts = 3;

// ns per getpid on `cpu`; the calling thread is left pinned to `restore`.
double probe_speed_ns(int cpu, const std::vector<int>& restore);

// The probes lie within kSteadyTolerance of each other.
bool steady(const std::vector<double>& probes_ns, double tolerance = kSteadyTolerance);

}  // namespace tracebench::crosscheck
