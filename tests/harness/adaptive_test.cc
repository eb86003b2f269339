#include "tracebench/adaptive.h"

#include <gtest/gtest.h>

#include "tracebench/stats.h"

namespace tracebench {
namespace {

TEST(Adaptive, SixRepetitionsAreTheFewestWhoseIntervalCovers95) {
  std::vector<double> five = {1, 2, 3, 4, 5}, six = {1, 2, 3, 4, 5, 6};
  EXPECT_LT(median_ci(five).confidence, 0.95);
  EXPECT_GE(median_ci(six).confidence, 0.95);
  EXPECT_EQ(kMinRepetitionsForInterval, 6);
}

TEST(Adaptive, StopsOnceTheIntervalIsWithinTwoPercent) {
  StopRule rule{10, 0.02, 0};
  RepetitionStop stop;
  std::vector<double> tight = {1000, 1001, 999, 1002, 998, 1000};  // [998, 1002]: +-2 of 1000, target 20
  EXPECT_FALSE(should_stop({1000, 1001, 999, 1002, 998}, 5, rule, &stop)) << "five cannot give the interval";
  ASSERT_TRUE(should_stop(tight, 6, rule, &stop));
  EXPECT_EQ(stop.rule, "interval");
  EXPECT_NEAR(stop.target_cycles, 20, 1e-6);
  EXPECT_NEAR(stop.half_width_cycles, 2, 1e-6);
  EXPECT_EQ(stop.cap, 10);
  // A loose one goes on, then stops at the cap and says so.
  std::vector<double> loose = {1000, 1100, 900, 1050, 950, 1000};
  EXPECT_FALSE(should_stop(loose, 6, rule, &stop));
  loose.insert(loose.end(), {1080, 920, 1010, 990});
  ASSERT_TRUE(should_stop(loose, 10, rule, &stop));
  EXPECT_EQ(stop.rule, "cap");
  EXPECT_GT(stop.half_width_cycles, stop.target_cycles);
}

TEST(Adaptive, TwoFloorsPerEventBoundTheTargetOfANearZeroFigure) {
  // The untraced row: overhead ~0, 2% of it is ~0; two floors per event is
  // the target then.
  std::vector<double> aa = {-0.4, 0.3, 0.1, -0.2, 0.2, 0.0};
  RepetitionStop stop;
  EXPECT_FALSE(should_stop(aa, 6, StopRule{10, 0.02, 0.1}, &stop));  // target 0.2 < 0.4
  ASSERT_TRUE(should_stop(aa, 6, StopRule{10, 0.02, 0.25}, &stop));  // target 0.5
  EXPECT_EQ(stop.rule, "interval");
  EXPECT_NEAR(stop.target_cycles, 0.5, 1e-9);
}

// A half-width equal to the target in exact arithmetic stops the
// repetitions even when its doubles come out an ulp over (25.2 - 4.4 is
// 20.800000000000004 against two floors of 10.4); seen in a quick run whose
// clock quantized the samples.
TEST(Adaptive, AnIntervalAtTheTargetUpToRoundingStops) {
  std::vector<double> v = {4.4, 4.4, 4.4, 4.4, 4.4, 4.4 + 20.8};
  RepetitionStop stop;
  ASSERT_TRUE(should_stop(v, 6, StopRule{10, 0.0001, 10.4}, &stop));
  EXPECT_EQ(stop.rule, "interval");
  EXPECT_GT(stop.half_width_cycles, stop.target_cycles);  // by rounding alone
  EXPECT_FALSE(should_stop(v, 6, StopRule{10, 0.0001, 10.39}, &stop)) << "a real excess still goes on";
}

TEST(Adaptive, NoTargetRunsEveryRepetition) {
  std::vector<double> tight(6, 1000.0);
  RepetitionStop stop;
  EXPECT_FALSE(should_stop(tight, 6, StopRule{10, 0, 0}, &stop));
  tight.resize(10, 1000.0);
  ASSERT_TRUE(should_stop(tight, 10, StopRule{10, 0, 0}, &stop));
  EXPECT_EQ(stop.rule, "fixed");
  EXPECT_EQ(stop.target_cycles, 0);
}

TEST(Adaptive, DroppedRepetitionsDoNotCountTowardTheMinimum) {
  // Eight ran, five counted: no interval yet, not at the cap.
  RepetitionStop stop;
  EXPECT_FALSE(should_stop({1000, 1000, 1000, 1000, 1000}, 8, StopRule{10, 0.02, 0}, &stop));
}

}  // namespace
}  // namespace tracebench
