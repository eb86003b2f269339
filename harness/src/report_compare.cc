// The compare reporter: what `tracebench compare` prints, a table with the
// runs of each side named, or JSON.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tracebench/report.h"
#include "tracebench/reporter.h"

namespace tracebench {

using nlohmann::json;

namespace {
// A minimum detectable effect in percent, "inf" when the spread could not be had.
std::string mde_text(const std::optional<double>& m) {
  if (!m) return "-";
  return std::isfinite(*m) ? fmt::format("{:.1f}%", 100 * *m) : "inf";
}
json mde_json(const std::optional<double>& m) { return m && std::isfinite(*m) ? json(*m) : json(nullptr); }
// A change on the log scale as a signed percent, +-inf while unbounded.
std::string percent_of_log(double v) {
  if (!std::isfinite(v)) return v > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", 100 * std::expm1(v));
}
json finite_json(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json sequential_json(const CompareRow& r) {
  if (!r.sequential) return nullptr;
  const SequentialState& s = *r.sequential;
  return {{"pairs", s.n},
          {"bayes_factor", s.bayes_factor},
          {"change_low", finite_json(std::expm1(s.low))},
          {"change_high", finite_json(std::expm1(s.high))}};
}
}  // namespace

std::string compare_table(const CompareResult& c) {
  std::string out = fmt::format("{:<52} {:>9} {:>12} {:>12} {:>8} {:>8} {:>5} {:>8}  {}\n", "benchmark", "what", "A ns",
                                "B ns", "B/A", "p", "test", "MDE80", "verdict");
  for (const auto& r : c.rows) {
    if (r.verdict == "missing" || r.verdict == "failed") {
      out += fmt::format("{:<52} {:>9} {:>12} {:>12} {:>8} {:>8} {:>5} {:>8}  {}: {}\n", r.benchmark, "-", "-", "-",
                         "-", "-", "-", "-", r.verdict, r.detail);
      continue;
    }
    std::string verdict = r.verdict;
    if (r.sequential)
      verdict += fmt::format(" (sequential, {} pairs: B/A-1 in [{}, {}])", r.sequential->n,
                             percent_of_log(r.sequential->low), percent_of_log(r.sequential->high));
    if (r.threshold_decided)
      verdict += fmt::format(" (p < {}, but the change is below the {:.0f}% threshold)", c.alpha, 100 * c.threshold);
    out += fmt::format("{:<52} {:>9} {:>12.2f} {:>12.2f} {:>8} {:>8.3f} {:>5} {:>8}  {}\n", r.benchmark, r.what,
                       r.a_median, r.b_median, r.ratio ? fmt::format("{:.3f}", *r.ratio) : "-", r.p_value,
                       r.method == "repetitions" ? "reps" : r.method, mde_text(r.mde80), verdict);
  }
  out += fmt::format(
      "verdict: same = no significant difference (p >= {}) with MDE80 within the {:.0f}% threshold, or a "
      "significant change below the threshold (--threshold decides then); regression/improvement = "
      "significant and at least the threshold; inconclusive = not significant and MDE80 above the "
      "threshold\n",
      c.alpha, 100 * c.threshold);
  if (std::any_of(c.rows.begin(), c.rows.end(), [](const CompareRow& r) { return r.sequential.has_value(); }))
    out +=
        "sequential (--sequential): the always-valid test of `tracebench ab` on the pairs in order, alpha split over "
        "the benchmarks; its interval holds at every pair at once; undecided = more pairs are needed\n";
  out +=
      "test: pairs = paired t on the log ratios of interleaved pairs, runs = Welch's t on each run's median (2+ runs "
      "a side), reps = Mann-Whitney U on the pooled repetitions\n"
      "MDE80: the smallest change the test would find with 80% power (reps: from one run's repetitions, which "
      "understate the run-to-run noise)\n";
  for (const auto& w : c.warnings) out += "warning: " + w + "\n";
  return out;
}

namespace {
std::string side_head(const char* side, const std::vector<const RunResult*>& v) {
  if (v.empty()) return fmt::format("{}: no run\n", side);
  if (v.size() == 1)
    return fmt::format("{}: {} (kernel {})\n", side, v[0]->context.run_id, v[0]->context.kernel_release);
  return fmt::format("{}: {} runs, {} .. {} (kernel {})\n", side, v.size(), v.front()->context.run_id,
                     v.back()->context.run_id, v[0]->context.kernel_release);
}

json run_ids(const std::vector<const RunResult*>& v) {
  json j = json::array();
  for (const auto* r : v) j.push_back(r->context.run_id);
  return j;
}
}  // namespace

std::string compare_text(const CompareResult& c, const std::vector<const RunResult*>& a,
                         const std::vector<const RunResult*>& b) {
  return side_head("A", a) + side_head("B", b) + "\n" + compare_table(c);
}

json compare_json(const CompareResult& c, const std::vector<const RunResult*>& a,
                  const std::vector<const RunResult*>& b) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"benchmark", r.benchmark},
                    {"what", r.what},
                    {"a_median_ns", r.a_median},
                    {"b_median_ns", r.b_median},
                    {"ratio", r.ratio ? json(*r.ratio) : json(nullptr)},
                    {"p_value", r.p_value},
                    {"a_n", r.a_n},
                    {"b_n", r.b_n},
                    {"a_runs", r.a_runs},
                    {"b_runs", r.b_runs},
                    {"method", r.method},
                    {"mde_80", mde_json(r.mde80)},
                    {"mde_90", mde_json(r.mde90)},
                    {"verdict", r.verdict},
                    {"detail", r.detail},
                    {"threshold_decided", r.threshold_decided},
                    {"sequential", sequential_json(r)}});
  }
  return json{{"a", run_ids(a)}, {"b", run_ids(b)}, {"rows", rows}, {"warnings", c.warnings}};
}

namespace {
class TextCompareReporter final : public Reporter<CompareReport> {
 public:
  Status write(const CompareReport& in, Report* out) const override {
    out->text = compare_text(in.result, in.a, in.b);
    return Status::ok();
  }
};
class JsonCompareReporter final : public JsonReporter<CompareReport> {
 public:
  Status document(const CompareReport& in, nlohmann::json* out) const override {
    *out = compare_json(in.result, in.a, in.b);
    return Status::ok();
  }
};
}  // namespace

const Reporter<CompareReport>& text_compare_reporter() {
  static const TextCompareReporter r;
  return r;
}
const Reporter<CompareReport>& json_compare_reporter() {
  static const JsonCompareReporter r;
  return r;
}

}  // namespace tracebench
