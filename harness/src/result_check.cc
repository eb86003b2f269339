// A result's consistency (tracebench/result_check.h): the rules a result
// written by `tracebench run` holds by construction, checked on every read.
#include "tracebench/result_check.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace tracebench {

namespace {

// Two figures that are one figure computed twice (ns from cycles, a
// percentile of scaled values): equal up to floating-point rounding and the
// JSON's 17 significant digits.
bool same(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b)) + 1e-9; }
// a <= b up to rounding.
bool at_most(double a, double b) { return a <= b || same(a, b); }

class Checker {
 public:
  explicit Checker(const std::string& file) : file_(file) {}

  // Records the first problem; `where` is the field, e.g. "benchmarks[2]
  // (ftrace/getpid/...): baseline.cycles_per_event.p50".
  void bad(const std::string& where, const std::string& what) {
    if (!first_) first_ = fmt::format("{}: {}: {}", file_, where, what);
  }
  bool failed() const { return first_.has_value(); }

  void finite(const std::string& where, double v) {
    if (!std::isfinite(v)) bad(where, fmt::format("{} is not a finite number", v));
  }

  // A problem said as one phrase: "FILE: what".
  void say(const std::string& what) {
    if (!first_) first_ = fmt::format("{}: {}", file_, what);
  }

  Status status() const {
    if (!first_) return Status::ok();
    return Status::error(*first_ +
                         "; a result tracebench run wrote holds this by construction: the file was edited or damaged, "
                         "and nothing is read from it (rerun the benchmark, or restore the file)");
  }

 private:
  std::string file_;
  std::optional<std::string> first_;
};

void check_context(const RunContext& c, Checker* k) {
  if (!std::isfinite(c.tsc_hz) || !(c.tsc_hz > 0))
    k->say(fmt::format("context.tsc.hz is {}: not a positive finite rate (no figure converts to ns)", c.tsc_hz));
  k->finite("context.tsc.calibrated_hz", c.tsc_calibrated_hz);
  k->finite("context.floor.cycles", c.floor_cycles);
  k->finite("context.floor.mad_cycles", c.floor_mad_cycles);
  if (k->failed()) return;
  if (c.tsc_calibrated_hz < 0) k->bad("context.tsc.calibrated_hz", fmt::format("{} is negative", c.tsc_calibrated_hz));
  // The rate the figures use is the kernel's or the calibration's, and the
  // clock check refuses a run where the two differ by more than 5%.
  if (c.tsc_hz > 0 && c.tsc_calibrated_hz > 0 && std::fabs(c.tsc_hz / c.tsc_calibrated_hz - 1) > kResultRateTolerance)
    k->bad(
        "context.tsc.hz",
        fmt::format("{:.6g} Hz is {:.2f} times the calibrated {:.6g} Hz (context.tsc.calibrated_hz); the clock check "
                    "allows {:.0f}%",
                    c.tsc_hz, c.tsc_hz / c.tsc_calibrated_hz, c.tsc_calibrated_hz, 100 * kResultRateTolerance));
  if (c.floor_cycles < 0) k->bad("context.floor.cycles", fmt::format("{} is negative", c.floor_cycles));
  if (c.floor_mad_cycles < 0) k->bad("context.floor.mad_cycles", fmt::format("{} is negative", c.floor_mad_cycles));
}

// A distribution of cycles (or ns) per event: finite, ordered, and no lower
// than `lowest`: a sample's raw cycles are never negative, so a per-event
// figure is at least -floor / batch.
void check_summary(const std::string& where, const Summary& s, double lowest, Checker* k) {
  if (s.n == 0) return;
  const std::pair<const char*, double> fields[] = {{"min", s.min},   {"p10", s.p10},       {"p50", s.p50},
                                                   {"p90", s.p90},   {"p99", s.p99},       {"max", s.max},
                                                   {"mean", s.mean}, {"stddev", s.stddev}, {"mad", s.mad}};
  for (const auto& [name, v] : fields) k->finite(where + "." + name, v);
  if (k->failed()) return;
  const double order[] = {s.min, s.p10, s.p50, s.p90, s.p99, s.max};
  for (std::size_t i = 0; i + 1 < std::size(order); ++i)
    if (!at_most(order[i], order[i + 1]))
      k->bad(where, fmt::format("min, p10, p50, p90, p99, max = {}, {}, {}, {}, {}, {} are not in order", s.min, s.p10,
                                s.p50, s.p90, s.p99, s.max));
  if (!at_most(s.min, s.mean) || !at_most(s.mean, s.max))
    k->bad(where + ".mean", fmt::format("{} is outside [min {}, max {}]", s.mean, s.min, s.max));
  if (s.stddev < 0 || s.mad < 0) k->bad(where, fmt::format("stddev {} or mad {} is negative", s.stddev, s.mad));
  if (!at_most(lowest, s.min))
    k->bad(where + ".min",
           fmt::format("{} per event is below {:.6g}, the least a sample can give (its raw cycles are never negative: "
                       "-floor / batch): a cost per event cannot be that negative",
                       s.min, lowest));
}

void check_interval(const std::string& where, const MedianCI& c, Checker* k) {
  k->finite(where + ".median", c.median);
  k->finite(where + ".ci_low", c.low);
  k->finite(where + ".ci_high", c.high);
  k->finite(where + ".ci_confidence", c.confidence);
  if (k->failed()) return;
  if (!at_most(c.low, c.median) || !at_most(c.median, c.high))
    k->bad(where, fmt::format("the interval [{}, {}] does not hold its median {} (ci_low <= median <= ci_high)", c.low,
                              c.high, c.median));
  if (!(c.confidence > 0) || c.confidence > 1)
    k->bad(where + ".ci_confidence", fmt::format("{} is not a confidence in (0, 1]", c.confidence));
  if (c.n == 0) k->bad(where + ".n", "0 repetitions behind an interval");
}

// A figure given in cycles and in ns per event (`where`_cycles_per_event,
// `where`_ns_per_event): each interval holds its median, and the ns are the
// cycles at the run's TSC rate.
void check_figure(const std::string& where, const std::optional<MedianCI>& cycles, const std::optional<MedianCI>& ns,
                  double ns_per_cycle, Checker* k) {
  if (cycles) check_interval(where + "_cycles_per_event", *cycles, k);
  if (ns) check_interval(where + "_ns_per_event", *ns, k);
  if (!cycles || !ns || k->failed()) return;
  const MedianCI &cy = *cycles, &n = *ns;
  if (!same(n.median, cy.median * ns_per_cycle) || !same(n.low, cy.low * ns_per_cycle) ||
      !same(n.high, cy.high * ns_per_cycle))
    k->bad(where + "_ns_per_event",
           fmt::format("{} [{}, {}] ns is not the {} [{}, {}] cycles at the run's TSC rate (context.tsc.hz)", n.median,
                       n.low, n.high, cy.median, cy.low, cy.high));
}

void check_variant(const std::string& where, const VariantResult& v, double lowest_cycles, double ns_per_cycle,
                   Checker* k) {
  check_summary(where + ".cycles_per_event", v.cycles, lowest_cycles, k);
  check_summary(where + ".ns_per_event", v.ns, lowest_cycles * ns_per_cycle, k);
  if (v.cycles.n > 0 && v.ns.n > 0 && !k->failed() &&
      (!same(v.ns.p50, v.cycles.p50 * ns_per_cycle) || !same(v.ns.min, v.cycles.min * ns_per_cycle)))
    k->bad(where + ".ns_per_event.p50",
           fmt::format("{} ns is not the {} cycles at the run's TSC rate (context.tsc.hz: {} ns)", v.ns.p50,
                       v.cycles.p50, v.cycles.p50 * ns_per_cycle));
  if (v.disturbed > v.samples || v.migrated > v.disturbed)
    k->bad(where, fmt::format("{} samples, {} disturbed, {} migrated: the disturbed are some of the samples and the "
                              "migrated some of the disturbed",
                              v.samples, v.disturbed, v.migrated));
  for (std::size_t i = 0; i < v.repetition_medians.size(); ++i) {
    const std::string f = fmt::format("{}.repetition_medians_cycles[{}]", where, i);
    // Beyond 1000 s per event a figure is not a measurement.
    if (const double x = v.repetition_medians[i]; !std::isfinite(x) || std::fabs(x * ns_per_cycle) > 1e12)
      k->say(fmt::format("{}.repetition_medians_cycles holds {}: not a finite figure", where, x));
    else if (!at_most(lowest_cycles, v.repetition_medians[i]))
      k->bad(f, fmt::format("{} cycles per event is below {:.6g}, the least a sample can give (-floor / batch)",
                            v.repetition_medians[i], lowest_cycles));
  }
  if (v.cold_first_event_cycles) k->finite(where + ".cold_first_event_cycles", *v.cold_first_event_cycles);
  for (const auto& [name, x] : v.counters_per_event) k->finite(where + ".counters_per_event." + name, x);
}

// What an "ok" benchmark has: samples, repetitions and the medians of those
// kept, and intervals over exactly those.
void check_counts(const std::string& where, const BenchmarkResult& b, Checker* k) {
  if (b.repetitions < 1) k->bad(where + ".repetitions", fmt::format("{} repetitions behind a figure", b.repetitions));
  if (b.batch == 0) k->bad(where + ".batch", "0 events per sample");
  if (b.samples_per_block == 0) k->bad(where + ".samples_per_block", "0 samples per block");
  if (b.baseline.samples == 0 || b.traced.samples == 0)
    k->bad(where,
           fmt::format("{} baseline and {} traced samples behind a figure", b.baseline.samples, b.traced.samples));
  if (k->failed()) return;
  const std::size_t nb = b.baseline.repetition_medians.size(), nt = b.traced.repetition_medians.size();
  if (nb != nt)
    k->bad(where,
           fmt::format("{} baseline and {} traced repetition medians: each kept repetition has one of each", nb, nt));
  // Repetitions left out before a level shift have no medians either.
  const auto left_out = static_cast<std::uint64_t>(b.left_out_overheads_cycles.size());
  const auto reps = static_cast<std::uint64_t>(b.repetitions);
  if (b.dropped_repetitions) {
    const std::uint64_t gone = *b.dropped_repetitions + left_out;
    if (gone > reps || nt != reps - gone)
      k->bad(where + ".traced.repetition_medians_cycles",
             fmt::format("{} medians for {} repetitions with {} dropped and {} left out before a level shift ({} "
                         "expected)",
                         nt, reps, *b.dropped_repetitions, left_out, reps - std::min(reps, gone)));
  } else if (nt > reps) {
    k->bad(where + ".traced.repetition_medians_cycles", fmt::format("{} medians for {} repetitions", nt, reps));
  }
  if (b.overhead_cycles && !k->failed() && b.overhead_cycles->n != nt)
    k->bad(where + ".overhead_cycles_per_event.n",
           fmt::format("the interval rests on {} repetitions, but {} were kept (repetition medians)",
                       b.overhead_cycles->n, nt));
}

void check_benchmark(std::size_t i, const BenchmarkResult& b, const RunContext& c, Checker* k) {
  const std::string where = fmt::format("benchmarks[{}] ({})", i, b.name);
  if (b.status != "ok" && b.status != "error" && b.status != "skipped" && b.status != "unsteady")
    k->bad(where + ".status", fmt::format("'{}' is none of ok, error, skipped, unsteady", b.status));
  if (b.status == "unsteady" && (b.level_shifts.empty() || b.overhead_cycles))
    k->bad(where + ".status", "unsteady without the level shifts that made it so, or with a figure");
  const std::string& v = b.events.verification;
  if (v != "passed" && v != "partial" && v != "failed" && v != "not_applicable")
    k->bad(where + ".events.verification", fmt::format("'{}' is none of passed, partial, failed, not_applicable", v));
  if (b.threads < 1) k->bad(where + ".threads", fmt::format("{} firing threads", b.threads));
  if (k->failed()) return;
  const double ns_per_cycle = 1e9 / c.tsc_hz;
  const double lowest = b.batch > 0 ? -c.floor_cycles / static_cast<double>(b.batch) : -c.floor_cycles;
  check_variant(where + ".baseline", b.baseline, lowest, ns_per_cycle, k);
  check_variant(where + ".traced", b.traced, lowest, ns_per_cycle, k);
  check_figure(where + ".overhead", b.overhead_cycles, b.overhead_ns, ns_per_cycle, k);
  check_figure(where + ".amortized_overhead", b.amortized_overhead_cycles, b.amortized_overhead_ns, ns_per_cycle, k);
  if (b.events.timer_events_per_op) k->finite(where + ".events.timer_events_per_op", *b.events.timer_events_per_op);
  if (b.consumer) {
    k->finite(where + ".consumer.cpu_ns", b.consumer->cpu_ns);
    k->finite(where + ".consumer.caller_cpu_ns", b.consumer->caller_cpu_ns);
    k->finite(where + ".consumer.window_s", b.consumer->window_s);
  }
  if (b.status == "ok" && !k->failed()) check_counts(where, b, k);
}

}  // namespace

Status check_result(const RunResult& run, const std::string& file) {
  Checker k(file);
  check_context(run.context, &k);
  std::set<std::string> names;
  for (const auto& b : run.benchmarks)
    if (!names.insert(b.name).second) k.say(fmt::format("benchmark {} appears twice", b.name));
  for (std::size_t i = 0; i < run.benchmarks.size() && !k.failed(); ++i)
    check_benchmark(i, run.benchmarks[i], run.context, &k);
  return k.status();
}

}  // namespace tracebench
