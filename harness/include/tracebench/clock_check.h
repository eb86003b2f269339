// The clock self-check a run makes before it measures anything, and what
// `tracebench env` shows.  Two halves, so every host variant can be tested
// on any host:
//   observe_clock()  reads this machine (CPUID, TSC_AUX on each CPU, the
//                    TSC's rate and smallest step, the floor);
//   decide_clock()   is pure: from those facts it chooses how a region ends,
//                    how migrations are detected, the batching floor, and
//                    gives every check a verdict (pass / warn / fail) with
//                    the reason in words.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tracebench/clock.h"

namespace tracebench {

// What one CPU showed.
struct CpuClockFacts {
  int cpu = 0;
  bool pinned = false;  // could pin a thread there
  // TSC_AUX from two rdtscp reads some time apart (only read when CPUID
  // reports RDTSCP).
  std::optional<unsigned> aux_first, aux_second;
  std::uint64_t step_cycles = 0;  // the TSC's step: recurring_step() of consecutive rdtsc differences
  bool went_backwards = false;    // a later read returned less than an earlier one
  // sched_getcpu() while pinned there (checks the fallback method works).
  int getcpu = -1;
};

struct ClockFacts {
  bool cpuid_rdtscp = false;                                 // CPUID 0x80000001 EDX[27]
  bool cpuid_invariant_tsc = false;                          // CPUID 0x80000007 EDX[8]
  bool flag_constant_tsc = false, flag_nonstop_tsc = false;  // /proc/cpuinfo
  double kernel_hz = 0;                                      // perf mmap page; 0 = not exposed
  double calibrated_hz = 0;                                  // against CLOCK_MONOTONIC_RAW
  std::vector<CpuClockFacts> cpus;
  int measured_cpu = 0;
  // Floor: median (cycles) of each calibration round, and of all samples.
  std::vector<double> floor_round_medians;
  double floor_median = 0, floor_mad = 0;
};

struct ClockCheck {
  std::string name;     // "rdtscp", "tsc_aux", "invariant", "rate", "resolution", "monotonic", "floor"
  std::string verdict;  // "pass" | "warn" | "fail"
  std::string value;    // what was observed, short
  std::string reason;   // in words: what it means and what the run does about it
};

struct ClockPlan {
  EndRead end_read = EndRead::kRdtscp;
  MigrationMethod migration = MigrationMethod::kTscAux;
  unsigned expected_aux = 0;  // kTscAux/kTscAuxLearned: TSC_AUX of the measured CPU
  double tsc_hz = 0;
  std::string tsc_source;         // "perf_event_mmap_page" | "calibrated"
  std::uint64_t step_cycles = 1;  // the measured CPU's TSC step
  double floor_cycles = 0, floor_mad_cycles = 0;
  // A timed sample spans at least this many cycles (batching): 20x the
  // floor, 1000x the TSC's step, and 400 cycles.
  double min_sample_cycles = 400;
  std::vector<ClockCheck> checks;
  bool ok() const;               // no check failed
  std::string failures() const;  // the failed checks, one per line
};

// Thresholds (documented in harness/README.md, "How a figure is measured").
inline constexpr double kRateWarn = 0.01;  // kernel vs calibrated TSC rate
inline constexpr double kRateFail = 0.05;
inline constexpr double kStepsPerSample = 1000;  // a step is then <= 0.1% of a sample
inline constexpr double kFloorsPerSample = 20;

ClockPlan decide_clock(const ClockFacts& facts);

// The resolution rule for a batch the user forced (`run --batch`): a sample
// of `batch` events at `per_event_cycles` each (floor subtracted) must span
// the plan's min_sample_cycles, or its figure is the clock's step divided by
// the batch, not the events' cost.  "" when it does; else what is wrong and
// what to give instead (`unit`: the workload's smallest batch).
std::string forced_batch_problem(const ClockPlan& p, double per_event_cycles, std::uint64_t batch, std::uint64_t unit);

// The common step of consecutive-read differences (difference -> count):
// the gcd of those seen at least `min_count` times; 1 when none recurs.
std::uint64_t recurring_step(const std::map<std::uint64_t, int>& diffs, int min_count);

// Reads this machine.  Pins the calling thread to each CPU in turn and
// leaves it pinned to `measured_cpu`.
ClockFacts observe_clock(int measured_cpu);

// The empty region's cost as the run measures it: `rounds` rounds of
// `samples` samples, read the way `end` says.
void calibrate_floor_rounds(EndRead end, int rounds, int samples, std::vector<double>* round_medians, double* median,
                            double* mad);

// Whether a sample ran where it should: `aux` is what the end read returned,
// `cpu_before`/`cpu_after` what sched_getcpu() said around it (kGetcpu only).
inline bool sample_migrated(MigrationMethod m, unsigned expected_aux, int measured_cpu, unsigned aux, int cpu_before,
                            int cpu_after) {
  switch (m) {
    case MigrationMethod::kTscAux:
      return static_cast<int>(aux & 0xfff) != measured_cpu;  // Linux: CPU number in TSC_AUX[11:0]
    case MigrationMethod::kTscAuxLearned: return aux != expected_aux;
    case MigrationMethod::kGetcpu: return cpu_before != measured_cpu || cpu_after != measured_cpu;
  }
  return true;
}

void to_json(nlohmann::json& j, const ClockCheck& c);
void from_json(const nlohmann::json& j, ClockCheck& c);
// The run context's "clock" object: plan, checks and the per-CPU facts.
nlohmann::json clock_json(const ClockFacts& facts, const ClockPlan& plan);

}  // namespace tracebench
