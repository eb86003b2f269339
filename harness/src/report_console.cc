// The console reporter: the summary table printed at the end of a run, its
// notes split into warnings (always) and information (with -v: notes.h),
// and a legend.
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tracebench/notes.h"
#include "tracebench/options.h"
#include "tracebench/report.h"
#include "tracebench/reporter.h"
#include "tracebench/stats.h"
#include "tracebench/tracer.h"

namespace tracebench {

namespace {

// A tracer that drops or discards takes a cheaper path for those events, so
// the figure is no longer the cost of recording one.
std::string lost_events_warning(const BenchmarkResult& b) {
  if (!b.events.fired || b.events.lost * 20 <= b.events.fired) return "";
  const std::unique_ptr<Tracer> t = make_tracer(b.tracer);
  const std::string hint = t ? buffer_options_hint(b.tracer, t->option_schema()) : "";
  return fmt::format(
      "{:.0f}% of the events were lost (dropped or discarded): the overhead mixes recording and "
      "dropping; give the tracer bigger buffers ({})",
      100.0 * static_cast<double>(b.events.lost) / static_cast<double>(b.events.fired),
      hint.empty() ? "its README" : hint);
}

// A variant's column as the overhead is taken: the median of the
// repetitions the figure keeps (a level shift's earlier ones left out), in
// ns; the median of all its samples where a result has no repetition medians.
double variant_ns(const VariantResult& v, double tsc_hz) {
  if (v.repetition_medians.empty() || !(tsc_hz > 0)) return v.ns.p50;
  return median_of(v.repetition_medians) * 1e9 / tsc_hz;
}

}  // namespace

std::string summary_table(const RunResult& run, bool verbose) {
  // The interval's column says each interval's own confidence (few
  // repetitions cover less than 95%).
  std::string out = fmt::format("{:<52} {:>12} {:>12} {:>12} {:>28} {:>10} {:>8}\n", "benchmark", "base ns",
                                "traced ns", "overhead ns", "CI (ns), its confidence", "events", "verify");
  std::size_t hidden = 0, warned = 0;
  for (const auto& b : run.benchmarks) {
    // Only a benchmark that kept valid samples in both variants has figures;
    // anything else prints its reason, never a number.
    bool measured = b.status == "ok" && b.overhead_ns && b.baseline.ns.n > 0 && b.traced.ns.n > 0;
    if (!measured) {
      out += fmt::format("{:<52} {}: {}\n", b.name, b.status == "ok" ? "error" : b.status,
                         b.error.empty() ? "no valid sample" : b.error);
      continue;
    }
    std::string ci = fmt::format("[{:.1f}, {:.1f}] {}", b.overhead_ns->low, b.overhead_ns->high,
                                 confidence_label(b.overhead_ns->confidence));
    const double tsc_hz = run.context.tsc_hz;
    out += fmt::format("{:<52} {:>12.1f} {:>12.1f} {:>12.1f} {:>28} {:>10} {:>8}\n", b.name,
                       variant_ns(b.baseline, tsc_hz), variant_ns(b.traced, tsc_hz), b.overhead_ns->median, ci,
                       b.events.fired, b.events.verification == "not_applicable" ? "-" : b.events.verification);
    std::vector<std::string> warnings;
    for (const auto& w : b.warnings) {
      if (!note_is_information(w)) {
        warnings.push_back(w);
      } else if (verbose) {
        out += fmt::format("  i {}\n", w);
      } else {
        ++hidden;
      }
    }
    if (std::string lost = lost_events_warning(b); !lost.empty()) warnings.push_back(lost);
    for (const auto& w : warnings) out += fmt::format("  ! {}\n", w);
    warned += !warnings.empty();
  }
  out +=
      "\nns per event, medians over the repetitions the figure keeps; overhead = traced - base (the median of the "
      "repetitions' differences), with its interval and the confidence that interval has; verify passed = "
      "every event fired was recorded (and every payload byte checked), - = the tracer records nothing to check; "
      "! = a warning to act on";
  out += verbose
             ? ", i = information.\n"
             : fmt::format("; {} information note(s) not shown (-v shows them; result.json keeps them all).\n", hidden);
  if (warned) out += fmt::format("{} benchmark(s) carry warnings (!).\n", warned);
  if (run.context.concurrent)
    out +=
        "CONCURRENT: measured while another tracebench command ran (--allow-concurrent): these figures may hold "
        "its probes and load\n";
  return out;
}

namespace {
class ConsoleRunReporter final : public Reporter<RunReport> {
 public:
  Status write(const RunReport& in, Report* out) const override {
    out->text = summary_table(in.run, in.verbose);
    return Status::ok();
  }
};
}  // namespace

const Reporter<RunReport>& console_run_reporter() {
  static const ConsoleRunReporter r;
  return r;
}

}  // namespace tracebench
