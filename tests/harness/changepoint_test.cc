#include "tracebench/changepoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

namespace tracebench {
namespace {

std::vector<double> noisy(std::mt19937_64& rng, const std::vector<std::pair<std::size_t, double>>& segments,
                          double sd) {
  std::normal_distribution<double> noise(0, sd);
  std::vector<double> v;
  for (const auto& [n, level] : segments)
    for (std::size_t i = 0; i < n; ++i) v.push_back(level + noise(rng));
  return v;
}

TEST(ChangePoints, FindsAKnownShiftWithItsSize) {
  std::mt19937_64 rng(3);
  // 30 runs at 400 ns, then 20 at 440 (+10%), noise 8 ns.
  auto v = noisy(rng, {{30, 400}, {20, 440}}, 8);
  auto c = change_points(v);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(static_cast<double>(c[0].index), 30, 1);
  EXPECT_NEAR(c[0].relative_change, 0.10, 0.02);
  EXPECT_NEAR(c[0].before_median, 400, 4);
  EXPECT_NEAR(c[0].after_median, 440, 4);
  EXPECT_LE(c[0].p_value, 0.05);
  // The same series, the same answer.
  auto again = change_points(v);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].index, c[0].index);
  EXPECT_EQ(again[0].p_value, c[0].p_value);
}

TEST(ChangePoints, FindsTwoShiftsInTimeOrder) {
  std::mt19937_64 rng(4);
  auto v = noisy(rng, {{25, 1000}, {25, 1100}, {25, 950}}, 15);
  auto c = change_points(v);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NEAR(static_cast<double>(c[0].index), 25, 1);
  EXPECT_NEAR(static_cast<double>(c[1].index), 50, 1);
  EXPECT_GT(c[0].relative_change, 0.08);
  EXPECT_LT(c[1].relative_change, -0.10);
}

TEST(ChangePoints, PureNoiseRarelyRaisesAnAlarm) {
  // 200 series of 40 points without a change: at alpha 0.05 about one in
  // twenty may show a (false) change; allow some slack, not a habit.
  int alarms = 0;
  for (int s = 0; s < 200; ++s) {
    std::mt19937_64 rng(1000 + s);
    ChangePointOptions o;
    o.seed = 77 + s;
    if (!change_points(noisy(rng, {{40, 500}}, 10), o).empty()) ++alarms;
  }
  std::printf("false alarms on pure noise: %d of 200 series (alpha 0.05)\n", alarms);
  EXPECT_LE(alarms, 20) << alarms << " of 200 noise series flagged";
}

TEST(ChangePoints, ShortSeriesAndSmallChangesAreNotReported) {
  EXPECT_TRUE(change_points({}).empty());
  EXPECT_TRUE(change_points({1, 2, 3, 100, 100}).empty()) << "fewer than two segments of three points";
  std::mt19937_64 rng(5);
  auto v = noisy(rng, {{30, 400}, {30, 404}}, 0.5);  // a real +1% shift
  EXPECT_EQ(change_points(v).size(), 1u);
  ChangePointOptions o;
  o.min_change = 0.05;
  EXPECT_TRUE(change_points(v, o).empty()) << "below --min-change";
}

}  // namespace
}  // namespace tracebench
