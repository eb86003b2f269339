// What the cross-check found per case: every round's figures from both
// sides, and the verdict read from them (round_stats.h).  A round counts
// when both sides gave a figure and both verified what they recorded (the
// suite's judge passed; the tool accounted for every event the loop fired);
// a case with a round that does not count is "not measured", with the first
// reason: a figure is compared only when every round of it was checked.
// Of the rounds that count, those the machine's speed changed during in
// every attempt (machine_state.h) are left out of the interval, as the
// suite leaves out disturbed samples; fewer than kMinRounds steady rounds
// and the case cannot tell.
#pragma once

#include <string>
#include <vector>

#include "cases.h"
#include "reference_round.h"
#include "round_stats.h"
#include "suite_side.h"

namespace tracebench::crosscheck {

struct RoundRecord {
  int round = 0;
  int attempt = 1;
  bool suite_first = true;
  // The machine's speed before, between and after the two sides
  // (machine_state.h), and whether it held.
  std::vector<double> probes_ns;
  bool steady = true;
  SuiteRound suite;
  ReferenceRound reference;
  std::string reference_error;  // the reference side failed: why
  double ratio = NAN;           // round_ratio() when the round counts, else NaN
};

struct CaseOutcome {
  const Case* c = nullptr;
  SuiteSide suite;           // as run (the user's -o included)
  std::string tool_version;  // the independent tool's version line
  std::string skipped;       // not run here: why ("" when it ran)
  std::vector<RoundRecord> rounds;
  std::vector<RoundRecord> redone;  // attempts at a round dropped: the machine's speed changed during them
  // Filled by decide_case():
  std::size_t counted = 0;                      // rounds that count
  std::size_t unsteady = 0;                     // of them, left out: the machine's speed changed during them
  double suite_ns = NAN, independent_ns = NAN;  // medians over the counted rounds
  RatioInterval ratio;
  Verdict verdict = Verdict::kNotMeasured;
  std::string reason;
};

// Why a round does not count ("" when it does).
std::string round_problem(const RoundRecord& r);

// The counted rounds' medians, the ratio's interval and the verdict.
void decide_case(CaseOutcome* o);

// When some cases could not tell for want of steady rounds (the machine's
// speed changed during most attempts at the others): the command that
// gives just those cases more rounds (of a run of `rounds`) and a longer
// redo budget; "" otherwise.
std::string unsteady_hint(const std::vector<CaseOutcome>& cases, int rounds);

}  // namespace tracebench::crosscheck
