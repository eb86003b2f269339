// What the tracebench provider's events carry.  tracebench:payload events
// carry the suite's payload pattern (tracebench/payload_pattern.h); the trace
// reader checks every byte of every event against it.
#pragma once

#include <cstdint>

#include "tracebench/payload_pattern.h"

namespace tracebench::lttng {

// The value of every tracebench:hot event's `tag` field.
inline constexpr std::uint32_t kHotTag = 0x74620001u;

using tracebench::payload_byte;

}  // namespace tracebench::lttng
