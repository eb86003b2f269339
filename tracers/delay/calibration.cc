#include "calibration.h"

#include <x86intrin.h>

#include <algorithm>
#include <vector>

#include "site.h"
#include "tracebench/clock.h"
#include "tracebench/host_simulation.h"

namespace tbdelay {

using tracebench::seen_tsc;

// Three 20 ms windows (clock.cc).
double tsc_hz() {
  static const double hz = tracebench::probe_tsc().calibrated_hz;
  return hz;
}

// Windows of about 50 us each, long enough to spread the timing's own cost
// over tens of calls.  A preemption, an interrupt or time stolen by the
// hypervisor only ever lengthens a window, so on a busy machine the lower
// quartile still sees undisturbed ones where a median of a few long windows
// would not.
double handler_cycles(std::uint64_t cycles, double hz) {
  constexpr int kWindows = 61;
  const std::uint64_t calls =
      std::max<std::uint64_t>(20, static_cast<std::uint64_t>(50e-6 * hz / std::max<double>(cycles, 100.0)));
  std::vector<double> per_call;
  for (int w = 0; w < kWindows; ++w) {
    const std::uint64_t t0 = seen_tsc(tracebench::tsc_begin());
    for (std::uint64_t i = 0; i < calls; ++i) handle(cycles);
    const std::uint64_t t1 = seen_tsc(tracebench::tsc_end_lfence());
    per_call.push_back(static_cast<double>(t1 - t0) / static_cast<double>(calls));
  }
  std::nth_element(per_call.begin(), per_call.begin() + kWindows / 4, per_call.end());
  return per_call[kWindows / 4];
}

// The lower quartile of 31 windows of 1000 back-to-back reads, per read.
double tsc_read_cycles() {
  constexpr int kWindows = 31, kReads = 1000;
  std::vector<double> per_read;
  for (int w = 0; w < kWindows; ++w) {
    const std::uint64_t t0 = seen_tsc(__rdtsc());
    std::uint64_t t = t0;
    for (int i = 0; i < kReads; ++i) t = seen_tsc(__rdtsc());
    per_read.push_back(static_cast<double>(t - t0) / kReads);
  }
  std::nth_element(per_read.begin(), per_read.begin() + kWindows / 4, per_read.end());
  return per_read[kWindows / 4];
}

std::uint64_t gap_cycles(double hz) {
  constexpr double kGapSeconds = 500e-9, kGapReads = 20;
  return static_cast<std::uint64_t>(std::max(kGapSeconds * hz, kGapReads * tsc_read_cycles()));
}

double least_handler_ns() {
  const double hz = tsc_hz();
  return hz > 0 ? handler_cycles(1, hz) / hz * 1e9 : 0;
}

}  // namespace tbdelay
