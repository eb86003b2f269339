// The minimum detectable effect against its formula and against simulation,
// `inconclusive` in compare, the paired test on runs recorded as pairs, and
// the sequential test of `tracebench ab`: its false-alarm rate under optional
// stopping, its power and the coverage of its confidence sequence, on
// simulated data with known truth.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "tracebench/compare.h"
#include "tracebench/pairs.h"
#include "tracebench/power.h"
#include "tracebench/report.h"
#include "tracebench/sequential.h"

namespace tracebench {
namespace {

constexpr double kZ975 = 1.959963984540054, kZ80 = 0.8416212335729143, kZ90 = 1.2815515655446004;

// Upper bound of a rate estimated from `trials` Bernoulli draws whose true
// rate is p: p plus four binomial standard errors.
double with_slack(double p, int trials) { return p + 4 * std::sqrt(p * (1 - p) / trials); }

TEST(Mde, MatchesTheNormalFormulaForLargeSamples) {
  // (z_{1-a/2} + z_{1-b}) * sd * sqrt(2/n), two samples of n.
  const double sd = 3, n = 400;
  EXPECT_NEAR(mde_welch(sd, 400, sd, 400, 0.05, 0.8) / ((kZ975 + kZ80) * sd * std::sqrt(2 / n)), 1, 0.01);
  EXPECT_NEAR(mde_welch(sd, 400, sd, 400, 0.05, 0.9) / ((kZ975 + kZ90) * sd * std::sqrt(2 / n)), 1, 0.01);
  // Paired: one sample of n differences.
  EXPECT_NEAR(mde_paired(sd, 400, 0.05, 0.8) / ((kZ975 + kZ80) * sd / std::sqrt(n)), 1, 0.01);
  // The U test needs pi/3 times the values of the t test on normal data.
  EXPECT_NEAR(mde_mann_whitney(sd, 400, 400, 0.05, 0.8) / ((kZ975 + kZ80) * sd * std::sqrt(2 / n * M_PI / 3)), 1, 1e-9);
  // Small samples pay for the estimated sd (t quantiles); one value a side has no spread.
  EXPECT_GT(mde_welch(sd, 3, sd, 3, 0.05, 0.8), 1.3 * (kZ975 + kZ80) * sd * std::sqrt(2.0 / 3));
  EXPECT_TRUE(std::isinf(mde_welch(sd, 1, sd, 3, 0.05, 0.8)));
  EXPECT_TRUE(std::isinf(mde_paired(sd, 1, 0.05, 0.8)));
  EXPECT_EQ(mde_paired(0, 5, 0.05, 0.8), 0);
}

// The fraction of simulated experiments, each shifted by the MDE, in which
// the test finds the shift: close to the power asked for.
TEST(Mde, ASimulatedShiftOfTheMdeIsFoundWithTheStatedPower) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 1);
  const int trials = 3000;
  auto draw = [&](std::size_t n, double shift) {
    std::vector<double> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(shift + noise(rng));
    return v;
  };
  // Welch on 8 runs a side.
  const double shift_w = mde_welch(1, 8, 1, 8, 0.05, 0.8);
  int found = 0;
  for (int t = 0; t < trials; ++t) found += welch_t(draw(8, 0), draw(8, shift_w)).p_value < 0.05;
  EXPECT_NEAR(found / double(trials), 0.8, 0.05) << "Welch, shift " << shift_w;
  // Paired t on 10 pairs.
  const double shift_p = mde_paired(1, 10, 0.05, 0.9);
  found = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a(10, 1.0), b;
    for (double d : draw(10, shift_p)) b.push_back(std::exp(d * 0.01));
    found += paired_log_t(a, b).p_value < 0.05;
  }
  EXPECT_NEAR(found / double(trials), 0.9, 0.04) << "paired, shift " << shift_p;
  // Mann-Whitney U on 30 a side, its spread from the robust sd.
  const double shift_u = mde_mann_whitney(1, 30, 30, 0.05, 0.8);
  found = 0;
  for (int t = 0; t < trials; ++t) found += mann_whitney_u(draw(30, 0), draw(30, shift_u)).p_value < 0.05;
  EXPECT_NEAR(found / double(trials), 0.8, 0.05) << "U, shift " << shift_u;
}

BenchmarkResult none_bench(double ns, double spread, int reps = 6) {
  BenchmarkResult b;
  b.name = "none/getpid/none/payload:0/threads:1";
  b.tracer = "none";
  b.status = "ok";
  b.overhead_cycles = MedianCI{};
  for (int i = 0; i < reps; ++i) {
    b.baseline.repetition_medians.push_back(ns + spread * (i - (reps - 1) / 2.0) / reps);
    b.traced.repetition_medians.push_back(ns + spread * (i - (reps - 1) / 2.0) / reps);
  }
  return b;
}

RunResult run_of(double ns, double spread = 1) {
  RunResult r;
  r.context.tsc_hz = 1e9;
  r.benchmarks = {none_bench(ns, spread)};
  return r;
}

TEST(CompareMde, ASideThatCouldNotSeeTheThresholdIsInconclusiveNotSame) {
  // Three runs a side whose medians spread by 10%: Welch on them could not
  // see a 5% change, so no difference found is inconclusive.
  std::vector<RunResult> a = {run_of(100), run_of(110), run_of(95)}, b = {run_of(104), run_of(96), run_of(108)};
  CompareResult c;
  ASSERT_TRUE(compare_runs({&a[0], &a[1], &a[2]}, {&b[0], &b[1], &b[2]}, 0.05, 0.05, &c).is_ok());
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].method, "runs");
  EXPECT_GT(c.rows[0].p_value, 0.05);
  ASSERT_TRUE(c.rows[0].mde80 && c.rows[0].mde90);
  EXPECT_GT(*c.rows[0].mde80, 0.05);
  EXPECT_GT(*c.rows[0].mde90, *c.rows[0].mde80);
  EXPECT_EQ(c.rows[0].verdict, "inconclusive");
  // Its MDE is the formula's, relative to A's median.
  std::vector<double> ma = {100, 110, 95}, mb = {104, 96, 108};
  EXPECT_NEAR(*c.rows[0].mde80, mde_welch(sample_sd(ma), 3, sample_sd(mb), 3, 0.05, 0.8) / 100, 1e-9);
  // Printed, and in JSON; not a failure unless asked.
  EXPECT_NE(compare_table(c).find("inconclusive"), std::string::npos);
  EXPECT_NEAR(compare_json(c, {}, {})["rows"][0]["mde_80"].get<double>(), *c.rows[0].mde80, 1e-12);
  std::string why;
  EXPECT_FALSE(fails_check(c, &why));
  EXPECT_TRUE(fails_check(c, &why, true));
  EXPECT_NE(why.find("inconclusive"), std::string::npos) << why;

  // Five tight runs a side, no change: the test could see 5%, so same.
  std::vector<RunResult> ta, tb;
  for (double v : {100.0, 100.4, 99.7, 100.2, 99.9}) ta.push_back(run_of(v));
  for (double v : {100.1, 99.8, 100.3, 99.9, 100.2}) tb.push_back(run_of(v));
  CompareResult t;
  std::vector<const RunResult*> pa, pb;
  for (auto& r : ta) pa.push_back(&r);
  for (auto& r : tb) pb.push_back(&r);
  ASSERT_TRUE(compare_runs(pa, pb, 0.05, 0.05, &t).is_ok());
  EXPECT_LT(*t.rows[0].mde80, 0.05);
  EXPECT_EQ(t.rows[0].verdict, "same");
  EXPECT_NE(compare_junit(t, pa, pb, 0.05, 0.05).find("name=\"mde_80\""), std::string::npos);
}

TEST(CompareMde, OneRunASideTakesTheSpreadOfItsRepetitions) {
  RunResult a = run_of(100, 1), b = run_of(100, 1);
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, b, 0.05, 0.05, &c).is_ok());
  EXPECT_EQ(c.rows[0].method, "repetitions");
  const auto& reps = a.benchmarks[0].baseline.repetition_medians;
  const double sd = robust_sd(reps);
  EXPECT_NEAR(*c.rows[0].mde80, mde_mann_whitney(sd, 6, 6, 0.05, 0.8) / 100, 1e-9);
  EXPECT_EQ(c.rows[0].verdict, "same");
}

TEST(ComparePairs, PairsThatShareTheHostsDriftAreTestedOnTheirRatios) {
  // The host drifts by +-10% from pair to pair; B is 6% dearer than A in
  // each pair.  Welch on the runs cannot tell; the paired test can.
  const double level[] = {100, 110, 92, 105, 97, 108};
  std::vector<RunResult> a, b;
  for (double l : level) {
    a.push_back(run_of(l));
    b.push_back(run_of(l * 1.06 * (1 + 0.002 * (a.size() % 2 ? 1 : -1))));
  }
  std::vector<const RunResult*> pa, pb;
  PairIds ids;
  for (std::size_t i = 0; i < a.size(); ++i) {
    pa.push_back(&a[i]);
    pb.push_back(&b[i]);
    ids.a.push_back("pair-" + std::to_string(i));
    ids.b.push_back("pair-" + std::to_string(i));
  }
  CompareResult unpaired, paired;
  ASSERT_TRUE(compare_runs(pa, pb, 0.05, 0.05, &unpaired).is_ok());
  EXPECT_EQ(unpaired.rows[0].method, "runs");
  EXPECT_NE(unpaired.rows[0].verdict, "regression");
  ASSERT_TRUE(compare_runs(pa, pb, 0.05, 0.05, &paired, &ids).is_ok());
  EXPECT_EQ(paired.rows[0].method, "pairs");
  EXPECT_NEAR(*paired.rows[0].ratio, 1.06, 0.002);
  EXPECT_LT(paired.rows[0].p_value, 1e-4);
  EXPECT_LT(*paired.rows[0].mde80, 0.01);
  EXPECT_EQ(paired.rows[0].verdict, "regression");
  // Pairs are matched by name, not by position.
  std::swap(pb[0], pb[1]);
  std::swap(ids.b[0], ids.b[1]);
  CompareResult swapped;
  ASSERT_TRUE(compare_runs(pa, pb, 0.05, 0.05, &swapped, &ids).is_ok());
  EXPECT_NEAR(swapped.rows[0].p_value, paired.rows[0].p_value, 1e-12);
}

// Pairs with B = A * ratio * (1 +- noise), the host drifting between pairs.
struct PairedSides {
  std::vector<RunResult> a, b;
  std::vector<const RunResult*> pa, pb;
  PairIds ids;
  PairedSides(int n, double ratio, double noise) {
    const double level[] = {100, 110, 92, 105, 97, 108, 101, 95, 103, 99, 106, 94};
    for (int i = 0; i < n; ++i) {
      a.push_back(run_of(level[i % 12]));
      b.push_back(run_of(level[i % 12] * ratio * (1 + noise * (i % 2 ? 1 : -1))));
    }
    for (int i = 0; i < n; ++i) {
      pa.push_back(&a[i]);
      pb.push_back(&b[i]);
      ids.a.push_back("pair-" + std::to_string(i));
      ids.b.push_back("pair-" + std::to_string(i));
    }
    ids.sequential = true;
  }
  CompareResult compare() {
    CompareResult c;
    EXPECT_TRUE(compare_runs(pa, pb, 0.05, 0.05, &c, &ids).is_ok());
    return c;
  }
};

TEST(ComparePairs, SequentialDecidesARegressionOnItsOwnTest) {
  // Below five pairs no t statistic reaches 1/alpha with one benchmark:
  // however clear, four pairs are undecided.
  PairedSides four(4, 1.30, 0.01);
  EXPECT_EQ(four.compare().rows[0].verdict, "undecided");
  PairedSides s(6, 1.30, 0.01);
  const CompareResult c = s.compare();
  ASSERT_TRUE(c.rows[0].sequential.has_value());
  EXPECT_EQ(c.rows[0].sequential->n, 6u);
  EXPECT_EQ(c.rows[0].verdict, "regression");
  EXPECT_GT(c.rows[0].sequential->low, 0);
  EXPECT_NE(compare_json(c, s.pa, s.pb).dump().find("\"bayes_factor\""), std::string::npos);
}

TEST(ComparePairs, SequentialSaysUndecidedWhereAFixedSampleTestWouldAlreadyDecide) {
  // Three pairs 8% apart with 2% noise: the paired t calls it a regression,
  // the always-valid test needs more pairs.
  PairedSides s(3, 1.08, 0.02);
  s.ids.sequential = false;
  EXPECT_EQ(s.compare().rows[0].verdict, "regression");
  s.ids.sequential = true;
  const CompareResult c = s.compare();
  EXPECT_EQ(c.rows[0].verdict, "undecided");
  std::string why;
  EXPECT_FALSE(fails_check(c, &why, false));
  EXPECT_TRUE(fails_check(c, &why, true));
  EXPECT_NE(why.find("undecided"), std::string::npos);
  EXPECT_NE(compare_table(c).find("undecided (sequential, 3 pairs"), std::string::npos);
}

TEST(ComparePairs, SequentialCallsSameOnlyWhenTheThresholdIsExcluded) {
  PairedSides few(3, 1.0, 0.003), many(12, 1.0, 0.003);
  EXPECT_EQ(few.compare().rows[0].verdict, "undecided");
  const CompareResult c = many.compare();
  EXPECT_EQ(c.rows[0].verdict, "same");
  EXPECT_GT(c.rows[0].sequential->low, std::log(1 / 1.05));
  EXPECT_LT(c.rows[0].sequential->high, std::log(1.05));
}

TEST(ComparePairs, ThePairLayoutIsRecognised) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("tb-pairs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* p : {"pair-0002", "pair-0001"}) {
    fs::create_directories(dir / p / "run-x");
    std::ofstream(dir / p / "run-x" / "result.json") << "{}";
  }
  std::vector<std::string> files, ids;
  bool paired = false;
  ASSERT_TRUE(paired_result_files(dir.string(), &files, &ids, &paired).is_ok());
  EXPECT_TRUE(paired);
  EXPECT_EQ(ids, (std::vector<std::string>{"pair-0001", "pair-0002"}));
  EXPECT_NE(files[0].find("pair-0001"), std::string::npos);
  // A pair directory with two runs is refused, not guessed.
  fs::create_directories(dir / "pair-0001" / "run-y");
  std::ofstream(dir / "pair-0001" / "run-y" / "result.json") << "{}";
  files.clear();
  ids.clear();
  EXPECT_FALSE(paired_result_files(dir.string(), &files, &ids, &paired).is_ok());
  // A directory of plain runs is not paired.
  fs::remove_all(dir);
  fs::create_directories(dir / "run-x");
  ASSERT_TRUE(paired_result_files(dir.string(), &files, &ids, &paired).is_ok());
  EXPECT_FALSE(paired);
  fs::remove_all(dir);
}

TEST(Sequential, TheIntervalIsWhereTheBayesFactorReachesOneOverAlpha) {
  for (std::size_t n : {5u, 6u, 20u, 200u}) {
    const double c = confidence_sequence_factor(n, 0.05);
    ASSERT_TRUE(std::isfinite(c)) << n;
    EXPECT_NEAR(t_mixture_bayes_factor(c, n), 20, 1e-6) << n;
    EXPECT_LT(t_mixture_bayes_factor(c * 0.99, n), 20) << n;
  }
  // Up to four values (three degrees of freedom) cannot reach 1/0.05
  // whatever t is: the mixture's price for the unknown sd.
  EXPECT_TRUE(std::isinf(confidence_sequence_factor(4, 0.05)));
  // Wider than the fixed-sample interval: the price of looking at every pair.
  EXPECT_GT(confidence_sequence_factor(50, 0.05), 2.01);
}

// One simulated A/B sequence: log ratios with mean `delta` and sd `sd`,
// tested after every pair from the third to `max_pairs`, stopped at the
// first verdict.  Returns the verdict ("" when the budget ran out) and, in
// `excluded`, whether the interval ever excluded the true delta.
std::string simulate(std::mt19937_64& rng, double delta, double sd, int max_pairs, bool* excluded = nullptr) {
  std::normal_distribution<double> noise(delta, sd);
  std::vector<double> d;
  for (int i = 0; i < max_pairs; ++i) {
    d.push_back(noise(rng));
    if (d.size() < 3) continue;
    SequentialState s = sequential_test(d, 0.05, 0.05);
    if (excluded && (s.low > delta || s.high < delta)) *excluded = true;
    if (!s.verdict.empty()) return s.verdict;
  }
  return "";
}

TEST(Sequential, FalseAlarmsUnderOptionalStoppingStayBelowAlpha) {
  // A/A: 2000 sequences of up to 100 pairs, each looked at after every pair
  // and stopped at the first verdict.  Regression or improvement is a false
  // alarm.
  std::mt19937_64 rng(11);
  const int trials = 2000;
  int alarms = 0, naive = 0;
  for (int t = 0; t < trials; ++t) {
    const std::string v = simulate(rng, 0, 0.03, 100);
    alarms += v == "regression" || v == "improvement";
  }
  EXPECT_LE(alarms / double(trials), with_slack(0.05, trials)) << alarms;
  // The test alone, looked at after every one of 100 pairs and never stopped
  // by a same: it rejects "no change" at some look in at most alpha of the
  // sequences (Ville's inequality), where the fixed-sample t interval would
  // in a third of them.
  int rejected = 0;
  std::normal_distribution<double> h0(0, 0.03);
  for (int t = 0; t < trials; ++t) {
    std::vector<double> d;
    bool ever = false;
    for (int i = 0; i < 100 && !ever; ++i) {
      d.push_back(h0(rng));
      const SequentialState st = sequential_test(d, 0.05, 0.05);
      ever = st.low > 0 || st.high < 0;
    }
    rejected += ever;
  }
  EXPECT_LE(rejected / double(trials), with_slack(0.05, trials)) << rejected;
  // What the simulation can see: a fixed-sample t test looked at after every
  // pair, stopped at its first p < 0.05, alarms far more often than 5%.
  std::normal_distribution<double> noise(0, 0.03);
  for (int t = 0; t < trials; ++t) {
    std::vector<double> a, b;
    for (int i = 0; i < 100; ++i) {
      a.push_back(1);
      b.push_back(std::exp(noise(rng)));
      if (i >= 2 && paired_log_t(a, b).p_value < 0.05) {
        ++naive;
        break;
      }
    }
  }
  EXPECT_GT(naive / double(trials), 0.2) << naive;
}

TEST(Sequential, HeavyTailedAAPairsRaiseNoMoreFalseAlarms) {
  // A/A log ratios are symmetric (A and B exchangeable), but a disturbed
  // run makes them heavy-tailed: one pair in ten ten times as spread.  The
  // t mixture only gets more cautious (the sd grows faster than the mean).
  std::mt19937_64 rng(19);
  std::normal_distribution<double> calm(0, 0.02), disturbed(0, 0.2);
  std::uniform_real_distribution<double> u(0, 1);
  const int trials = 2000;
  int rejected = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> d;
    bool ever = false;
    for (int i = 0; i < 60 && !ever; ++i) {
      d.push_back(u(rng) < 0.1 ? disturbed(rng) : calm(rng));
      const SequentialState st = sequential_test(d, 0.05, 0.05);
      ever = st.low > 0 || st.high < 0;
    }
    rejected += ever;
  }
  EXPECT_LE(rejected / double(trials), with_slack(0.05, trials)) << rejected;
}

TEST(Sequential, TheIntervalCoversTheTrueChangeAtEveryPairAtOnce) {
  std::mt19937_64 rng(13);
  const int trials = 2000;
  int missed = 0;
  for (int t = 0; t < trials; ++t) {
    bool excluded = false;
    std::normal_distribution<double> noise(0.02, 0.03);
    std::vector<double> d;
    for (int i = 0; i < 60; ++i) {
      d.push_back(noise(rng));
      if (d.size() < 2) continue;
      SequentialState s = sequential_test(d, 0.05, 0.05);
      excluded |= s.low > 0.02 || s.high < 0.02;
    }
    missed += excluded;
  }
  EXPECT_LE(missed / double(trials), with_slack(0.05, trials)) << missed;
}

TEST(Sequential, APlusFivePercentShiftIsCaughtAndNoChangeIsSame) {
  // Pair-to-pair sd of the log ratio of 2%: +5% is caught in at least 90% of
  // 2000 sequences within 30 pairs, and never called an improvement or same.
  std::mt19937_64 rng(17);
  const int trials = 2000;
  int caught = 0, wrong = 0;
  for (int t = 0; t < trials; ++t) {
    const std::string v = simulate(rng, std::log(1.05), 0.02, 30);
    caught += v == "regression";
    wrong += v == "improvement" || v == "same";
  }
  EXPECT_GE(caught / double(trials), 0.9) << caught;
  EXPECT_LE(wrong / double(trials), with_slack(0.05, trials)) << wrong;
  // -5%: an improvement.
  int improved = 0;
  for (int t = 0; t < 200; ++t) improved += simulate(rng, std::log(0.95), 0.02, 30) == "improvement";
  EXPECT_GE(improved, 180);
  // No change with an sd of 1%: the interval soon excludes +-5%: same.
  int same = 0;
  for (int t = 0; t < trials; ++t) same += simulate(rng, 0, 0.01, 30) == "same";
  EXPECT_GE(same / double(trials), 0.9) << same;
}

}  // namespace
}  // namespace tracebench
