// Compares two runs benchmark by benchmark (the regression question: did
// kernel B, or this change, make a tracer more expensive than A?).  Per
// benchmark: the per-repetition overheads (traced - baseline) of A and B,
// their medians, the ratio B/A, a two-sided test (which one: `method`) and
// the smallest change that test could have found (the MDE, power.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracebench/results.h"
#include "tracebench/sequential.h"
#include "tracebench/status.h"

namespace tracebench {

struct MannWhitney {
  double u = 0;        // U statistic of the first sample
  double p_value = 1;  // two-sided, normal approximation with tie correction
};
MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// Welch's two-sample t test (unequal variances), two-sided; p from Student's
// t distribution (Boost.Math) at the Welch-Satterthwaite degrees of freedom.
// Needs two values a side; two constant samples give p 0 when their values
// differ, 1 when they do not.
struct WelchT {
  double t = 0, df = 0;
  double p_value = 1;
};
WelchT welch_t(const std::vector<double>& a, const std::vector<double>& b);

struct CompareRow {
  std::string benchmark;
  std::string what;  // "overhead" or "baseline" (tracer none)
  double a_median = 0, b_median = 0;
  std::optional<double> ratio;  // b / a
  double p_value = 1;
  std::size_t a_n = 0, b_n = 0;        // repetitions pooled
  std::size_t a_runs = 0, b_runs = 0;  // runs in which the benchmark succeeded
  // How p was found: "pairs" (sides recorded as pairs, pairs.h: the paired t
  // test on the pairs' log ratios of run medians, ratio is its geometric
  // mean), "runs" (two or more runs a side: Welch's t on each run's median,
  // medians are the median run's) or "repetitions" (a side with one run:
  // Mann-Whitney U on the pooled repetitions)
  std::string method;
  // The minimum detectable effect (power.h): the smallest relative change
  // the test of `method` would find with 80% and 90% power at alpha, from
  // the spread it saw (pairs: of the log ratios; runs: of the run medians,
  // run to run; repetitions: of the repetitions, within one run, so it
  // understates what a rerun would see).  Infinite when that spread cannot
  // be had; unset for missing/failed.
  std::optional<double> mde80, mde90;
  // "regression", "improvement", "same" (not significant and the MDE at 80%
  // within the threshold, or significant but within the threshold),
  // "inconclusive" (not significant, but the test could not have seen a
  // change as large as the threshold: MDE at 80% above it), "missing"
  // (absent from a side) or "failed" (failed, or has no figure, in every run
  // of a side)
  std::string verdict;
  std::string side;    // "A" or "B" for missing/failed
  std::string detail;  // for missing/failed: which side and why; else in how many runs of a side it is
  // "same" although p < alpha: the change is smaller than the threshold.
  bool threshold_decided = false;
  // With `sequential` (pairs only): the always-valid test of sequential.h on
  // the pairs' log ratios in pair order, at alpha split over the benchmarks;
  // its verdict replaces the fixed-sample one, "undecided" while it has not
  // decided (more pairs may decide it; the test stays valid however often it
  // is looked at, which a fixed-sample test re-run after each pair is not).
  std::optional<SequentialState> sequential;
};

struct CompareResult {
  std::vector<CompareRow> rows;
  std::vector<std::string> warnings;
  std::size_t b_benchmarks = 0;     // benchmarks in the runs of B
  double threshold = 0, alpha = 0;  // as compared (the table's legend says them)
};

// The figure compare tests of one benchmark in one run, in ns: the median of
// its per-repetition overheads (traced - baseline), or of its baselines for
// tracer none ("baseline" in `what`).  Unset when it has no figure there.
std::optional<double> run_figure_ns(const BenchmarkResult& b, double tsc_hz, std::string* what);

// What compare needs of a result it read: a positive finite TSC rate,
// finite figures, each benchmark once.  The error names the file and field.
Status check_comparable(const RunResult& r, const std::string& file);

// For --fail-on-regression: a regression, a benchmark of A missing or failed
// in B, or a B without benchmarks; with `inconclusive_fails`
// (--fail-on-inconclusive) an inconclusive benchmark too.  `why` lists them.
bool fails_check(const CompareResult& c, std::string* why, bool inconclusive_fails = false);

// `threshold` is the relative change below which a significant difference is
// still reported "same"; `alpha` the significance level.
Status compare_runs(const RunResult& a, const RunResult& b, double threshold, double alpha, CompareResult* out);

// Several runs per side (say kernel A and kernel B, run in turn).  Where the
// machine's speed drifts for seconds to minutes at a time, the repetitions of
// one run share one state and a single pair of runs can differ by more than
// the change sought; runs spread over time do not.  So with two or more runs
// on each side in which a benchmark succeeded, the unit of the test is the
// run: each run's median of its per-repetition values, Welch's t test on
// those (method "runs"); treating repetitions of different runs as
// independent (a pooled U test) raises false alarms on A/A runs as often as
// the runs differ.  With one run on a side, the repetitions are all there is
// (method "repetitions", with a warning).  With `pairs` (each run's pair
// name, aligned with a and b: pairs.h), a benchmark that succeeded in both
// runs of two or more pairs is tested on those pairs (method "pairs").
struct PairIds {
  std::vector<std::string> a, b;
  // Decide each paired benchmark with the sequential test (CompareRow::sequential).
  bool sequential = false;
};
Status compare_runs(const std::vector<const RunResult*>& a, const std::vector<const RunResult*>& b, double threshold,
                    double alpha, CompareResult* out, const PairIds* pairs = nullptr);

}  // namespace tracebench
