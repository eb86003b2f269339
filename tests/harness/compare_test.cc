#include "tracebench/compare.h"

#include <gtest/gtest.h>

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

BenchmarkResult bench(const std::string& tracer, std::vector<double> base, std::vector<double> traced) {
  BenchmarkResult b;
  b.name = tracer + "/getpid/count/payload:0/threads:1";
  b.tracer = tracer;
  b.baseline.repetition_medians = std::move(base);
  b.traced.repetition_medians = std::move(traced);
  return b;
}

RunResult run_with(std::vector<BenchmarkResult> bs, bool emulated = false) {
  RunResult r;
  r.context.tsc_hz = 1e9;  // 1 cycle = 1 ns
  r.context.emulated = emulated;
  r.benchmarks = std::move(bs);
  return r;
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
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Compare, SmallChangesBelowThresholdAreSame) {
  std::vector<double> base(10, 100.0), t1, t2;
  for (int i = 0; i < 10; ++i) {
    t1.push_back(200 + i * 0.01);
    t2.push_back(202 + i * 0.01);  // significant, but 2% < 5%
  }
  CompareResult c;
  ASSERT_TRUE(compare_runs(run_with({bench("ebpf", base, t1)}), run_with({bench("ebpf", base, t2)}), 0.05, 0.05, &c)
                  .is_ok());
  EXPECT_EQ(c.rows[0].verdict, "same");
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
  for (const auto& r : c.rows) EXPECT_EQ(r.verdict, "missing") << r.benchmark;
}

}  // namespace
}  // namespace tracebench
