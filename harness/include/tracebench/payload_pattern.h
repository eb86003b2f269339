// The bytes a user-space workload hands a tracer as payload, so the tracer
// can check every recorded byte: byte i of a payload is payload_byte(i).
// Printable and never NUL, because LTTng-UST carries it as a CTF text
// sequence.  Workloads that several tracers can trace at the same site
// (bench/same_site.cc) rely on all of them checking this one pattern.
#pragma once

#include <cstddef>

namespace tracebench {

inline char payload_byte(std::size_t i) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  return kAlphabet[i % (sizeof(kAlphabet) - 1)];
}

}  // namespace tracebench
