// The selftest's verdict on a case (tracers/delay/selftest_verdict.h), on
// figures the module and the runs reported: a TCG guest on a host that takes
// its CPU ~18,600 times a second (the spins ran long in the traced blocks,
// and the medians held it), the deterministic icount clock, and the chain
// or the probe broken on purpose.
#include <gtest/gtest.h>

#include "tracers/delay/selftest_verdict.h"

namespace tbdelay {
namespace {

// The module's details for a kernel case: calibrated firing and spin, the
// shortest firing, and what the spins spent in the traced blocks.
nlohmann::json probe(double firing, double iqr, double least_firing, double spin, double spent, double min_spent) {
  return {{"firing_ns", firing},       {"firing_iqr_ns", iqr},         {"least_firing_ns", least_firing},
          {"spin_ns", spin},           {"spent_ns_per_firing", spent}, {"min_spent_ns", min_spent},
          {"enabled_clock_ratio", 1.0}};
}

CaseFigures kernel_case(double ns, std::vector<double> medians, const nlohmann::json& p) {
  CaseFigures c;
  c.ns = ns;
  c.kernel = true;
  c.medians = std::move(medians);
  c.halfwidths.assign(c.medians.size(), 2.0);
  c.floor_per_event_ns = 0.2;
  for (std::size_t i = 0; i < c.medians.size(); ++i) {
    c.uncertainties.push_back(calibration_uncertainty(p, ns));
    c.excesses.push_back(spin_excess(p));
  }
  c.clock_ratio = p.value("enabled_clock_ratio", 1.0);
  return c;
}

// A TCG guest on a busy host: the module's spins ran 36.7 ns long per
// firing in the traced blocks, 4.1 at calibration; the chain recovered
// N + 37.4.  The cost added was N to N + 32.6: within the bound of that.
const nlohmann::json kBusyTcg = probe(420.8, 10.5, 86.7, 330.0, 366.7, 330.0);

// A user-side case (a user site or the syscall): its rounds' medians, each
// with a 95% half-width of `halfwidth`.
CaseFigures user_case(double ns, std::vector<double> medians, double halfwidth) {
  CaseFigures c;
  c.ns = ns;
  c.medians = std::move(medians);
  c.halfwidths.assign(c.medians.size(), halfwidth);
  return c;
}

TEST(SelftestVerdict, WhatTheSpinsRanLongBeyondTheCalibrationIsCostAdded) {
  EXPECT_NEAR(spin_excess(kBusyTcg), 36.7 - 4.1, 1e-9);
  const Judgement j = judge_case(kernel_case(420, {455.0, 457.4, 460.0}, kBusyTcg), 20.0);
  EXPECT_NEAR(j.error, 37.4, 1e-9);
  EXPECT_NEAR(j.bound, 0.03 * 420 + 0.8 + 5.25, 1e-9);
  EXPECT_EQ(j.verdict, Verdict::kPass);
}

TEST(SelftestVerdict, WithoutTheSpinsFiguresTheSameRecoveryFails) {
  CaseFigures c = kernel_case(420, {455.0, 457.4, 460.0}, kBusyTcg);
  c.excesses.clear();
  EXPECT_EQ(judge_case(c, 20.0).verdict, Verdict::kFail);
}

TEST(SelftestVerdict, TheExcessWidensOnlyUpwards) {
  // The chain recovered N - 37: no time the spins ran long explains less.
  EXPECT_EQ(judge_case(kernel_case(420, {383.0, 383.4, 384.0}, kBusyTcg), 20.0).verdict, Verdict::kFail);
  // Beyond N + excess + bound by more than three times the noise.
  EXPECT_EQ(judge_case(kernel_case(420, {480.0, 481.0, 482.0}, kBusyTcg), 20.0).verdict, Verdict::kFail);
}

TEST(SelftestVerdict, AProbeSpinningTwiceItsSpinFails) {
  // Every firing spins 660 rather than 330: the shortest spun as long, so
  // nothing ran long, and the chain's N + 330 is the probe's fault.
  const nlohmann::json doubled = probe(420.8, 10.5, 86.7, 330.0, 662.0, 660.0);
  EXPECT_NEAR(spin_excess(doubled), 0.0, 1e-9);
  EXPECT_EQ(judge_case(kernel_case(420, {748.0, 750.0, 752.0}, doubled), 20.0).verdict, Verdict::kFail);
}

TEST(SelftestVerdict, TheCountingClockRecoversNWithNothingRanLong) {
  // icount: firing 182.0 at calibration, spins exact, recovered 182.0.
  const nlohmann::json icount = probe(182.0, 0.0, 35.0, 149.0, 153.1, 153.0);
  const Judgement j = judge_case(kernel_case(180, {182.0, 182.0, 182.0}, icount), 8.0);
  EXPECT_LT(j.excess, 0.2);
  EXPECT_EQ(j.verdict, Verdict::kPass);
  EXPECT_EQ(judge_case(kernel_case(180, {200.0, 200.0, 200.0}, icount), 8.0).verdict, Verdict::kFail);
}

TEST(SelftestVerdict, AUserCaseHasNoExcess) {
  CaseFigures c = user_case(2000, {2072.0, 2073.0, 2074.0}, 5.0);
  c.excesses = {100.0};  // not the user sites' figure: ignored
  const Judgement j = judge_case(c, 20.0);
  EXPECT_EQ(j.excess, 0.0);
  EXPECT_NEAR(j.bound, 60.0, 1e-9);
  EXPECT_EQ(j.verdict, Verdict::kCannotJudge);  // 72 off, 12 beyond the bound, noise 5
}

TEST(SelftestVerdict, AModuleClockThatLeftItsRateCannotBeJudged) {
  nlohmann::json drifted = kBusyTcg;
  drifted["enabled_clock_ratio"] = 1.05;
  const Judgement j = judge_case(kernel_case(420, {420.0, 421.0, 422.0}, drifted), 20.0);
  EXPECT_TRUE(j.clock_moved);
  EXPECT_EQ(j.verdict, Verdict::kCannotJudge);
}

TEST(SelftestVerdict, NothingMeasuredIsAFailure) {
  CaseFigures c;
  c.ns = 200;
  EXPECT_EQ(judge_case(c, 20.0).verdict, Verdict::kFail);
}

// A bhyve-like host that changed speed mid-run: the user site's 120 ns
// round read 121.4 ns for five repetitions, then 147.5; the runner gave no
// figure.  Left out, the other rounds decide; all left out, no verdict.
TEST(SelftestVerdict, RoundsThatChangedLevelAreLeftOutNotFailed) {
  CaseFigures c;
  c.ns = 120;
  c.unsteady = {"the overhead changed level during the run (5 repetitions at 121.4 ns then 147.5 ns)"};
  EXPECT_EQ(judge_case(c, 20.0).verdict, Verdict::kCannotJudge);
  c.medians = {121.4, 119.8, 122.0, 120.9};
  c.halfwidths = {4.0, 4.0, 4.0, 4.0};
  EXPECT_EQ(judge_case(c, 20.0).verdict, Verdict::kPass);
  c.medians = {260.0, 261.0, 259.0, 262.0};  // the chain broken: twice N
  EXPECT_EQ(judge_case(c, 20.0).verdict, Verdict::kFail);
}

// A syscall site on a host where the syscall after a spin is cheaper: a
// plain loop of the site sees the 200 ns spin add 152 (the figures of a
// bhyve-like guest's run).  Judged against that, the run's 150 passes; the
// same run judged against N is 50 off; a run that reads N there (a chain
// that added the spin where the host does not) fails.
TEST(SelftestVerdict, ASyscallCaseIsJudgedAgainstThePlainLoopsFigure) {
  CaseFigures c = user_case(200, {150.1, 152.5, 149.0}, 3.0);
  const Judgement against_n = judge_case(c, 5.0);
  EXPECT_EQ(against_n.verdict, Verdict::kFail);
  c.references = {151.0, 153.4, 152.0};
  c.reference_halfwidths = {2.0, 2.5, 2.0};
  const Judgement j = judge_case(c, 5.0);
  EXPECT_NEAR(j.known, 152.0, 1e-9);
  EXPECT_NEAR(j.error, 150.1 - 152.0, 1e-9);
  EXPECT_EQ(j.verdict, Verdict::kPass);
  c.medians = {199.0, 200.5, 201.0};
  EXPECT_EQ(judge_case(c, 5.0).verdict, Verdict::kFail);
}

// The plain loop's own noise widens what cannot be judged: 20 off with a
// bound of 10 is a failure beside quiet figures, not beside a plain loop
// whose rounds spread by 10.
TEST(SelftestVerdict, ThePlainLoopsNoiseCountsWithTheRuns) {
  CaseFigures c = user_case(200, {170.0, 170.0, 170.0}, 1.0);
  c.references = {190.0, 190.0, 190.0};
  c.reference_halfwidths = {1.0, 1.0, 1.0};
  EXPECT_EQ(judge_case(c, 5.0).verdict, Verdict::kFail);
  c.references = {180.0, 190.0, 200.0};
  EXPECT_EQ(judge_case(c, 5.0).verdict, Verdict::kCannotJudge);
}

// A syscall case on a host whose syscalls cost ~1 us and vary by tens of
// ns from round to round: after five rounds 51 ns off a 40 ns bound, within
// the noise; five more rounds settle both medians and it passes.
TEST(SelftestVerdict, MoreRoundsSettleACaseTheNoiseLeftUndecided) {
  CaseFigures c = user_case(110, {79.0, 60.0, 130.0, 75.0, 101.0}, 10.0);
  c.references = {137.0, 150.0, 90.0, 140.0, 120.0};
  c.reference_halfwidths.assign(5, 10.0);
  EXPECT_EQ(judge_case(c, 20.0).verdict, Verdict::kCannotJudge);
  for (double m : {105.0, 98.0, 110.0, 95.0, 102.0}) c.medians.push_back(m);
  c.halfwidths.assign(c.medians.size(), 10.0);
  for (double r : {112.0, 118.0, 105.0, 115.0, 110.0}) c.references.push_back(r);
  c.reference_halfwidths.assign(c.references.size(), 10.0);
  const Judgement j = judge_case(c, 20.0);
  EXPECT_NEAR(j.error, 99.5 - 116.5, 1e-9);
  EXPECT_EQ(j.verdict, Verdict::kPass);
}

// The rounds asked for always run; beyond them, only while some case cannot
// be judged, none failed, and under kRoundsWhileUndecided (or the rounds
// asked, if more).
TEST(SelftestVerdict, AnotherRoundOnlyWhileACaseIsUndecided) {
  const std::vector<Verdict> pass{Verdict::kPass, Verdict::kPass};
  const std::vector<Verdict> undecided{Verdict::kPass, Verdict::kCannotJudge};
  const std::vector<Verdict> failed{Verdict::kFail, Verdict::kCannotJudge};
  EXPECT_TRUE(another_round(3, 5, failed));
  EXPECT_FALSE(another_round(5, 5, pass));
  EXPECT_TRUE(another_round(5, 5, undecided));
  EXPECT_FALSE(another_round(5, 5, failed));
  EXPECT_TRUE(another_round(kRoundsWhileUndecided - 1, 5, undecided));
  EXPECT_FALSE(another_round(kRoundsWhileUndecided, 5, undecided));
  EXPECT_TRUE(another_round(kRoundsWhileUndecided, 15, undecided));
  EXPECT_FALSE(another_round(15, 15, undecided));
}

}  // namespace
}  // namespace tbdelay
