#include <cmath>
#include <map>

#include <fmt/format.h>

#include "machine_state.h"
#include "report.h"
#include "tracebench/stats.h"

namespace tracebench::crosscheck {
namespace {

std::string ns(double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : "-"; }

std::string interval(const RatioInterval& r) {
  if (r.n == 0) return "-";
  return fmt::format("[{:.3f}, {:.3f}] {}", r.low, r.high, confidence_label(r.confidence));
}

// How many rounds of the case each side verified, in words.
std::string checks(const CaseOutcome& o) {
  std::size_t suite_ok = 0, ref_ok = 0;
  std::uint64_t fired = 0, recorded = 0, lost = 0;
  bool counted = false;
  for (const auto& r : o.rounds) {
    suite_ok += r.suite.verified;
    ref_ok += r.reference.verified;
    if (r.reference.counts.counted) {
      counted = true;
      fired += r.reference.counts.fired;
      recorded += r.reference.counts.recorded;
      lost += r.reference.counts.lost;
    }
  }
  const std::size_t n = o.rounds.size();
  std::string s = o.suite.figure == SuiteFigure::kUntraced
                      ? "suite: untraced, nothing to verify"
                      : fmt::format("suite: verification passed in {} of {} rounds", suite_ok, n);
  if (counted)
    s += fmt::format("; {}: recorded {} + lost {} of {} fired over the rounds, all accounted for in {} of {}",
                     o.c->tool, recorded, lost, fired, ref_ok, n);
  else
    s += "; the reference traces nothing: no events to count";
  if (!o.redone.empty() || o.unsteady > 0)
    s += fmt::format("; {} attempt(s) redone as the machine's speed changed during them{}", o.redone.size(),
                     o.unsteady ? fmt::format(", {} round(s) left out (unsteady in every attempt)", o.unsteady) : "");
  return s;
}

}  // namespace

void print_table(const Report& r, std::ostream& out) {
  out << fmt::format("{:<17} {:<25} {:>14} {:>9} {:>7}  {:<24} {}\n", "case", "independent tool", "independent ns",
                     "suite ns", "ratio", "interval", "verdict");
  for (const auto& o : r.cases) {
    if (!o.skipped.empty()) continue;
    out << fmt::format("{:<17} {:<25} {:>14} {:>9} {:>7}  {:<24} {}\n", o.c->name, o.c->tool, ns(o.independent_ns),
                       ns(o.suite_ns), o.ratio.n ? fmt::format("{:.3f}", o.ratio.median) : "-", interval(o.ratio),
                       verdict_word(o.verdict));
  }
  out << "\n";
  for (const auto& o : r.cases) {
    if (!o.skipped.empty()) {
      out << fmt::format("{}: skipped: {}\n", o.c->name, o.skipped);
      continue;
    }
    out << fmt::format("{}: {}\n", o.c->name, o.reason);
    out << fmt::format("  suite: tracebench run {}; independent: {}\n", run_arguments(o.suite), o.c->reference);
    out << fmt::format("  checks: {}\n", checks(o));
    if (!o.c->differs.empty()) out << fmt::format("  differs: {}\n", o.c->differs);
  }
  if (r.concurrent)
    out << "\nwarning: some suite runs measured beside another tracebench command (--allow-concurrent): its load "
           "may be in their figures\n";
  std::map<std::string, int> n;
  for (const auto& o : r.cases) ++n[o.skipped.empty() ? verdict_word(o.verdict) : "skipped"];
  out << fmt::format(
      "\nratio = suite / independent per round ({} rounds, the two sides alternating which goes first; rounds the "
      "machine's speed changed during are redone, or left out); interval: order-statistic interval of the median "
      "ratio; agree when it lies within ±{:.0f}%, disagree when it lies outside, else cannot tell\n",
      r.rounds, kTolerance * 100);
  if (const std::string hint = unsteady_hint(r.cases, r.rounds); !hint.empty()) out << hint << "\n";
  out << fmt::format("crosscheck: {} agree, {} disagree, {} cannot tell, {} not measured, {} skipped ({:.0f} s)\n",
                     n["agree"], n["disagree"], n["cannot tell"], n["not measured"], n["skipped"], r.seconds);
}

}  // namespace tracebench::crosscheck
