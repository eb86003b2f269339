#include "tracebench/compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

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

namespace {

// Per-repetition values a comparison is made on.
std::vector<double> series(const BenchmarkResult& b, std::string* what) {
  const auto& base = b.baseline.repetition_medians;
  const auto& tr = b.traced.repetition_medians;
  std::vector<double> v;
  if (b.tracer == "none") {
    *what = "baseline";
    v = base;
  } else {
    *what = "overhead";
    for (std::size_t i = 0; i < std::min(base.size(), tr.size()); ++i) v.push_back(tr[i] - base[i]);
  }
  return v;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

Status compare_runs(const RunResult& a, const RunResult& b, double threshold, double alpha, CompareResult* out) {
  out->rows.clear();
  out->warnings.clear();
  if (a.context.emulated != b.context.emulated) {
    return Status::error(fmt::format(
        "refusing to compare an emulated run ({}) with a non-emulated one ({}): TCG timings say nothing about hardware",
        a.context.emulated ? a.context.run_id : b.context.run_id,
        a.context.emulated ? b.context.run_id : a.context.run_id));
  }
  if (a.context.cpu_model != b.context.cpu_model) {
    out->warnings.push_back(fmt::format("different CPUs: '{}' vs '{}'", a.context.cpu_model, b.context.cpu_model));
  }
  if (a.context.execution != b.context.execution) {
    out->warnings.push_back(fmt::format("different execution: {} vs {}", a.context.execution, b.context.execution));
  }
  std::map<std::string, const BenchmarkResult*> in_b;
  for (const auto& x : b.benchmarks) in_b[x.name] = &x;
  std::map<std::string, bool> seen;
  bool few = false;
  for (const auto& x : a.benchmarks) {
    CompareRow row;
    row.benchmark = x.name;
    seen[x.name] = true;
    auto it = in_b.find(x.name);
    if (it == in_b.end() || x.status != "ok" || it->second->status != "ok") {
      row.verdict = "missing";
      out->rows.push_back(row);
      continue;
    }
    std::string what;
    std::vector<double> va = series(x, &what), vb = series(*it->second, &what);
    row.what = what;
    row.a_n = va.size();
    row.b_n = vb.size();
    // Cycles are what the benchmarks measure; ns depend on each run's TSC rate.
    row.a_median = median_of(va) * 1e9 / a.context.tsc_hz;
    row.b_median = median_of(vb) * 1e9 / b.context.tsc_hz;
    if (row.a_median > 0) row.ratio = row.b_median / row.a_median;
    row.p_value = mann_whitney_u(va, vb).p_value;
    few |= va.size() < 9 || vb.size() < 9;
    bool significant = row.p_value < alpha;
    double change = row.ratio ? *row.ratio - 1 : (row.b_median - row.a_median);
    if (!significant || std::fabs(change) < threshold) {
      row.verdict = "same";
    } else {
      row.verdict = change > 0 ? "regression" : "improvement";
    }
    out->rows.push_back(row);
  }
  for (const auto& x : b.benchmarks) {
    if (!seen.count(x.name)) {
      CompareRow row;
      row.benchmark = x.name;
      row.verdict = "missing";
      out->rows.push_back(row);
    }
  }
  if (few) {
    out->warnings.push_back("fewer than 9 repetitions: the U test has little power; use --repetitions 9 or more");
  }
  return Status::ok();
}

std::string compare_table(const CompareResult& c) {
  std::string out = fmt::format("{:<52} {:>9} {:>12} {:>12} {:>8} {:>8}  {}\n", "benchmark", "what", "A ns", "B ns",
                                "B/A", "p", "verdict");
  for (const auto& r : c.rows) {
    if (r.verdict == "missing") {
      out += fmt::format("{:<52} {:>9} {:>12} {:>12} {:>8} {:>8}  {}\n", r.benchmark, "-", "-", "-", "-", "-",
                         "missing in one run, or failed");
      continue;
    }
    out += fmt::format("{:<52} {:>9} {:>12.2f} {:>12.2f} {:>8} {:>8.3f}  {}\n", r.benchmark, r.what, r.a_median,
                       r.b_median, r.ratio ? fmt::format("{:.3f}", *r.ratio) : "-", r.p_value, r.verdict);
  }
  for (const auto& w : c.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace tracebench
