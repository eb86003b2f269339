// The cross-check's verdict on simulated rounds: agree when the interval of
// the rounds' ratios lies within ±10%, disagree when it lies outside, cannot
// tell when it crosses a bound; a figure 2x off is never "agree", however
// noisy; a round whose side failed or did not account for its events makes
// the case "not measured".
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "outcome.h"
#include "round_stats.h"

namespace tracebench::crosscheck {
namespace {

// n rounds: the suite's figure `ratio` times the reference's, each side
// with multiplicative log-normal noise of `sd` (a round's figure).
std::vector<double> simulated_ratios(double ratio, double sd, int n, std::mt19937* rng) {
  std::normal_distribution<double> noise(0.0, sd);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const double reference = 200.0 * std::exp(noise(*rng));
    const double suite = ratio * 200.0 * std::exp(noise(*rng));
    out.push_back(round_ratio(suite, reference));
  }
  return out;
}

TEST(CrosscheckVerdict, AgreeingRoundsAgree) {
  const RatioInterval r = ratio_interval({0.98, 1.01, 1.03, 0.99, 1.02});
  EXPECT_EQ(r.n, 5u);
  EXPECT_DOUBLE_EQ(r.median, 1.01);
  EXPECT_DOUBLE_EQ(r.low, 0.98);  // 5 rounds: the whole range
  EXPECT_DOUBLE_EQ(r.high, 1.03);
  EXPECT_NEAR(r.confidence, 1 - std::pow(0.5, 4), 1e-12);  // 93.75%
  EXPECT_EQ(decide(r), Verdict::kAgree);
}

TEST(CrosscheckVerdict, TwiceTheFigureDisagrees) {
  const RatioInterval r = ratio_interval({1.96, 2.05, 2.01, 1.99, 2.08});
  EXPECT_EQ(decide(r), Verdict::kDisagree);
  EXPECT_NE(verdict_reason(r, decide(r)).find("above"), std::string::npos);
  EXPECT_EQ(decide(ratio_interval({0.49, 0.52, 0.5})), Verdict::kDisagree);
}

TEST(CrosscheckVerdict, NoisyRoundsCannotTell) {
  EXPECT_EQ(decide(ratio_interval({0.7, 1.0, 1.4, 0.95, 1.2})), Verdict::kCannotTell);
  // Close to a bound: the interval crosses it.
  EXPECT_EQ(decide(ratio_interval({1.05, 1.08, 1.12, 1.07, 1.09})), Verdict::kCannotTell);
}

TEST(CrosscheckVerdict, TheBoundsThemselves) {
  EXPECT_EQ(decide(ratio_interval({0.90, 1.0, 1.10})), Verdict::kAgree);
  EXPECT_EQ(decide(ratio_interval({1.11, 1.2, 1.3})), Verdict::kDisagree);
  EXPECT_EQ(decide(ratio_interval({0.5, 0.6, 0.899})), Verdict::kDisagree);
}

TEST(CrosscheckVerdict, TooFewRoundsCannotTell) {
  EXPECT_EQ(decide(ratio_interval({1.0, 1.01})), Verdict::kCannotTell);
  EXPECT_EQ(decide(ratio_interval({})), Verdict::kCannotTell);
  // NaN rounds (no reference cost) are left out, and then too few remain.
  EXPECT_EQ(ratio_interval({1.0, NAN, 1.01}).n, 2u);
}

TEST(CrosscheckVerdict, NoReferenceCostGivesNoRatio) {
  EXPECT_TRUE(std::isnan(round_ratio(100, 0)));
  EXPECT_TRUE(std::isnan(round_ratio(100, -3)));
  EXPECT_TRUE(std::isnan(round_ratio(NAN, 100)));
  EXPECT_DOUBLE_EQ(round_ratio(150, 100), 1.5);
}

TEST(CrosscheckVerdict, SixOrMoreRoundsUseTheNinetyFivePercentInterval) {
  // 12 rounds: [x(3), x(10)] covers 96.1%; one wild round does not decide it.
  const RatioInterval r = ratio_interval({0.99, 1.0, 1.01, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.02, 0.97, 1.6});
  EXPECT_GE(r.confidence, 0.95);
  EXPECT_LT(r.high, 1.1);
  EXPECT_EQ(decide(r), Verdict::kAgree);
}

// Simulated: a figure 2x off is never told "agree" at any noise a round of
// this host shows (up to 20% per side, 28% on the ratio) and any number of
// rounds; one that is right agrees at modest noise.
TEST(CrosscheckVerdict, SimulatedTwiceOffNeverAgrees) {
  std::mt19937 rng(20261129);
  for (double sd : {0.01, 0.05, 0.1, 0.2}) {
    for (int n : {3, 5, 8, 20}) {
      for (int trial = 0; trial < 200; ++trial) {
        for (double ratio : {2.0, 0.5}) {
          const RatioInterval r = ratio_interval(simulated_ratios(ratio, sd, n, &rng));
          ASSERT_NE(decide(r), Verdict::kAgree) << "ratio " << ratio << " sd " << sd << " rounds " << n;
        }
      }
    }
  }
}

// Wild noise (50% and 100% per side): "agree" needs every one of 3 rounds
// to land within ±10% by chance, which stays rare.
TEST(CrosscheckVerdict, SimulatedTwiceOffRarelyAgreesWhenWild) {
  std::mt19937 rng(3);
  for (double sd : {0.5, 1.0}) {
    int agree = 0;
    const int trials = 4000;
    for (int trial = 0; trial < trials; ++trial)
      agree += decide(ratio_interval(simulated_ratios(2.0, sd, 3, &rng))) == Verdict::kAgree;
    EXPECT_LT(agree, trials / 200) << "sd " << sd;  // under 0.5%
  }
}

TEST(CrosscheckVerdict, SimulatedRightFigureAgreesAtModestNoise) {
  std::mt19937 rng(7);
  int agree = 0;
  const int trials = 500;
  for (int trial = 0; trial < trials; ++trial)
    agree += decide(ratio_interval(simulated_ratios(1.0, 0.01, 5, &rng))) == Verdict::kAgree;
  EXPECT_GT(agree, trials * 95 / 100);
}

TEST(CrosscheckVerdict, SimulatedTooNoisyCannotTell) {
  std::mt19937 rng(11);
  int cannot = 0;
  const int trials = 500;
  for (int trial = 0; trial < trials; ++trial)
    cannot += decide(ratio_interval(simulated_ratios(1.0, 0.3, 5, &rng))) == Verdict::kCannotTell;
  EXPECT_GT(cannot, trials * 95 / 100);
}

// --- what counts as a round -------------------------------------------------

Case a_case() {
  Case c;
  c.name = "simulated";
  c.tool = "a tool";
  return c;
}

RoundRecord good_round(int i, double suite_ns, double reference_ns) {
  RoundRecord r;
  r.round = i;
  r.suite.figure_ns = suite_ns;
  r.suite.verified = true;
  r.suite.verification = "passed";
  r.reference.figure_ns = reference_ns;
  r.reference.counts = {true, 1000, 1000, 0, 0, 0, "counted"};
  r.reference.verified = counts_verified(r.reference.counts);
  return r;
}

CaseOutcome outcome_of(const Case& c, std::vector<RoundRecord> rounds) {
  CaseOutcome o;
  o.c = &c;
  o.rounds = std::move(rounds);
  decide_case(&o);
  return o;
}

TEST(CrosscheckOutcome, MediansAndVerdictOverCountedRounds) {
  const Case c = a_case();
  const CaseOutcome o = outcome_of(c, {good_round(0, 101, 100), good_round(1, 205, 200), good_round(2, 99, 100)});
  EXPECT_EQ(o.counted, 3u);
  EXPECT_DOUBLE_EQ(o.suite_ns, 101);
  EXPECT_DOUBLE_EQ(o.independent_ns, 100);
  EXPECT_EQ(o.verdict, Verdict::kAgree);
}

TEST(CrosscheckOutcome, UnaccountedReferenceEventsMakeItNotMeasured) {
  const Case c = a_case();
  RoundRecord lossy = good_round(1, 100, 100);
  lossy.reference.counts = {true, 1000, 900, 50, 0, 0, "counted"};  // 50 events neither recorded nor lost
  lossy.reference.verified = counts_verified(lossy.reference.counts);
  EXPECT_FALSE(lossy.reference.verified);
  const CaseOutcome o = outcome_of(c, {good_round(0, 100, 100), lossy, good_round(2, 100, 100)});
  EXPECT_EQ(o.verdict, Verdict::kNotMeasured);
  EXPECT_NE(o.reason.find("round 2"), std::string::npos) << o.reason;
}

TEST(CrosscheckOutcome, TooManyLostOrBadPayloadIsNotVerified) {
  EXPECT_FALSE(counts_verified({true, 1000, 900, 100, 0, 0, ""}));  // 10% lost: above the suite's 5%
  EXPECT_TRUE(counts_verified({true, 1000, 960, 40, 0, 0, ""}));
  EXPECT_FALSE(counts_verified({true, 1000, 1000, 0, 1000, 1, ""}));  // one event's fields differ
  EXPECT_FALSE(counts_verified({true, 0, 0, 0, 0, 0, ""}));           // recorded nothing
  EXPECT_FALSE(counts_verified({false, 1000, 1000, 0, 0, 0, ""}));    // no count at all
}

TEST(CrosscheckOutcome, AFailedSuiteVerificationMakesItNotMeasured) {
  const Case c = a_case();
  RoundRecord failed = good_round(0, 100, 100);
  failed.suite.verified = false;
  failed.suite.verification = "failed: recorded 10 of 20 events";
  const CaseOutcome o = outcome_of(c, {failed, good_round(1, 100, 100), good_round(2, 100, 100)});
  EXPECT_EQ(o.verdict, Verdict::kNotMeasured);
  EXPECT_NE(o.reason.find("verification failed"), std::string::npos) << o.reason;
}

// Rounds the machine's speed changed during (in every attempt) are left out
// of the interval, and said; too few steady ones and it cannot tell.
TEST(CrosscheckOutcome, UnsteadyRoundsAreLeftOut) {
  const Case c = a_case();
  RoundRecord wild = good_round(3, 150, 100), wilder = good_round(4, 60, 100);
  wild.steady = wilder.steady = false;
  CaseOutcome o =
      outcome_of(c, {good_round(0, 100, 100), good_round(1, 101, 100), good_round(2, 99, 100), wild, wilder});
  EXPECT_EQ(o.counted, 5u);
  EXPECT_EQ(o.unsteady, 2u);
  EXPECT_EQ(o.ratio.n, 3u);
  EXPECT_EQ(o.verdict, Verdict::kAgree);
  EXPECT_NE(o.reason.find("2 of 5 rounds left out"), std::string::npos) << o.reason;
  o = outcome_of(c, {good_round(0, 100, 100), good_round(1, 101, 100), wild, wilder});
  EXPECT_EQ(o.verdict, Verdict::kCannotTell);
  EXPECT_NE(o.reason.find("2 steady round(s)"), std::string::npos) << o.reason;
}

// A suite round whose run came back unsteady (its overhead changed level
// mid-run: a busy host's speed change seen from inside the run) is left out
// like a round the probes saw change, not a failure that leaves the case
// unmeasured.
TEST(CrosscheckOutcome, AnUnsteadySuiteRunIsLeftOutNotFailed) {
  const Case c = a_case();
  RoundRecord shifted = good_round(3, NAN, 100);
  shifted.suite.unsteady = true;
  shifted.suite.verified = true;
  const CaseOutcome o =
      outcome_of(c, {good_round(0, 100, 100), good_round(1, 101, 100), good_round(2, 99, 100), shifted});
  EXPECT_EQ(o.verdict, Verdict::kAgree) << o.reason;
  EXPECT_EQ(o.unsteady, 1u);
  EXPECT_EQ(o.ratio.n, 3u);
  EXPECT_NE(o.reason.find("1 of 4 rounds left out"), std::string::npos) << o.reason;
  EXPECT_NE(round_problem(shifted).find("unsteady"), std::string::npos);
  // A suite round that failed for another reason still leaves the case unmeasured.
  RoundRecord failed = good_round(3, NAN, 100);
  failed.suite.error = "the benchmark failed";
  EXPECT_EQ(outcome_of(c, {good_round(0, 100, 100), good_round(1, 101, 100), good_round(2, 99, 100), failed}).verdict,
            Verdict::kNotMeasured);
}

// Left out or not, a figure 2x off in its steady rounds disagrees.
TEST(CrosscheckOutcome, SteadyRoundsTwiceOffDisagree) {
  const Case c = a_case();
  RoundRecord fine = good_round(3, 100, 100);
  fine.steady = false;
  const CaseOutcome o =
      outcome_of(c, {good_round(0, 200, 100), good_round(1, 205, 100), good_round(2, 198, 100), fine});
  EXPECT_EQ(o.verdict, Verdict::kDisagree);
}

// Cases short of steady rounds get the command that gives just them more
// chances; a case that agrees, or cannot tell for a wide interval, does not.
TEST(CrosscheckOutcome, CasesShortOfSteadyRoundsGetAHint) {
  Case c = a_case(), d = a_case();
  c.name = "lttng_hot";
  d.name = "ebpf_tracepoint";
  RoundRecord wild = good_round(2, 150, 100), wilder = good_round(3, 60, 100);
  wild.steady = wilder.steady = false;
  const CaseOutcome short_of = outcome_of(c, {good_round(0, 100, 100), good_round(1, 101, 100), wild, wilder});
  const CaseOutcome agrees =
      outcome_of(d, {good_round(0, 100, 100), good_round(1, 101, 100), good_round(2, 99, 100), wild});
  ASSERT_EQ(short_of.verdict, Verdict::kCannotTell);
  ASSERT_EQ(agrees.verdict, Verdict::kAgree);
  const std::string hint = unsteady_hint({short_of, agrees}, 5);
  EXPECT_NE(hint.find("1 case(s) had fewer than 3 steady rounds"), std::string::npos) << hint;
  EXPECT_NE(hint.find("tracebench crosscheck --case lttng_hot --rounds 9 --redo-budget 600"), std::string::npos)
      << hint;
  EXPECT_EQ(hint.find("ebpf_tracepoint"), std::string::npos) << hint;
  EXPECT_NE(unsteady_hint({short_of}, 30).find("--rounds 50 "), std::string::npos);  // the option's cap
  EXPECT_EQ(unsteady_hint({agrees}, 5), "");
  // Too few rounds with none left out (a short --rounds): not the host's doing.
  const CaseOutcome few = outcome_of(c, {good_round(0, 100, 100), good_round(1, 101, 100)});
  EXPECT_EQ(unsteady_hint({few}, 2), "");
}

TEST(CrosscheckOutcome, ASkippedCaseIsNotMeasured) {
  const Case c = a_case();
  CaseOutcome o;
  o.c = &c;
  o.skipped = "bpftrace is not installed";
  decide_case(&o);
  EXPECT_EQ(o.verdict, Verdict::kNotMeasured);
}

}  // namespace
}  // namespace tracebench::crosscheck
