#include "tracebench/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "tracebench/pairs.h"
#include "tracebench/power.h"
#include "tracebench/stats.h"

namespace tracebench {

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitney r;
  const std::size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) return r;
  // Rank the pooled sample, average ranks for ties.
  std::vector<std::pair<double, int>> pooled;
  for (double x : a) pooled.emplace_back(x, 0);
  for (double x : b) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end());
  const std::size_t n = pooled.size();
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    double avg_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_a += avg_rank;
    }
    i = j;
  }
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2), dn = static_cast<double>(n);
  r.u = rank_sum_a - dn1 * (dn1 + 1) / 2.0;
  double mean = dn1 * dn2 / 2.0;
  double var = dn1 * dn2 / 12.0 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (var <= 0) {
    r.p_value = 1;
    return r;
  }
  double z = (std::fabs(r.u - mean) - 0.5) / std::sqrt(var);  // continuity correction
  if (z < 0) z = 0;
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

WelchT welch_t(const std::vector<double>& a, const std::vector<double>& b) {
  WelchT r;
  if (a.size() < 2 || b.size() < 2) return r;
  auto mean_var = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m += x;
    m /= static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - m) * (x - m);
    return std::pair{m, ss / static_cast<double>(v.size() - 1)};
  };
  const auto [ma, va] = mean_var(a);
  const auto [mb, vb] = mean_var(b);
  const double sa = va / static_cast<double>(a.size()), sb = vb / static_cast<double>(b.size());
  if (sa + sb <= 0) {
    r.p_value = ma == mb ? 1 : 0;
    r.t = ma == mb ? 0 : (mb > ma ? INFINITY : -INFINITY);
    return r;
  }
  r.t = (mb - ma) / std::sqrt(sa + sb);
  r.df = (sa + sb) * (sa + sb) /
         (sa * sa / static_cast<double>(a.size() - 1) + sb * sb / static_cast<double>(b.size() - 1));
  boost::math::students_t dist(r.df);
  r.p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(r.t))));
  return r;
}

namespace {

// Per-repetition values a comparison is made on.
std::vector<double> series(const BenchmarkResult& b, std::string* what) {
  const auto& base = b.baseline.repetition_medians;
  const auto& tr = b.traced.repetition_medians;
  std::vector<double> v;
  if (b.tracer == kBaselineTracer) {
    *what = "baseline";
    v = base;
  } else {
    *what = "overhead";
    for (std::size_t i = 0; i < std::min(base.size(), tr.size()); ++i) v.push_back(tr[i] - base[i]);
  }
  return v;
}

// The sequential test on the pairs (in pair order) decides the row.
void decide_sequentially(const std::vector<double>& a, const std::vector<double>& b, double alpha, double threshold,
                         CompareRow* row) {
  std::vector<double> d;
  for (std::size_t i = 0; i < a.size(); ++i) d.push_back(std::log(b[i] / a[i]));
  row->sequential = sequential_test(d, alpha, threshold);
  row->verdict = row->sequential->verdict.empty() ? "undecided" : row->sequential->verdict;
}

}  // namespace

namespace {

// The runs' contexts against each other: emulated with host is refused;
// concurrent runs, other CPUs, other executions and a side of mixed kernels
// are warnings.
Status check_contexts(const std::vector<const RunResult*>& a, const std::vector<const RunResult*>& b,
                      CompareResult* out) {
  const RunResult* first = a.front();
  std::vector<const RunResult*> all(a);
  all.insert(all.end(), b.begin(), b.end());
  // The first run whose `field` differs from the first run's, or null.
  auto differing = [&](auto field) -> const RunResult* {
    for (const RunResult* r : all)
      if (field(*r) != field(*first)) return r;
    return nullptr;
  };
  if (const RunResult* r = differing([](const RunResult& x) { return x.context.emulated; })) {
    const RunResult* emu = r->context.emulated ? r : first;
    const RunResult* host = r->context.emulated ? first : r;
    return Status::error(fmt::format(
        "refusing to compare an emulated run ({}) with a non-emulated one ({}): TCG timings say nothing about hardware",
        emu->context.run_id, host->context.run_id));
  }
  for (const RunResult* r : all) {
    if (r->context.concurrent)
      out->warnings.push_back(
          fmt::format("run {} was measured concurrently with another tracebench command "
                      "(context.concurrent): its figures may hold the other's probes and load",
                      r->context.run_id));
  }
  if (const RunResult* r = differing([](const RunResult& x) { return x.context.cpu_model; })) {
    out->warnings.push_back(
        fmt::format("different CPUs: '{}' vs '{}'", first->context.cpu_model, r->context.cpu_model));
  }
  if (const RunResult* r = differing([](const RunResult& x) { return x.context.execution; })) {
    out->warnings.push_back(
        fmt::format("different execution: {} vs {}", first->context.execution, r->context.execution));
  }
  for (const auto* side : {&a, &b}) {
    for (const RunResult* r : *side) {
      if (r->context.kernel_release != side->front()->context.kernel_release) {
        out->warnings.push_back(fmt::format("side {} mixes kernels: {} and {}", side == &a ? "A" : "B",
                                            side->front()->context.kernel_release, r->context.kernel_release));
        break;
      }
    }
  }
  return Status::ok();
}

// Per benchmark and side: the per-repetition values (in ns, each run at its
// own TSC rate) of every run in which the benchmark succeeded.
struct Pool {
  std::vector<double> ns;
  std::vector<double> run_medians;     // one per run in which it succeeded
  std::vector<std::string> run_pairs;  // with `pairs`: the pair of each of those runs
  std::size_t runs = 0;                // runs in which it succeeded
  std::size_t present = 0;             // runs that have it at all
  std::string error;                   // the first failure's reason
};
struct Pools {
  std::vector<std::string> order;  // benchmarks in the order first met
  std::map<std::string, std::pair<Pool, Pool>> sides;
  std::map<std::string, std::string> whats;
};

Pools pool_runs(const std::vector<const RunResult*>& a, const std::vector<const RunResult*>& b, const PairIds* pairs) {
  Pools out;
  for (int s = 0; s < 2; ++s) {
    const auto& side_runs = s == 0 ? a : b;
    for (std::size_t ri = 0; ri < side_runs.size(); ++ri) {
      const RunResult* r = side_runs[ri];
      for (const auto& x : r->benchmarks) {
        if (!out.sides.count(x.name)) out.order.push_back(x.name);
        Pool& p = s == 0 ? out.sides[x.name].first : out.sides[x.name].second;
        ++p.present;
        // A benchmark without figures (error, skipped, or no overhead) is
        // failed in that run, never a number.
        if (x.status != "ok" || !x.overhead_cycles) {
          if (p.error.empty()) p.error = x.error.empty() ? "status " + x.status + ", no figure" : x.error;
          continue;
        }
        std::string what;
        std::vector<double> run_ns;
        for (double v : series(x, &what)) run_ns.push_back(v * 1e9 / r->context.tsc_hz);
        p.ns.insert(p.ns.end(), run_ns.begin(), run_ns.end());
        p.run_medians.push_back(median_of(run_ns));
        if (pairs) p.run_pairs.push_back((s == 0 ? pairs->a : pairs->b)[ri]);
        out.whats[x.name] = what;
        ++p.runs;
      }
    }
  }
  return out;
}

// The test that fits what both sides have (paired t on pairs, Welch on run
// medians, Mann-Whitney U on repetitions), with its medians, p and MDE;
// `few` when the U test had fewer than 9 values a side.
void test_row(const Pool& pa, const Pool& pb, const std::vector<double>& pair_a, const std::vector<double>& pair_b,
              bool positive, double alpha, CompareRow* row, bool* few) {
  // The MDE in ns turned relative to A's median.
  auto relative = [&](double mde_ns) {
    return row->a_median != 0 ? mde_ns / std::fabs(row->a_median) : std::numeric_limits<double>::infinity();
  };
  if (pair_a.size() >= 2 && positive) {
    row->method = "pairs";
    row->a_median = median_of(pair_a);
    row->b_median = median_of(pair_b);
    const PairedT pt = paired_log_t(pair_a, pair_b);
    row->p_value = pt.p_value;
    row->ratio = std::exp(pt.mean_log);
    row->mde80 = std::expm1(mde_paired(pt.sd_log, pt.n, alpha, 0.8));
    row->mde90 = std::expm1(mde_paired(pt.sd_log, pt.n, alpha, 0.9));
  } else if (pa.run_medians.size() >= 2 && pb.run_medians.size() >= 2) {
    row->method = "runs";
    row->a_median = median_of(pa.run_medians);
    row->b_median = median_of(pb.run_medians);
    row->p_value = welch_t(pa.run_medians, pb.run_medians).p_value;
    const double sa = sample_sd(pa.run_medians), sb = sample_sd(pb.run_medians);
    row->mde80 = relative(mde_welch(sa, pa.run_medians.size(), sb, pb.run_medians.size(), alpha, 0.8));
    row->mde90 = relative(mde_welch(sa, pa.run_medians.size(), sb, pb.run_medians.size(), alpha, 0.9));
  } else {
    row->method = "repetitions";
    row->a_median = median_of(pa.ns);
    row->b_median = median_of(pb.ns);
    row->p_value = mann_whitney_u(pa.ns, pb.ns).p_value;
    *few |= pa.ns.size() < 9 || pb.ns.size() < 9;
    // The two sides' robust spreads, pooled.
    const double ra = robust_sd(pa.ns), rb = robust_sd(pb.ns);
    const double sd = std::sqrt((ra * ra + rb * rb) / 2);
    row->mde80 = relative(mde_mann_whitney(sd, pa.ns.size(), pb.ns.size(), alpha, 0.8));
    row->mde90 = relative(mde_mann_whitney(sd, pa.ns.size(), pb.ns.size(), alpha, 0.9));
  }
  if (row->a_median > 0 && !row->ratio) row->ratio = row->b_median / row->a_median;
}

// The verdict of a tested row: p against alpha, the change against the
// threshold, the MDE against the threshold when p is not significant.
void decide(double threshold, double alpha, CompareRow* row) {
  bool significant = row->p_value < alpha;
  double change = row->ratio ? *row->ratio - 1 : (row->b_median - row->a_median);
  if (significant && std::fabs(change) >= threshold) {
    row->verdict = change > 0 ? "regression" : "improvement";
  } else if (!significant && !(*row->mde80 <= threshold)) {
    row->verdict = "inconclusive";
  } else {
    row->verdict = "same";
    // A significant p with a small change: the threshold decided.
    row->threshold_decided = significant;
  }
}

// One benchmark's row: missing or failed on a side, or tested and decided.
CompareRow compare_benchmark(const std::string& name, const Pool& pa, const Pool& pb, const std::string& what,
                             std::size_t a_runs, std::size_t b_runs, std::size_t benchmarks, double threshold,
                             double alpha, const PairIds* pairs, CompareResult* out, bool* few) {
  CompareRow row;
  row.benchmark = name;
  row.a_runs = pa.runs;
  row.b_runs = pb.runs;
  if (pa.ns.empty() || pb.ns.empty()) {
    // Absent from a side, or failed in every run of it.
    const Pool& bad = pa.ns.empty() ? pa : pb;
    const char* side = pa.ns.empty() ? "A" : "B";
    row.verdict = bad.present ? "failed" : "missing";
    row.side = side;
    row.detail =
        bad.present ? fmt::format("failed in every run of {}: {}", side, bad.error) : fmt::format("not in {}", side);
    return row;
  }
  // A benchmark that failed in some runs of a side is a warning; one that
  // is simply not in every run (a run of other workloads) is not.
  for (auto [side, pool, n] : {std::tuple{"A", &pa, a_runs}, std::tuple{"B", &pb, b_runs}}) {
    if (pool->runs < pool->present)
      out->warnings.push_back(fmt::format("{}: failed in {} of the {} runs of {} that have it ({})", name,
                                          pool->present - pool->runs, pool->present, side, pool->error));
    else if (pool->present < n)
      row.detail += fmt::format("{}in {} of the {} runs of {}", row.detail.empty() ? "" : "; ", pool->present, n, side);
  }
  row.what = what;
  row.a_n = pa.ns.size();
  row.b_n = pb.ns.size();
  // The run medians of the pairs in which both runs have the benchmark.
  std::vector<double> pair_a, pair_b;
  for (std::size_t i = 0; pairs && i < pa.run_pairs.size(); ++i) {
    auto it = std::find(pb.run_pairs.begin(), pb.run_pairs.end(), pa.run_pairs[i]);
    if (it == pb.run_pairs.end()) continue;
    pair_a.push_back(pa.run_medians[i]);
    pair_b.push_back(pb.run_medians[static_cast<std::size_t>(it - pb.run_pairs.begin())]);
  }
  const bool positive = std::all_of(pair_a.begin(), pair_a.end(), [](double v) { return v > 0; }) &&
                        std::all_of(pair_b.begin(), pair_b.end(), [](double v) { return v > 0; });
  if (pairs && pair_a.size() >= 2 && !positive) {
    out->warnings.push_back(
        fmt::format("{}: a run median is not positive, so no log ratio: tested as unpaired runs", name));
  }
  test_row(pa, pb, pair_a, pair_b, positive, alpha, &row, few);
  if (pairs && pairs->sequential && row.method == "pairs") {
    decide_sequentially(pair_a, pair_b, alpha / static_cast<double>(benchmarks), threshold, &row);
    return row;
  }
  decide(threshold, alpha, &row);
  return row;
}

// What the whole comparison rests on: few repetitions, partial runs, few runs a side.
void warn_about_sides(const std::vector<const RunResult*>& a, const std::vector<const RunResult*>& b, bool few,
                      CompareResult* out) {
  if (few) {
    out->warnings.push_back("fewer than 9 repetitions: the U test has little power; use --repetitions 9 or more");
  }
  for (const auto* side : {&a, &b}) {
    for (const RunResult* r : *side) {
      if (!r->context.complete)
        out->warnings.push_back(
            fmt::format("{}: run {} is partial (it did not finish): its {} benchmarks are those that "
                        "finished",
                        side == &a ? "A" : "B", r->context.run_id, r->benchmarks.size()));
    }
  }
  if (a.size() == 1 || b.size() == 1) {
    out->warnings.push_back(
        "one run on a side: its repetitions share that run's minutes of machine state, so p understates the run-to-run "
        "noise; give each side a directory of several runs (3 or more), interleaved in time");
  } else if (a.size() == 2 || b.size() == 2) {
    out->warnings.push_back(
        "two runs on a side: the test on run medians has one degree of freedom or so and finds only large changes; "
        "3 to 5 runs a side, interleaved in time, are what it needs");
  }
}

}  // namespace

Status compare_runs(const std::vector<const RunResult*>& a, const std::vector<const RunResult*>& b, double threshold,
                    double alpha, CompareResult* out, const PairIds* pairs) {
  out->threshold = threshold;
  out->alpha = alpha;
  out->rows.clear();
  out->warnings.clear();
  out->b_benchmarks = 0;
  for (const RunResult* r : b) out->b_benchmarks += r->benchmarks.size();
  if (a.empty() || b.empty()) return Status::error("compare needs at least one run on each side");
  if (pairs && (pairs->a.size() != a.size() || pairs->b.size() != b.size()))
    return Status::error("compare: the pair names do not match the runs one to one");
  TB_TRY(check_contexts(a, b, out));
  Pools pools = pool_runs(a, b, pairs);
  bool few = false;
  for (const auto& name : pools.order) {
    const auto& [pa, pb] = pools.sides[name];
    out->rows.push_back(compare_benchmark(name, pa, pb, pools.whats[name], a.size(), b.size(), pools.order.size(),
                                          threshold, alpha, pairs, out, &few));
  }
  warn_about_sides(a, b, few, out);
  return Status::ok();
}

std::optional<double> run_figure_ns(const BenchmarkResult& b, double tsc_hz, std::string* what) {
  if (b.status != "ok" || !b.overhead_cycles || !(tsc_hz > 0)) return std::nullopt;
  std::vector<double> ns;
  for (double v : series(b, what)) ns.push_back(v * 1e9 / tsc_hz);
  if (ns.empty()) return std::nullopt;
  return median_of(ns);
}

Status compare_runs(const RunResult& a, const RunResult& b, double threshold, double alpha, CompareResult* out) {
  return compare_runs(std::vector<const RunResult*>{&a}, std::vector<const RunResult*>{&b}, threshold, alpha, out);
}

Status check_comparable(const RunResult& r, const std::string& file) {
  auto bad = [&](const std::string& what) { return Status::error(fmt::format("{}: {}", file, what)); };
  double hz = r.context.tsc_hz;
  if (!std::isfinite(hz) || hz <= 0) return bad(fmt::format("context.tsc.hz is {}: not a positive finite rate", hz));
  std::map<std::string, int> seen;
  for (std::size_t i = 0; i < r.benchmarks.size(); ++i) {
    const BenchmarkResult& b = r.benchmarks[i];
    if (++seen[b.name] > 1) return bad(fmt::format("benchmark {} appears twice", b.name));
    if (b.status != "ok") continue;
    for (const auto* v : {&b.baseline, &b.traced}) {
      for (double x : v->repetition_medians) {
        double ns = x * 1e9 / hz;
        if (!std::isfinite(x) || !std::isfinite(ns) || std::fabs(ns) > 1e12)
          return bad(fmt::format("benchmarks[{}] ({}): {}.repetition_medians_cycles holds {}: not a finite figure", i,
                                 b.name, v == &b.baseline ? "baseline" : "traced", x));
      }
    }
  }
  return Status::ok();
}

bool fails_check(const CompareResult& c, std::string* why, bool inconclusive_fails) {
  std::vector<std::string> reasons;
  for (const auto& r : c.rows) {
    if (r.verdict == "regression") reasons.push_back(r.benchmark + ": regression");
    if (inconclusive_fails && r.verdict == "inconclusive")
      reasons.push_back(fmt::format("{}: inconclusive (MDE at 80% power {:.1f}%)", r.benchmark, 100 * *r.mde80));
    if (inconclusive_fails && r.verdict == "undecided")
      reasons.push_back(
          fmt::format("{}: undecided by the sequential test after {} pairs", r.benchmark, r.sequential->n));
    if ((r.verdict == "missing" || r.verdict == "failed") && r.side == "B")
      reasons.push_back(r.benchmark + ": " + r.detail);
  }
  if (c.b_benchmarks == 0) reasons.push_back("B has no benchmarks");
  *why = fmt::format("{}", fmt::join(reasons, "\n"));
  return !reasons.empty();
}

}  // namespace tracebench
