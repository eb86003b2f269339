// The Bencher reporter: a run as Bencher Metric Format JSON (`tracebench
// export bencher`), for history-tracking services that read it.  Per
// benchmark the measures it has figures for, each with its 95% interval
// where the run has one that covers 95%; a benchmark that failed, or has no figure, is left
// out (never written as 0).
#include "tracebench/report.h"
#include "tracebench/reporter.h"

namespace tracebench {

nlohmann::json bencher_json(const RunResult& run) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& b : run.benchmarks) {
    if (b.status != "ok") continue;
    nlohmann::json m = nlohmann::json::object();
    // Bencher's format has no field for an interval's confidence: the
    // bounds go out only where they are the 95% interval they are taken
    // for; an interval that covers less (few repetitions: 50% with 2) is
    // left out and the value stands alone (intervals_below_95() names them).
    auto with_ci = [](const MedianCI& c) {
      if (c.confidence < 0.95) return nlohmann::json{{"value", c.median}};
      return nlohmann::json{{"value", c.median}, {"lower_value", c.low}, {"upper_value", c.high}};
    };
    if (b.overhead_ns) m["overhead-ns"] = with_ci(*b.overhead_ns);
    if (b.overhead_cycles) m["overhead-cycles"] = with_ci(*b.overhead_cycles);
    // The per-event cost of each variant: the median with its p10..p90.
    auto spread = [](const Summary& s) {
      return nlohmann::json{{"value", s.p50}, {"lower_value", s.p10}, {"upper_value", s.p90}};
    };
    if (b.traced.ns.n > 0) m["traced-ns"] = spread(b.traced.ns);
    if (b.baseline.ns.n > 0) m["baseline-ns"] = spread(b.baseline.ns);
    if (!m.empty()) out[b.name] = m;
  }
  return out;
}

std::vector<std::string> intervals_below_95(const RunResult& run) {
  std::vector<std::string> out;
  for (const auto& b : run.benchmarks)
    if (b.status == "ok" && b.overhead_cycles && b.overhead_cycles->confidence < 0.95)
      out.push_back(b.name + " (" + confidence_label(b.overhead_cycles->confidence) + ")");
  return out;
}

namespace {
// Bencher Metric Format; the intervals it gets without bounds are named in the notes.
class BencherRunReporter final : public JsonReporter<RunReport> {
 public:
  Status document(const RunReport& in, nlohmann::json* out) const override {
    *out = bencher_json(in.run);
    return Status::ok();
  }
  Status write(const RunReport& in, Report* out) const override {
    TB_TRY(JsonReporter<RunReport>::write(in, out));
    if (const auto few = intervals_below_95(in.run); !few.empty()) {
      out->notes = "note: " + std::to_string(few.size()) +
                   " overhead interval(s) cover less than 95% (too few repetitions) and are left out, the value alone "
                   "written:";
      for (const auto& f : few) out->notes += " " + f;
    }
    return Status::ok();
  }
};
}  // namespace

const Reporter<RunReport>& bencher_run_reporter() {
  static const BencherRunReporter r;
  return r;
}

}  // namespace tracebench
