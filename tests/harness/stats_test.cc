#include "tracebench/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace tracebench {
namespace {

TEST(Percentile, InterpolatesInPercentNotFraction) {
  std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 50), 5.5);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 90), 9.1);  // rank 8.1
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 10);
  // 0.90 means 0.9 percent, not the 90th percentile.
  EXPECT_NEAR(percentile_sorted(v, 0.90), 1.081, 1e-12);
}

TEST(Summarize, KnownValues) {
  Summary s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);  // sample stddev
  EXPECT_DOUBLE_EQ(s.p50, 4.5);
  // |x - 4.5| = 2.5 .5 .5 .5 .5 .5 2.5 4.5 -> median 0.5
  EXPECT_DOUBLE_EQ(s.mad, 0.5);
  EXPECT_NEAR(s.cv, s.stddev / 5, 1e-12);
}

TEST(Summarize, EmptyAndSingle) {
  EXPECT_EQ(summarize({}).n, 0u);
  Summary one = summarize({42});
  EXPECT_DOUBLE_EQ(one.p50, 42);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
}

TEST(MedianCI, OrderStatisticsCoverage) {
  // n = 10: [x(1), x(8)] covers 1 - 2*(1+10)/1024 = 0.978515625; [x(2), x(7)] 0.890625 < 0.95.
  std::vector<double> v{10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  MedianCI ci = median_ci(v, 0.95);
  EXPECT_DOUBLE_EQ(ci.median, 5.5);
  EXPECT_DOUBLE_EQ(ci.low, 2);
  EXPECT_DOUBLE_EQ(ci.high, 9);
  EXPECT_NEAR(ci.confidence, 0.978515625, 1e-12);
}

TEST(MedianCI, TooFewValuesSaysWhatItCovers) {
  MedianCI ci = median_ci({3, 1, 2}, 0.95);
  EXPECT_DOUBLE_EQ(ci.low, 1);
  EXPECT_DOUBLE_EQ(ci.high, 3);
  EXPECT_NEAR(ci.confidence, 0.75, 1e-12);  // 1 - 2/8
}

TEST(MedianCI, CoversTrueMedianMostOfTheTime) {
  std::mt19937 rng(7);
  std::exponential_distribution<double> d(1.0);
  const double true_median = std::log(2.0);
  int covered = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> v(25);
    for (double& x : v) x = d(rng);
    MedianCI ci = median_ci(v);
    covered += ci.low <= true_median && true_median <= ci.high;
  }
  EXPECT_GE(covered, 0.92 * 400);
}

TEST(FlagDisturbed, FlagsInterruptSizedOutliersOnly) {
  std::vector<double> v(100, 100.0);
  for (int i = 0; i < 100; ++i) v[i] += i % 3;
  v[10] = 5000;  // an interrupt landed here
  v[20] = 110;   // ordinary jitter
  auto f = flag_disturbed(v, 1000);
  EXPECT_TRUE(f[10]);
  EXPECT_FALSE(f[20]);
  int n = 0;
  for (bool b : f) n += b;
  EXPECT_EQ(n, 1);
}

}  // namespace
}  // namespace tracebench
