// What the delay tracer reads of its handler (site.cc): the events it ran.
#pragma once

#include <cstdint>

namespace tbdelay {

// Zeroes every thread's count; call while no thread fires.
void reset_handled();
// Events handled since the last reset_handled(), every thread's.
std::uint64_t handled();

// The next `events` events spin `cycles` instead of the switch's spin, and
// again every `every` events when it is not 0 (a first pass that costs
// more: the delay tracer's first_pass_* options); 0 events: none.
void set_first_pass(std::uint64_t events, std::uint64_t every, std::uint64_t cycles);

// A step of this many TSC cycles or more between two of the spin's reads is
// the host's gap, not spin: the spin goes on for as long again.
void set_gap_cycles(std::uint64_t cycles);

}  // namespace tbdelay
