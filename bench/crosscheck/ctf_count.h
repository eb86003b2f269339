// What an LTTng trace holds, read with the babeltrace2 library
// (source.ctf.fs -> filter.utils.muxer -> a counting sink): the reference
// side's own reading of the lttng CLI session's trace, sharing nothing with
// the suite's adapter.
#pragma once

#include <cstdint>
#include <string>

#include "tracebench/status.h"

namespace tracebench::crosscheck {

struct CtfCount {
  std::uint64_t events = 0;        // events named as asked
  std::uint64_t other_events = 0;  // any other event
  std::uint64_t discarded = 0;     // discarded-events messages' counts
  std::uint64_t checked = 0;       // events whose fields were checked
  std::uint64_t bad = 0;           // of those, a field differs (tag, payload bytes or length)
};

// What the loop puts in its events (loops/ust_loop.c).
struct CtfExpect {
  std::string event;          // "tracebench:hot" or "tracebench:payload"
  std::uint32_t payload = 0;  // payload: its length; the bytes are "abc...z0...9" repeated
};

// Every CTF trace under `root` (directories holding a `metadata` file).
Status count_ctf(const std::string& root, const CtfExpect& expect, CtfCount* out);

// "" when babeltrace2 can read CTF here, else why not.
std::string ctf_reader_missing();

}  // namespace tracebench::crosscheck
