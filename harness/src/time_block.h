// Internal to the runner: the machine a run measures on (its clock plan,
// the longest a sample may span, the measured CPU, the counters) and the
// timing of one block of samples on it, the way the clock plan says.
#pragma once

#include <sched.h>
#include <time.h>

#include <cstdint>

#include "tracebench/clock.h"
#include "tracebench/clock_check.h"
#include "tracebench/counters.h"
#include "tracebench/host_simulation.h"
#include "tracebench/workload.h"

#include "simulated_steal.h"

namespace tracebench {

struct Machine {
  ClockPlan clock;                  // how regions are read, migrations detected, the floor
  double sample_cap_cycles = 0;     // the longest a traced sample may span (cpu_gaps.h); 0: no cap
  double interrupt_gap_cycles = 0;  // a sample this much above the median was hit
  double host_share = 0;            // of the measured CPU's time the host's short gaps take (cpu_gaps.h)
  int measured_cpu = 0;
  Counters* counters = nullptr;
};

// Times `n` samples of `batch` events each, the way the clock plan says:
// raw cycles per sample (floor not subtracted) and whether it migrated.
// With a gap (`run --gap-us`), the thread sleeps that long before each
// sample, outside the timed region: the sample's first event then comes
// after the CPUs idled (a reader asleep, caches and predictors cold).
template <EndRead E, bool kGetcpu>
void time_samples(WorkloadState* st, std::uint64_t batch, std::uint64_t n, const ClockPlan& clk, int cpu,
                  const timespec* gap, double* cycles, std::uint8_t* migrated) {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (gap) clock_nanosleep(CLOCK_MONOTONIC, 0, gap, nullptr);
    int before = kGetcpu ? sched_getcpu() : cpu;
    unsigned aux;
    std::uint64_t t0 = tsc_begin();
    st->fire(batch);
    std::uint64_t t1 = tsc_end_as<E>(&aux);
    int after = kGetcpu ? sched_getcpu() : cpu;
    cycles[i] = static_cast<double>(seen_tsc(t1) - seen_tsc(t0));
    migrated[i] = sample_migrated(clk.migration, clk.expected_aux, cpu, aux, before, after);
  }
}

inline void time_block(WorkloadState* st, std::uint64_t batch, std::uint64_t n, const Machine& m, double* cycles,
                       std::uint8_t* migrated, const timespec* gap = nullptr) {
  const ClockPlan& c = m.clock;
  const StealWindow stolen_from;  // a simulated host's steal, here only
  bool getcpu = c.migration == MigrationMethod::kGetcpu;
  if (c.end_read == EndRead::kLfenceRdtsc)
    time_samples<EndRead::kLfenceRdtsc, true>(st, batch, n, c, m.measured_cpu, gap, cycles, migrated);
  else if (getcpu)
    time_samples<EndRead::kRdtscp, true>(st, batch, n, c, m.measured_cpu, gap, cycles, migrated);
  else
    time_samples<EndRead::kRdtscp, false>(st, batch, n, c, m.measured_cpu, gap, cycles, migrated);
}

}  // namespace tracebench
