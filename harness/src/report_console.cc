// The console reporter: the summary table printed at the end of a run.
#include <string>

#include <fmt/format.h>

#include "tracebench/report.h"

namespace tracebench {

std::string summary_table(const RunResult& run) {
  // The interval's column says each interval's own confidence (few
  // repetitions cover less than 95%).
  std::string out = fmt::format("{:<52} {:>12} {:>12} {:>12} {:>28} {:>10} {:>8}\n", "benchmark", "base ns", "traced ns",
                                "overhead ns", "CI (ns), its confidence", "events", "verify");
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
    out += fmt::format("{:<52} {:>12.1f} {:>12.1f} {:>12.1f} {:>28} {:>10} {:>8}\n", b.name, b.baseline.ns.p50,
                       b.traced.ns.p50, b.overhead_ns->median, ci, b.events.fired,
                       b.events.verification == "not_applicable" ? "-" : b.events.verification);
    for (const auto& w : b.warnings) out += fmt::format("  ^ {}\n", w);
    // A tracer that drops or discards takes a cheaper path for those events,
    // so the figure is no longer the cost of recording one.
    if (b.events.fired && b.events.lost * 20 > b.events.fired)
      out += fmt::format("  ^ {:.0f}% of the events were lost (dropped or discarded): the overhead mixes recording and "
                         "dropping; give the tracer bigger buffers (its README)\n",
                         100.0 * static_cast<double>(b.events.lost) / static_cast<double>(b.events.fired));
  }
  if (run.context.concurrent)
    out += "CONCURRENT: measured while another tracebench command ran (--allow-concurrent): these figures may hold "
           "its probes and load\n";
  return out;
}

}  // namespace tracebench
