// What the tracebench provider's events carry.  The bytes a tracebench:payload event carries: the workload writes them, the
// trace reader checks every byte of every event against them.  Printable and
// never NUL, because the field is a CTF text sequence.
#pragma once

#include <cstddef>

#include <cstdint>

namespace tracebench::lttng {

// The value of every tracebench:hot event's `tag` field.
inline constexpr std::uint32_t kHotTag = 0x74620001u;

inline char payload_byte(std::size_t i) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  return kAlphabet[i % (sizeof(kAlphabet) - 1)];
}

}  // namespace tracebench::lttng
