// The bytes a workload hands a tracer as payload, so the tracer can check
// every recorded byte: byte i of a payload is payload_byte(i).  One pattern
// for the whole suite (harness, workloads, ftrace marker, eBPF, D-VM, LTTng,
// the companion module): it is defined once, in C, in
// kmod/include/tracebench_payload_pattern.h, which the kernel module shares.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "kmod/include/tracebench_payload_pattern.h"

namespace tracebench {

inline char payload_byte(std::size_t i) { return static_cast<char>(tb_payload_byte(i)); }

inline void fill_payload(char* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = payload_byte(i);
}

// The first n bytes of the pattern, laid out once so a checker can memcmp.
inline std::vector<char> payload_pattern(std::size_t n) {
  std::vector<char> v(n);
  fill_payload(v.data(), n);
  return v;
}

// Number of leading bytes of `data` (length n) that match the pattern.
inline std::size_t payload_matching_prefix(const char* data, std::size_t n) {
  std::size_t i = 0;
  while (i < n && data[i] == payload_byte(i)) ++i;
  return i;
}

}  // namespace tracebench
