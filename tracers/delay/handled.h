// What the delay tracer reads of its handler (site.cc): the events it ran.
#pragma once

#include <cstdint>

namespace tbdelay {

// Zeroes every thread's count; call while no thread fires.
void reset_handled();
// Events handled since the last reset_handled(), every thread's.
std::uint64_t handled();

}  // namespace tbdelay
