// What the delay tracer measures of its own handler at a user site, for the
// tracer's trim (delay.cc) and for `tracebench selftest`, which chooses the
// smallest cost it asks for from it (selftest_command.cc).
#pragma once

#include <cstdint>

namespace tbdelay {

// TSC ticks per second against CLOCK_MONOTONIC_RAW, once per process.
double tsc_hz();

// TSC cycles one handler call takes with a spin of `cycles` (the lower
// quartile of many windows of back-to-back calls).
double handler_cycles(std::uint64_t cycles, double hz);

// The step between two TSC reads from which the spin takes it for the
// host's gap (an interrupt, stolen time), not spin: 500 ns or 20 reads,
// whichever is longer (site.cc's handler, set at attach).
std::uint64_t gap_cycles(double hz);

// The handler's own cost with the shortest spin, in ns: no delay this
// handler adds can be shorter.
double least_handler_ns();

}  // namespace tbdelay
