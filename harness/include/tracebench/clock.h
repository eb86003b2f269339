// Serialized TSC reads around a measured region (Paoloni, "How to Benchmark
// Code Execution Times", 2010): lfence before rdtsc keeps earlier work out of
// the region; rdtscp + lfence at the end waits for the region to retire and
// keeps later work out.  rdtscp also returns the CPU (TSC_AUX), so a sample
// that migrated can be told apart.
#pragma once

#include <x86intrin.h>

#include <cstdint>
#include <string>

namespace tracebench {

inline std::uint64_t tsc_begin() {
  _mm_lfence();
  std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

inline std::uint64_t tsc_end(unsigned* aux) {
  std::uint64_t t = __rdtscp(aux);
  _mm_lfence();
  return t;
}

struct TscInfo {
  double hz = 0;               // ticks per second
  std::string source;          // "perf_event_mmap_page" or "calibrated"
  double calibrated_hz = 0;    // always measured, as a cross-check
  bool invariant = false;      // constant_tsc && nonstop_tsc
};

// Reads the kernel's TSC->ns conversion (perf mmap page time_mult/shift) when
// the kernel exposes it, and always calibrates against CLOCK_MONOTONIC_RAW.
TscInfo probe_tsc();

}  // namespace tracebench
