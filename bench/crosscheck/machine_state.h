// Was the machine at its uncontended speed throughout a round?  On a
// virtual machine whose neighbours come and go (here a Firecracker guest:
// for a few hundred ms to seconds at a time every syscall is ~35% slower,
// traced or not), a round whose two sides ran in different states compares
// the states, not the tools; and in the slow state the two designs do not
// measure the same thing either (seen here: the suite's untraced getpid,
// a median over samples of 3 calls, read 147-157 ns where the loop's
// median chunk of 100 calls read 182-193).  Probes of the measured CPU's
// speed around the suite's run and around each case's reference tell such
// rounds apart: an untraced figure counts only at the command's fastest
// speed; an overhead (traced less untraced, on each side) in any one state
// the whole round stayed in, since a state slows both of a side's figures
// alike (seen here: ftrace's getpid event 422 ns by the suite, 416 ns by
// hand, with getpid at 190 ns for minutes).  The command redoes unsteady
// rounds (a few times at most), leaves out those that stay so, and says so.
//
// The probe: getpid(2) from this thread pinned to the measured CPU, 5000
// calls in chunks of 100 timed with clock_gettime, the median chunk (an
// interrupt lands in one chunk and does not move it).  Not a figure that is
// compared: only its steadiness is read.
#pragma once

#include <vector>

namespace tracebench::crosscheck {

// What a round saw of the speed may exceed the fastest probe by this much:
// the slow state is 25-40% slower; the suite's untraced getpid reads 1-8%
// above the probe in the fast state (in steps of ~2.4%: samples of 3 calls).
inline constexpr double kSteadyTolerance = 0.10;
// Attempts at a round that is not steady; one still unsteady after them is
// left out.
inline constexpr int kRoundAttempts = 3;

// ns per getpid on `cpu`; the calling thread is left pinned to `restore`.
double probe_speed_ns(int cpu, const std::vector<int>& restore);

// Everything in `seen_ns` lies within `tolerance` above `fastest_ns` (the
// fastest probe of the command: the machine's uncontended speed).
bool steady(const std::vector<double>& seen_ns, double fastest_ns, double tolerance = kSteadyTolerance);

// Everything in `seen_ns` lies within `tolerance` above the least of it: the
// round stayed in one state, whichever.
bool one_state(const std::vector<double>& seen_ns, double tolerance = kSteadyTolerance);

}  // namespace tracebench::crosscheck
