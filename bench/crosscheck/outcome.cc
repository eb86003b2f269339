#include "outcome.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tracebench::crosscheck {

std::string round_problem(const RoundRecord& r) {
  if (r.suite.unsteady) return "suite: measured on no one level (unsteady), no figure";
  if (!r.suite.error.empty()) return "suite: " + r.suite.error;
  if (!r.reference_error.empty()) return "reference: " + r.reference_error;
  if (!std::isfinite(r.suite.figure_ns)) return "suite: no figure";
  if (!r.suite.verified) return "suite: verification " + r.suite.verification;
  if (!r.reference.verified)
    return "reference: not every event accounted for (" + describe_counts(r.reference.counts) + ")";
  if (!std::isfinite(r.reference.figure_ns) || r.reference.figure_ns <= 0)
    return fmt::format("reference: no cost measured ({:.1f} ns)", r.reference.figure_ns);
  return "";
}

void decide_case(CaseOutcome* o) {
  std::vector<double> suite, reference, ratios;
  std::string first_problem;
  for (RoundRecord& r : o->rounds) {
    if (r.suite.unsteady) {  // the speed changed during the suite's run: left out, like a round the probes saw
      r.ratio = NAN;
      r.steady = false;
      ++o->counted;
      ++o->unsteady;
      continue;
    }
    const std::string problem = round_problem(r);
    r.ratio = problem.empty() ? round_ratio(r.suite.figure_ns, r.reference.figure_ns) : NAN;
    if (!problem.empty()) {
      if (first_problem.empty()) first_problem = fmt::format("round {}: {}", r.round + 1, problem);
      continue;
    }
    ++o->counted;
    if (!r.steady) {
      ++o->unsteady;
      continue;
    }
    suite.push_back(r.suite.figure_ns);
    reference.push_back(r.reference.figure_ns);
    ratios.push_back(r.ratio);
  }
  o->suite_ns = median_of(suite);
  o->independent_ns = median_of(reference);
  o->ratio = ratio_interval(ratios);
  if (!o->skipped.empty()) {
    o->verdict = Verdict::kNotMeasured;
    o->reason = "not available here: " + o->skipped;
  } else if (!first_problem.empty()) {
    o->verdict = Verdict::kNotMeasured;
    o->reason = fmt::format("{} of {} rounds count; {}", o->counted, o->rounds.size(), first_problem);
  } else {
    o->verdict = decide(o->ratio);
    o->reason = verdict_reason(o->ratio, o->verdict);
    if (o->unsteady > 0)
      o->reason += fmt::format(" ({} of {} rounds left out: the machine's speed changed during every attempt at them)",
                               o->unsteady, o->rounds.size());
  }
}

std::string unsteady_hint(const std::vector<CaseOutcome>& cases, int rounds) {
  std::vector<std::string> short_of;
  for (const auto& o : cases)
    if (o.skipped.empty() && o.verdict == Verdict::kCannotTell && o.ratio.n < kMinRounds && o.unsteady > 0)
      short_of.push_back("--case " + o.c->name);
  if (short_of.empty()) return "";
  const int more = std::min(50, std::max(9, 2 * rounds - 1));  // --rounds allows up to 50
  return fmt::format(
      "hint: {} case(s) had fewer than {} steady rounds: the measured CPU's speed changed during most attempts at "
      "the others. More rounds and a longer redo budget give them more chances (minutes on such a host): "
      "tracebench crosscheck {} --rounds {} --redo-budget 600",
      short_of.size(), kMinRounds, fmt::join(short_of, " "), more);
}

}  // namespace tracebench::crosscheck
