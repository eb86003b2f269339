#include "tracebench/clock_check.h"

#include <cpuid.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tracebench/host_simulation.h"
#include "tracebench/stats.h"
#include "tracebench/system.h"

namespace tracebench {

using nlohmann::json;

bool ClockPlan::ok() const {
  return std::none_of(checks.begin(), checks.end(), [](const ClockCheck& c) { return c.verdict == "fail"; });
}

std::string ClockPlan::failures() const {
  std::string out;
  for (const auto& c : checks) {
    if (c.verdict == "fail") out += fmt::format("{}{}: {}", out.empty() ? "" : "\n", c.name, c.reason);
  }
  return out;
}

namespace {

const CpuClockFacts* find_cpu(const ClockFacts& f, int cpu) {
  for (const auto& c : f.cpus) {
    if (c.cpu == cpu && c.pinned) return &c;
  }
  return nullptr;
}

std::string aux_list(const ClockFacts& f) {
  std::string out;
  for (const auto& c : f.cpus) {
    if (!c.pinned) continue;
    std::string v = !c.aux_first ? "?"
                    : *c.aux_first == c.aux_second.value_or(*c.aux_first)
                        ? std::to_string(*c.aux_first)
                        : fmt::format("{} then {}", *c.aux_first, *c.aux_second);
    out += fmt::format("{}CPU {}: {}", out.empty() ? "" : ", ", c.cpu, v);
  }
  return out;
}

ClockCheck check(std::string name, std::string verdict, std::string value, std::string reason) {
  return ClockCheck{std::move(name), std::move(verdict), std::move(value), std::move(reason)};
}

// Chooses the migration method from what TSC_AUX held on each CPU.
void decide_migration(const ClockFacts& f, ClockPlan* p) {
  const CpuClockFacts* measured = find_cpu(f, f.measured_cpu);
  if (!f.cpuid_rdtscp) {
    p->migration = MigrationMethod::kGetcpu;
    p->checks.push_back(check("tsc_aux", "warn", "not read",
                              "CPUID reports no RDTSCP, so TSC_AUX was not read (a hypervisor may let rdtscp execute "
                              "with a TSC_AUX the kernel never wrote): migrations are detected with sched_getcpu() "
                              "before and after each sample, outside the timed region"));
    return;
  }
  bool stable = true, is_cpu_number = true;
  std::set<unsigned> values;
  std::size_t pinned = 0;
  for (const auto& c : f.cpus) {
    if (!c.pinned) continue;
    ++pinned;
    if (!c.aux_first || !c.aux_second || *c.aux_first != *c.aux_second) {
      stable = false;
      continue;
    }
    values.insert(*c.aux_first);
    if (static_cast<int>(*c.aux_first & 0xfff) != c.cpu) is_cpu_number = false;
  }
  if (stable && is_cpu_number && measured) {
    p->migration = MigrationMethod::kTscAux;
    p->expected_aux = *measured->aux_first;
    p->checks.push_back(check("tsc_aux", "pass", aux_list(f),
                              "TSC_AUX holds the CPU number on every CPU: a sample migrated when the rdtscp at its "
                              "end reports another CPU"));
    return;
  }
  if (stable && values.size() == pinned && measured) {
    p->migration = MigrationMethod::kTscAuxLearned;
    p->expected_aux = *measured->aux_first;
    p->checks.push_back(check(
        "tsc_aux", "warn", aux_list(f),
        fmt::format("TSC_AUX is stable and differs per CPU but is not the CPU number (the kernel did not write it): a "
                    "sample migrated when its TSC_AUX is not {}, the value learned on the measured CPU {}",
                    p->expected_aux, f.measured_cpu)));
    return;
  }
  p->migration = MigrationMethod::kGetcpu;
  p->checks.push_back(check("tsc_aux", "warn", aux_list(f),
                            fmt::format("TSC_AUX {} on these CPUs: it cannot tell them apart, so migrations are "
                                        "detected with sched_getcpu() before and after each sample",
                                        stable ? "is the same" : "changed between two reads")));
}

}  // namespace

std::uint64_t recurring_step(const std::map<std::uint64_t, int>& diffs, int min_count) {
  std::uint64_t g = 0;
  for (const auto& [d, n] : diffs) {
    if (n >= min_count) g = std::gcd(g, d);
  }
  return g ? g : 1;
}

ClockPlan decide_clock(const ClockFacts& f) {
  ClockPlan p;
  const CpuClockFacts* measured = find_cpu(f, f.measured_cpu);

  p.end_read = f.cpuid_rdtscp ? EndRead::kRdtscp : EndRead::kLfenceRdtsc;
  p.checks.push_back(f.cpuid_rdtscp
                         ? check("rdtscp", "pass", "CPUID: yes", "a region ends with rdtscp; lfence")
                         : check("rdtscp", "warn", "CPUID: no",
                                 "CPUID reports no RDTSCP: a region ends with lfence; rdtsc; lfence (the floor is "
                                 "measured the same way)"));

  decide_migration(f, &p);
  if (p.migration == MigrationMethod::kGetcpu) {
    std::string bad;
    for (const auto& c : f.cpus) {
      if (c.pinned && c.getcpu != c.cpu) bad += fmt::format(" CPU {} reported {};", c.cpu, c.getcpu);
    }
    if (!measured) bad += fmt::format(" the measured CPU {} could not be pinned;", f.measured_cpu);
    if (!bad.empty())
      p.checks.push_back(check("migration", "fail", "sched_getcpu",
                               "no way to detect migrations: sched_getcpu() does not report the pinned CPU:" + bad));
  }

  bool invariant = (f.flag_constant_tsc && f.flag_nonstop_tsc) || f.cpuid_invariant_tsc;
  p.checks.push_back(invariant ? check("invariant", "pass", "yes", "the TSC ticks at a constant rate in every state")
                               : check("invariant", "warn", "no",
                                       "the TSC may change rate with frequency or sleep states: cycles are not "
                                       "time, and ns figures are approximate"));

  // Rate: the kernel's figure, cross-checked by calibration.
  if (!(f.calibrated_hz > 0) || !std::isfinite(f.calibrated_hz)) {
    p.tsc_hz = f.kernel_hz;
    p.tsc_source = "perf_event_mmap_page";
    p.checks.push_back(check("rate", "fail", fmt::format("calibrated {}", f.calibrated_hz),
                             "calibration against CLOCK_MONOTONIC_RAW gave no rate"));
  } else if (f.kernel_hz > 0) {
    p.tsc_hz = f.kernel_hz;
    p.tsc_source = "perf_event_mmap_page";
    double d = std::fabs(f.calibrated_hz - f.kernel_hz) / f.kernel_hz;
    std::string value = fmt::format("kernel {:.1f} MHz, calibrated {:.1f} MHz ({:+.2f}%)", f.kernel_hz / 1e6,
                                    f.calibrated_hz / 1e6, 100 * (f.calibrated_hz / f.kernel_hz - 1));
    if (d <= kRateWarn)
      p.checks.push_back(check("rate", "pass", value, "the kernel's TSC rate and calibration agree within 1%"));
    else if (d <= kRateFail)
      p.checks.push_back(check("rate", "warn", value,
                               "the kernel's TSC rate and calibration differ by 1-5%: ns figures use the kernel's"));
    else
      p.checks.push_back(check("rate", "fail", value,
                               "the kernel's TSC rate and calibration differ by more than 5%: no ns figure can be "
                               "trusted (is the TSC ticking at a constant rate?)"));
  } else {
    p.tsc_hz = f.calibrated_hz;
    p.tsc_source = "calibrated";
    p.checks.push_back(check("rate", "warn", fmt::format("calibrated {:.1f} MHz", f.calibrated_hz / 1e6),
                             "the kernel does not expose its TSC rate (perf mmap page): ns figures use the "
                             "calibration against CLOCK_MONOTONIC_RAW alone"));
  }

  // Monotonic on each CPU.
  std::string backwards;
  for (const auto& c : f.cpus) {
    if (c.pinned && c.went_backwards) backwards += fmt::format(" {}", c.cpu);
  }
  p.checks.push_back(backwards.empty()
                         ? check("monotonic", "pass", "yes", "consecutive reads on each CPU never went backwards")
                         : check("monotonic", "fail", "CPU" + backwards,
                                 "the TSC went backwards between consecutive reads on CPU" + backwards +
                                     ": no interval on it can be trusted"));

  // Resolution.
  p.step_cycles = measured && measured->step_cycles > 0 ? measured->step_cycles : 1;
  std::string steps;
  for (const auto& c : f.cpus) {
    if (c.pinned) steps += fmt::format("{}CPU {}: {}", steps.empty() ? "" : ", ", c.cpu, c.step_cycles);
  }
  double step_ns = p.tsc_hz > 0 ? static_cast<double>(p.step_cycles) * 1e9 / p.tsc_hz : 0;
  p.checks.push_back(
      p.step_cycles <= 2
          ? check("resolution", "pass", steps, "the TSC advances by one or two cycles between reads")
          : check("resolution", "warn", steps,
                  fmt::format("the TSC advances in steps of {} cycles ({:.1f} ns) on the measured CPU: every sample "
                              "spans at least {:.0f} steps (events are batched), so figures are not quantized",
                              p.step_cycles, step_ns, kStepsPerSample)));

  // Floor.
  p.floor_cycles = f.floor_median;
  p.floor_mad_cycles = f.floor_mad;
  if (f.floor_round_medians.empty()) {
    p.checks.push_back(check("floor", "fail", "not measured", "the empty region's cost was not measured"));
  } else {
    auto [lo, hi] = std::minmax_element(f.floor_round_medians.begin(), f.floor_round_medians.end());
    double spread = *hi - *lo;
    double limit = std::max({2.0 * static_cast<double>(p.step_cycles), 0.25 * f.floor_median, 8.0});
    std::string value = fmt::format("{:.0f} cycles (rounds {:.0f}..{:.0f})", f.floor_median, *lo, *hi);
    p.checks.push_back(spread <= limit
                           ? check("floor", "pass", value, "the empty region's cost is stable across rounds")
                           : check("floor", "warn", value,
                                   fmt::format("the empty region's cost moved by {:.0f} cycles across rounds (more "
                                               "than {:.0f}): the machine was busy or changing speed; figures near "
                                               "the floor are uncertain",
                                               spread, limit)));
  }
  p.min_sample_cycles =
      std::max({400.0, kFloorsPerSample * p.floor_cycles, kStepsPerSample * static_cast<double>(p.step_cycles)});
  return p;
}

std::string forced_batch_problem(const ClockPlan& p, double per_event_cycles, std::uint64_t batch, std::uint64_t unit) {
  const double per_event = std::max(0.0, per_event_cycles);
  // What the clock reads for one sample: the events and the empty region.
  const double span = per_event * static_cast<double>(batch) + p.floor_cycles;
  if (span >= p.min_sample_cycles) return "";
  std::string instead = "leave --batch out (the pilot then picks a batch that spans it)";
  unit = std::max<std::uint64_t>(1, unit);
  // Events per sample that would span the minimum, in whole units; beyond
  // --batch's range the events are too cheap for any forced batch.
  const double need = per_event > 0 ? std::ceil((p.min_sample_cycles - p.floor_cycles) / per_event) : 1e300;
  if (need <= 1e7) {
    auto n = static_cast<std::uint64_t>(need);
    if (n % unit) n += unit - n % unit;
    instead = fmt::format("give --batch {} or more, or {}", n, instead);
  }
  return fmt::format(
      "--batch {}: a sample spans ~{:.0f} cycles ({:.2f} per event and the {:.0f}-cycle floor), under the {:.0f} the "
      "clock needs ({:.0f} steps of its {} cycles, {:.0f}x the floor, 400 at least): the figure would be the clock's "
      "step over the batch (~{:.2f} cycles per event), not the events' cost; {}",
      batch, span, per_event, p.floor_cycles, p.min_sample_cycles, kStepsPerSample, p.step_cycles, kFloorsPerSample,
      static_cast<double>(p.step_cycles) / static_cast<double>(std::max<std::uint64_t>(1, batch)), instead);
}

void calibrate_floor_rounds(EndRead end, int rounds, int samples, std::vector<double>* round_medians, double* median,
                            double* mad) {
  std::vector<double> all;
  all.reserve(static_cast<std::size_t>(rounds) * static_cast<std::size_t>(samples));
  round_medians->clear();
  unsigned aux;
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> v;
    v.reserve(static_cast<std::size_t>(samples));
    for (int i = 0; i < samples; ++i) {
      std::uint64_t t0 = tsc_begin();
      std::uint64_t t1 =
          end == EndRead::kRdtscp ? tsc_end_as<EndRead::kRdtscp>(&aux) : tsc_end_as<EndRead::kLfenceRdtsc>(&aux);
      v.push_back(static_cast<double>(seen_tsc(t1) - seen_tsc(t0)));
    }
    all.insert(all.end(), v.begin(), v.end());
    round_medians->push_back(summarize(std::move(v)).p50);
  }
  Summary s = summarize(std::move(all));
  *median = s.p50;
  *mad = s.mad;
}

ClockFacts observe_clock(int measured_cpu) {
  ClockFacts f;
  f.measured_cpu = measured_cpu;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0x80000001, &a, &b, &c, &d)) f.cpuid_rdtscp = (d >> 27) & 1;
  if (host_simulation().no_rdtscp) f.cpuid_rdtscp = false;
  if (__get_cpuid(0x80000007, &a, &b, &c, &d)) f.cpuid_invariant_tsc = (d >> 8) & 1;
  f.flag_constant_tsc = cpu_has_flag("constant_tsc");
  f.flag_nonstop_tsc = cpu_has_flag("nonstop_tsc");

  // Every configured CPU, whatever this thread's affinity is now (a run
  // has pinned it already); one that cannot be pinned is recorded as such.
  int configured = static_cast<int>(sysconf(_SC_NPROCESSORS_CONF));
  for (int cpu = 0; cpu < std::min(configured, CPU_SETSIZE); ++cpu) {
    CpuClockFacts cf;
    cf.cpu = cpu;
    cf.pinned = pin_current_thread(cpu).is_ok();
    if (!cf.pinned) {
      f.cpus.push_back(cf);
      continue;
    }
    unsigned aux = 0;
    if (f.cpuid_rdtscp) {
      (void)tsc_end(&aux);
      cf.aux_first = aux;
    }
    // The TSC's resolution: consecutive reads differ by the read's latency
    // on a fine TSC (36, 37, 39, ... cycles: no common step) but by
    // multiples of one step on a coarse one (21, 42, 63).  The step is the
    // greatest common divisor of the differences that recur (at least 0.1%
    // of the reads), so a rare odd difference does not hide it.
    constexpr int kReads = 200000;
    std::map<std::uint64_t, int> diffs;
    std::uint64_t prev = seen_tsc(__rdtsc());
    for (int i = 0; i < kReads; ++i) {
      std::uint64_t t = seen_tsc(__rdtsc());
      if (t < prev) cf.went_backwards = true;
      if (t > prev && t - prev < 100000) ++diffs[t - prev];
      prev = t;
    }
    cf.step_cycles = recurring_step(diffs, kReads / 1000);
    cf.getcpu = sched_getcpu();
    if (f.cpuid_rdtscp) {
      (void)tsc_end(&aux);
      cf.aux_second = aux;
    }
    f.cpus.push_back(cf);
  }
  (void)pin_current_thread(measured_cpu);
  TscInfo t = probe_tsc();
  f.kernel_hz = t.kernel_hz;
  f.calibrated_hz = t.calibrated_hz;
  calibrate_floor_rounds(f.cpuid_rdtscp ? EndRead::kRdtscp : EndRead::kLfenceRdtsc, 5, 4000, &f.floor_round_medians,
                         &f.floor_median, &f.floor_mad);
  return f;
}

void to_json(json& j, const ClockCheck& c) {
  j = json{{"name", c.name}, {"verdict", c.verdict}, {"value", c.value}, {"reason", c.reason}};
}
void from_json(const json& j, ClockCheck& c) {
  j.at("name").get_to(c.name);
  j.at("verdict").get_to(c.verdict);
  j.at("value").get_to(c.value);
  j.at("reason").get_to(c.reason);
}

json clock_json(const ClockFacts& f, const ClockPlan& p) {
  json cpus = json::array();
  for (const auto& c : f.cpus) {
    json e{{"cpu", c.cpu}, {"pinned", c.pinned}, {"step_cycles", c.step_cycles}, {"getcpu", c.getcpu}};
    e["tsc_aux"] = c.aux_first ? json(*c.aux_first) : json(nullptr);
    cpus.push_back(e);
  }
  return json{{"end_read", std::string(to_string(p.end_read))},
              {"migration_method", std::string(to_string(p.migration))},
              {"expected_tsc_aux", p.migration == MigrationMethod::kGetcpu ? json(nullptr) : json(p.expected_aux)},
              {"cpuid_rdtscp", f.cpuid_rdtscp},
              {"step_cycles", p.step_cycles},
              {"min_sample_cycles", p.min_sample_cycles},
              {"floor_round_medians_cycles", f.floor_round_medians},
              {"cpus", cpus},
              {"checks", p.checks}};
}

}  // namespace tracebench
