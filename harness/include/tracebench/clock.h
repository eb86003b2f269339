// Serialized TSC reads around a measured region (Paoloni, "How to Benchmark
// Code Execution Times", 2010): lfence before rdtsc keeps earlier work out of
// the region; at the end, rdtscp + lfence waits for the region to retire and
// keeps later work out.
//
// Nothing about the host is assumed.  Before a run the clock is checked
// (clock_check.h): whether CPUID reports RDTSCP (a hypervisor may let the
// instruction execute without it, with a TSC_AUX the kernel never wrote),
// what TSC_AUX holds on each CPU, the TSC's rate and resolution, the floor.
// From that the run chooses how a region ends (`EndRead`) and how a sample
// that changed CPU is told apart (`MigrationMethod`); both are recorded in the
// run context.
#pragma once

#include <sched.h>
#include <time.h>
#include <x86intrin.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tracebench {

// A POSIX clock in ns (CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW, ...).
inline double clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

inline std::uint64_t tsc_begin() {
  _mm_lfence();
  std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

// End of a region with rdtscp; `aux` gets TSC_AUX.  Only where CPUID reports
// RDTSCP.
inline std::uint64_t tsc_end(unsigned* aux) {
  std::uint64_t t = __rdtscp(aux);
  _mm_lfence();
  return t;
}

// End of a region without rdtscp: lfence waits for the region's instructions
// to complete before rdtsc reads the counter.
inline std::uint64_t tsc_end_lfence() {
  _mm_lfence();
  std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

// How the end of a measured region is read.
enum class EndRead {
  kRdtscp,       // rdtscp; lfence
  kLfenceRdtsc,  // lfence; rdtsc; lfence (CPUID reports no RDTSCP)
};

// How a sample that ran on another CPU than the pinned one is detected.
enum class MigrationMethod {
  kTscAux,         // TSC_AUX[11:0] holds the CPU number (what Linux writes)
  kTscAuxLearned,  // TSC_AUX differs per CPU and is stable, but is not the
                   // CPU number: compared with the value learned on the
                   // measured CPU
  kGetcpu,         // sched_getcpu() (rseq / vDSO) before and after each
                   // sample, outside the timed region
};

std::string_view to_string(EndRead e);
std::string_view to_string(MigrationMethod m);

// Reads the end of a region the way `E` says, and reports the CPU tag the
// migration check compares (TSC_AUX, or nothing for kLfenceRdtsc).
template <EndRead E>
inline std::uint64_t tsc_end_as(unsigned* aux) {
  if constexpr (E == EndRead::kRdtscp) {
    return tsc_end(aux);
  } else {
    *aux = 0;
    return tsc_end_lfence();
  }
}

struct TscInfo {
  double hz = 0;             // ticks per second
  std::string source;        // "perf_event_mmap_page" or "calibrated"
  double calibrated_hz = 0;  // always measured, as a cross-check
  double kernel_hz = 0;      // from the perf mmap page; 0 when not exposed
  bool invariant = false;    // constant_tsc && nonstop_tsc
};

// Reads the kernel's TSC->ns conversion (perf mmap page time_mult/shift) when
// the kernel exposes it, and always calibrates against CLOCK_MONOTONIC_RAW.
TscInfo probe_tsc();

// Whether /proc/cpuinfo lists `flag` for the CPUs.
bool cpu_has_flag(const std::string& flag);

}  // namespace tracebench
