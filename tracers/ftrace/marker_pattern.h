// The byte pattern the "marker" workload writes and the ftrace adapter checks
// when it reads the print events back.  Printable, never '\n' or '\0' (the
// kernel appends "\n\0" to a marker that does not end in a newline), and
// position-dependent so a shifted or truncated copy does not verify.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracebench::marker {

constexpr char pattern_byte(std::size_t i) {
  // 94 printable ASCII characters, '!' .. '~'; stride 7 is coprime with 94.
  return static_cast<char>('!' + (i * 7 + 3) % 94);
}

inline void fill_pattern(char* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = pattern_byte(i);
}

// Number of leading bytes of `data` (length n) that match the pattern.
inline std::size_t matching_prefix(const char* data, std::size_t n) {
  std::size_t i = 0;
  while (i < n && data[i] == pattern_byte(i)) ++i;
  return i;
}

}  // namespace tracebench::marker
