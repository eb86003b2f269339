#include "tracebench/report.h"
#include "tracebench/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tracebench {
namespace {

TEST(MannWhitney, SeparatedSamplesAreSignificant) {
  std::vector<double> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, b{11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  MannWhitney r = mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(r.u, 0);
  // Exact two-sided p for complete separation of 10 vs 10 is 2/C(20,10) ~ 1.1e-5;
  // the normal approximation is within an order of magnitude.
  EXPECT_LT(r.p_value, 1e-3);
}

TEST(MannWhitney, InterleavedSamplesAreNot) {
  std::vector<double> a{1, 3, 5, 7, 9, 11}, b{2, 4, 6, 8, 10, 12};
  EXPECT_GT(mann_whitney_u(a, b).p_value, 0.5);
  std::vector<double> same(8, 5.0);
  EXPECT_DOUBLE_EQ(mann_whitney_u(same, same).p_value, 1.0);  // all ties
}

TEST(MannWhitney, KnownNormalApproximation) {
  // a = {1,2,3}, b = {4,5,6,7}: U = 0, mean 6, var = 3*4*8/12 = 8,
  // z = (6 - 0.5)/sqrt(8) = 1.9445, p = erfc(z/sqrt2) = 0.05183.
  MannWhitney r = mann_whitney_u({1, 2, 3}, {4, 5, 6, 7});
  EXPECT_NEAR(r.p_value, 0.05183, 1e-4);
}

TEST(WelchT, PublishedExample) {
  // Welch's t test, the textbook example (two samples of 15): t = 2.46,
  // df = 24.99, two-sided p = 0.0214 (checked by integrating the t density).
  std::vector<double> a{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
  std::vector<double> b{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
  WelchT r = welch_t(a, b);
  EXPECT_NEAR(r.t, 2.4554, 1e-3);
  EXPECT_NEAR(r.df, 24.9885, 1e-3);
  EXPECT_NEAR(r.p_value, 0.021378, 1e-5);
  EXPECT_NEAR(welch_t(b, a).t, -r.t, 1e-12);  // B - A
}

TEST(WelchT, DegenerateSamples) {
  EXPECT_DOUBLE_EQ(welch_t({1}, {2, 3}).p_value, 1.0);  // too few to test
  EXPECT_DOUBLE_EQ(welch_t({5, 5, 5}, {5, 5}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(welch_t({5, 5, 5}, {6, 6}).p_value, 0.0);
}

BenchmarkResult bench(const std::string& tracer, std::vector<double> base, std::vector<double> traced) {
  BenchmarkResult b;
  b.name = tracer + "/getpid/count/payload:0/threads:1";
  b.tracer = tracer;
  b.baseline.repetition_medians = std::move(base);
  b.traced.repetition_medians = std::move(traced);
  b.overhead_cycles = MedianCI{};  // an ok benchmark has a figure
  return b;
}

RunResult run_with(std::vector<BenchmarkResult> bs, bool emulated = false) {
  RunResult r;
  r.context.tsc_hz = 1e9;  // 1 cycle = 1 ns
  r.context.emulated = emulated;
  r.benchmarks = std::move(bs);
  return r;
}

// JUnit: what --fail-on-regression fails on is a <failure>, a benchmark only
// B has is <skipped>, the rest pass; names and details are escaped.
TEST(CompareJunit, FailuresSkipsAndEscaping) {
  CompareResult c;
  CompareRow reg;
  reg.benchmark = "ebpf/getpid/count<&\"'>";
  reg.what = "overhead";
  reg.a_median = 100;
  reg.b_median = 120;
  reg.ratio = 1.2;
  reg.p_value = 0.001;
  reg.verdict = "regression";
  CompareRow same = reg;
  same.benchmark = "ftrace/getpid/count";
  same.verdict = "same";
  CompareRow gone;
  gone.benchmark = "perf/getpid/count";
  gone.verdict = "missing";
  gone.side = "B";
  gone.detail = "in A, not in B";
  CompareRow only_b = gone;
  only_b.benchmark = "lttng/ust_hot/record";
  only_b.side = "A";
  only_b.detail = "in B, not in A";
  c.rows = {reg, same, gone, only_b};
  c.b_benchmarks = 3;
  const std::string x = compare_junit(c, {}, {}, 0.05, 0.05);
  EXPECT_NE(x.find("tests=\"4\" failures=\"2\" errors=\"0\" skipped=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("name=\"ebpf/getpid/count&lt;&amp;&quot;&apos;&gt;\""), std::string::npos) << x;
  EXPECT_EQ(x.find("count<&"), std::string::npos) << "unescaped";
  EXPECT_NE(x.find("<failure type=\"missing\" message=\"in A, not in B\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("<skipped message=\"in B, not in A\"/>"), std::string::npos) << x;
  EXPECT_NE(x.find("<property name=\"ratio\" value=\"1.2\"/>"), std::string::npos) << x;
  std::string why;
  EXPECT_TRUE(fails_check(c, &why));  // the exit status agrees with the failures
}

TEST(Compare, FindsARegressionInOverheadNotInBaseline) {
  std::vector<double> base(10, 100.0);
  std::vector<double> t1, t2;
  for (int i = 0; i < 10; ++i) {
    t1.push_back(200 + i);  // overhead ~100
    t2.push_back(300 + i);  // overhead ~200
  }
  RunResult a = run_with({bench("ftrace", base, t1), bench("none", base, base)});
  RunResult b = run_with({bench("ftrace", base, t2), bench("none", base, base)});
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, b, 0.05, 0.05, &c).is_ok());
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].what, "overhead");
  EXPECT_EQ(c.rows[0].verdict, "regression");
  EXPECT_NEAR(*c.rows[0].ratio, 2.0, 0.05);
  EXPECT_EQ(c.rows[1].what, "baseline");
  EXPECT_EQ(c.rows[1].verdict, "same");
  ASSERT_EQ(c.warnings.size(), 1u);  // only: one run a side, p understates run-to-run noise
  EXPECT_NE(c.warnings[0].find("one run on a side"), std::string::npos) << c.warnings[0];
}

TEST(Compare, SmallChangesBelowThresholdAreSame) {
  std::vector<double> base(10, 100.0), t1, t2;
  for (int i = 0; i < 10; ++i) {
    t1.push_back(200 + i * 0.01);
    t2.push_back(202 + i * 0.01);  // significant, but 2% < 5%
  }
  CompareResult c;
  ASSERT_TRUE(
      compare_runs(run_with({bench("ebpf", base, t1)}), run_with({bench("ebpf", base, t2)}), 0.05, 0.05, &c).is_ok());
  EXPECT_EQ(c.rows[0].verdict, "same");
  // p is small: the table says that the threshold decided.
  EXPECT_TRUE(c.rows[0].threshold_decided);
  EXPECT_NE(compare_table(c).find("same (p < 0.05, but the change is below the 5% threshold)"), std::string::npos)
      << compare_table(c);
  CompareResult not_significant;
  ASSERT_TRUE(compare_runs(run_with({bench("ebpf", base, t1)}), run_with({bench("ebpf", base, t1)}), 0.05, 0.05,
                           &not_significant)
                  .is_ok());
  EXPECT_FALSE(not_significant.rows[0].threshold_decided);
}

TEST(Compare, RefusesEmulatedAgainstHost) {
  CompareResult c;
  Status s = compare_runs(run_with({}, true), run_with({}, false), 0.05, 0.05, &c);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("emulated"), std::string::npos);
}

TEST(Compare, MissingAndFailedBenchmarksAreReported) {
  std::vector<double> base(9, 1.0);
  BenchmarkResult failed = bench("perf", base, base);
  failed.status = "error";
  RunResult a = run_with({bench("ftrace", base, base), failed});
  RunResult b = run_with({bench("ebpf", base, base), bench("perf", base, base)});
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, b, 0.05, 0.05, &c).is_ok());
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].verdict, "missing");  // ftrace: not in B
  EXPECT_EQ(c.rows[0].side, "B");
  EXPECT_EQ(c.rows[1].verdict, "failed");  // perf: failed in every run of A
  EXPECT_EQ(c.rows[1].side, "A");
  EXPECT_EQ(c.rows[2].verdict, "missing");  // ebpf: not in A
  EXPECT_EQ(c.rows[2].side, "A");
  // Only what A had and B lost fails the check: ftrace.
  std::string why;
  EXPECT_TRUE(fails_check(c, &why));
  EXPECT_NE(why.find("ftrace/getpid"), std::string::npos) << why;
  EXPECT_EQ(why.find("perf"), std::string::npos) << why;
}

TEST(Compare, FailOnRegressionFailsWhenABenchmarkFailedInB) {
  std::vector<double> base(9, 1.0);
  BenchmarkResult failed = bench("ftrace", base, base);
  failed.status = "error";
  failed.error = "tracer recorded zero events";
  RunResult a = run_with({bench("ftrace", base, base)});
  RunResult b = run_with({failed});
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, b, 0.05, 0.05, &c).is_ok());
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].verdict, "failed");
  EXPECT_NE(c.rows[0].detail.find("recorded zero events"), std::string::npos);
  std::string why;
  EXPECT_TRUE(fails_check(c, &why));
  EXPECT_NE(why.find("failed in every run of B"), std::string::npos) << why;
}

TEST(Compare, FailOnRegressionFailsWhenBHasNoBenchmarks) {
  std::vector<double> base(9, 1.0);
  RunResult a = run_with({bench("ftrace", base, base)});
  RunResult b = run_with({});
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, b, 0.05, 0.05, &c).is_ok());
  std::string why;
  EXPECT_TRUE(fails_check(c, &why));
  EXPECT_NE(why.find("B has no benchmarks"), std::string::npos) << why;
}

TEST(Compare, AnOkBenchmarkWithoutAFigureIsFailedNotANumber) {
  std::vector<double> base(9, 1.0);
  BenchmarkResult nofig = bench("ftrace", base, base);
  nofig.overhead_cycles.reset();
  RunResult a = run_with({bench("ftrace", base, base)});
  RunResult b = run_with({nofig});
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, b, 0.05, 0.05, &c).is_ok());
  EXPECT_EQ(c.rows[0].verdict, "failed");
}

TEST(Compare, SameRunsDoNotFailTheCheck) {
  std::vector<double> base(9, 1.0);
  RunResult a = run_with({bench("ftrace", base, base)});
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, a, 0.05, 0.05, &c).is_ok());
  std::string why;
  EXPECT_FALSE(fails_check(c, &why)) << why;
}

TEST(Compare, ChecksWhatItReadsAndNamesTheFileAndField) {
  std::vector<double> base(9, 1.0);
  RunResult ok = run_with({bench("ftrace", base, base)});
  EXPECT_TRUE(check_comparable(ok, "a.json").is_ok());
  for (double hz : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    RunResult r = ok;
    r.context.tsc_hz = hz;
    Status s = check_comparable(r, "a.json");
    ASSERT_FALSE(s.is_ok()) << hz;
    EXPECT_NE(s.message().find("a.json: context.tsc.hz"), std::string::npos) << s.message();
  }
  RunResult huge = run_with({bench("ftrace", base, std::vector<double>(9, 1e308))});
  Status s = check_comparable(huge, "b.json");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("traced.repetition_medians_cycles"), std::string::npos) << s.message();
  RunResult twice = run_with({bench("ftrace", base, base), bench("ftrace", base, base)});
  EXPECT_NE(check_comparable(twice, "c.json").message().find("appears twice"), std::string::npos);
}

TEST(Compare, PartialRunsAreSaidToBePartial) {
  std::vector<double> base(9, 1.0);
  RunResult a = run_with({bench("ftrace", base, base)});
  RunResult b = a;
  b.context.complete = false;
  b.context.run_id = "partial-run";
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, b, 0.05, 0.05, &c).is_ok());
  bool said = false;
  for (const auto& w : c.warnings) said |= w.find("B: run partial-run is partial") != std::string::npos;
  EXPECT_TRUE(said);
}

// Overhead series of one run: `reps` repetitions around `ns` (tsc 1 GHz).
BenchmarkResult overhead_bench(double ns, int reps = 6) {
  std::vector<double> base(reps, 100.0), traced;
  for (int i = 0; i < reps; ++i) traced.push_back(100.0 + ns + i * 0.5);
  return bench("ftrace", base, traced);
}

TEST(ComparePooled, PoolsTheRepetitionsOfEveryRunOnASide) {
  RunResult a1 = run_with({overhead_bench(100)}), a2 = run_with({overhead_bench(101)}),
            a3 = run_with({overhead_bench(99)});
  RunResult b1 = run_with({overhead_bench(150)}), b2 = run_with({overhead_bench(152)}),
            b3 = run_with({overhead_bench(149)});
  CompareResult c;
  ASSERT_TRUE(compare_runs({&a1, &a2, &a3}, {&b1, &b2, &b3}, 0.05, 0.05, &c).is_ok());
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].a_runs, 3u);
  EXPECT_EQ(c.rows[0].b_runs, 3u);
  EXPECT_EQ(c.rows[0].a_n, 18u);
  EXPECT_EQ(c.rows[0].b_n, 18u);
  EXPECT_EQ(c.rows[0].verdict, "regression");
  EXPECT_NEAR(*c.rows[0].ratio, 1.5, 0.03);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
  // Two runs on a side: said, the test has about one degree of freedom.
  CompareResult two;
  ASSERT_TRUE(compare_runs({&a1, &a2, &a3}, {&b1, &b2}, 0.05, 0.05, &two).is_ok());
  ASSERT_EQ(two.warnings.size(), 1u);
  EXPECT_NE(two.warnings[0].find("two runs on a side"), std::string::npos) << two.warnings[0];
}

TEST(ComparePooled, ARunInTheHostsSlowModeIsNotARegressionOnceRunsArePooled) {
  // The host alternates between a fast and a slow mode for minutes: one run
  // of A and one of B in different modes look like a 30% regression; three
  // runs a side, interleaved in time, sample the modes alike.
  RunResult a_fast = run_with({overhead_bench(100)}), a_fast2 = run_with({overhead_bench(100)});
  RunResult a_slow = run_with({overhead_bench(130)});
  RunResult b_slow = run_with({overhead_bench(130)}), b_fast = run_with({overhead_bench(100)});
  RunResult b_fast2 = run_with({overhead_bench(100)});
  CompareResult one;
  ASSERT_TRUE(compare_runs(a_fast, b_slow, 0.05, 0.05, &one).is_ok());
  EXPECT_EQ(one.rows[0].verdict, "regression");
  bool warned = false;
  for (const auto& w : one.warnings) warned |= w.find("one run on a side") != std::string::npos;
  EXPECT_TRUE(warned);
  CompareResult pooled;
  ASSERT_TRUE(compare_runs({&a_fast, &a_slow, &a_fast2}, {&b_slow, &b_fast, &b_fast2}, 0.05, 0.05, &pooled).is_ok());
  // Not a regression; and with runs 30% apart, three a side could not have
  // seen 5%: inconclusive, not same.
  EXPECT_EQ(pooled.rows[0].verdict, "inconclusive");
  EXPECT_GT(*pooled.rows[0].mde80, 0.05);
  EXPECT_NEAR(*pooled.rows[0].ratio, 1.0, 0.01);
}

TEST(ComparePooled, WithSeveralRunsASideTheRunIsTheUnitOfTheTest) {
  // A/A: three runs a side whose levels differ by a few percent from run to
  // run (the machine's state), each run's repetitions tight.  Pooled, the
  // repetitions of B sit mostly above A's and a U test calls it a regression;
  // the runs' medians say it is run-to-run noise.
  RunResult a1 = run_with({overhead_bench(100)}), a2 = run_with({overhead_bench(96)}),
            a3 = run_with({overhead_bench(99)});
  RunResult b1 = run_with({overhead_bench(105)}), b2 = run_with({overhead_bench(98)}),
            b3 = run_with({overhead_bench(106)});
  std::vector<double> pa, pb;
  for (const RunResult* r : {&a1, &a2, &a3})
    for (std::size_t i = 0; i < 6; ++i) pa.push_back(r->benchmarks[0].traced.repetition_medians[i] - 100);
  for (const RunResult* r : {&b1, &b2, &b3})
    for (std::size_t i = 0; i < 6; ++i) pb.push_back(r->benchmarks[0].traced.repetition_medians[i] - 100);
  ASSERT_LT(mann_whitney_u(pa, pb).p_value, 0.05);  // what pooling would have said
  CompareResult c;
  ASSERT_TRUE(compare_runs({&a1, &a2, &a3}, {&b1, &b2, &b3}, 0.05, 0.05, &c).is_ok());
  EXPECT_EQ(c.rows[0].method, "runs");
  EXPECT_GT(c.rows[0].p_value, 0.05);
  // Runs that differ by up to 10% leave three a side blind to 5%.
  EXPECT_EQ(c.rows[0].verdict, "inconclusive");
  // The medians are the median run's: A 99 (+1.25 the repetitions' spread), B 105.
  EXPECT_NEAR(c.rows[0].a_median, 100.25, 1e-9);
  EXPECT_NEAR(c.rows[0].b_median, 106.25, 1e-9);

  // A real +10% over the same run-to-run noise is found.
  RunResult c1 = run_with({overhead_bench(110)}), c2 = run_with({overhead_bench(107)}),
            c3 = run_with({overhead_bench(109)});
  CompareResult d;
  ASSERT_TRUE(compare_runs({&a1, &a2, &a3}, {&c1, &c2, &c3}, 0.05, 0.05, &d).is_ok());
  EXPECT_EQ(d.rows[0].method, "runs");
  EXPECT_LT(d.rows[0].p_value, 0.05);
  EXPECT_EQ(d.rows[0].verdict, "regression");
  EXPECT_EQ(d.rows[0].a_n, 18u);  // repetitions still counted
}

TEST(ComparePooled, OneRunOnASideTestsTheRepetitions) {
  RunResult a1 = run_with({overhead_bench(100)}), b1 = run_with({overhead_bench(150)}),
            b2 = run_with({overhead_bench(150)});
  CompareResult c;
  ASSERT_TRUE(compare_runs({&a1}, {&b1, &b2}, 0.05, 0.05, &c).is_ok());
  EXPECT_EQ(c.rows[0].method, "repetitions");
  EXPECT_EQ(c.rows[0].verdict, "regression");
  EXPECT_NE(compare_table(c).find(" reps "), std::string::npos) << compare_table(c);
  EXPECT_NE(compare_table(c).find("%  regression"), std::string::npos) << compare_table(c);
}

TEST(ComparePooled, EachRunIsConvertedAtItsOwnTscRate) {
  RunResult a1 = run_with({overhead_bench(100)});
  RunResult a2 = run_with({overhead_bench(200)});
  a2.context.tsc_hz = 2e9;  // 200 cycles = 100 ns
  RunResult b = run_with({overhead_bench(100)});
  CompareResult c;
  ASSERT_TRUE(compare_runs({&a1, &a2}, {&b}, 0.05, 0.05, &c).is_ok());
  EXPECT_NEAR(c.rows[0].a_median, c.rows[0].b_median, 2.0);
  EXPECT_EQ(c.rows[0].verdict, "same");
}

TEST(ComparePooled, RefusesAnEmulatedRunAnywhereAmongHostRuns) {
  RunResult h1 = run_with({}), h2 = run_with({}), e = run_with({}, true);
  e.context.run_id = "tcg-run";
  CompareResult c;
  Status s = compare_runs({&h1, &e}, {&h2}, 0.05, 0.05, &c);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("tcg-run"), std::string::npos) << s.message();
}

TEST(ComparePooled, ABenchmarkThatFailedInSomeRunsIsComparedOnTheOthersAndSaysSo) {
  BenchmarkResult failed = overhead_bench(100);
  failed.status = "error";
  RunResult a1 = run_with({overhead_bench(100)}), a2 = run_with({failed});
  RunResult b1 = run_with({overhead_bench(100)}), b2 = run_with({overhead_bench(100)});
  CompareResult c;
  ASSERT_TRUE(compare_runs({&a1, &a2}, {&b1, &b2}, 0.05, 0.05, &c).is_ok());
  EXPECT_EQ(c.rows[0].a_runs, 1u);
  EXPECT_EQ(c.rows[0].verdict, "same");
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings[0].find("failed in 1 of the 2 runs of A that have it"), std::string::npos) << c.warnings[0];
}

TEST(ComparePooled, ABenchmarkAbsentFromSomeRunsIsNotCalledOkInFewOfThem) {
  // Seven runs of A, only one of them with ftrace's benchmark (the others
  // ran other workloads): no warning, the row says in how many runs it is.
  RunResult a1 = run_with({overhead_bench(100)});
  std::vector<RunResult> others(6, run_with({}));
  RunResult b1 = run_with({overhead_bench(100)}), b2 = run_with({overhead_bench(101)}),
            b3 = run_with({overhead_bench(99)});
  std::vector<const RunResult*> a = {&a1};
  for (const auto& r : others) a.push_back(&r);
  CompareResult c;
  ASSERT_TRUE(compare_runs(a, {&b1, &b2, &b3}, 0.05, 0.05, &c).is_ok());
  for (const auto& w : c.warnings) {
    EXPECT_EQ(w.find("of the 7 runs"), std::string::npos) << w;
    EXPECT_EQ(w.find("failed in"), std::string::npos) << w;
  }
  EXPECT_EQ(c.rows[0].detail, "in 1 of the 7 runs of A");
}

}  // namespace
}  // namespace tracebench
