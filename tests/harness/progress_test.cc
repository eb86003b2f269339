#include "tracebench/progress.h"

#include <gtest/gtest.h>

namespace tracebench {
namespace {

TEST(Progress, NoEstimateBeforeTheFirstBenchmarkFinished) {
  EXPECT_FALSE(time_left_s(0, 0, 12).has_value());
  EXPECT_FALSE(time_left_s(3.5, 0, 12).has_value());
  EXPECT_EQ(progress_line(1, 12, 0.2, std::nullopt, "none/getpid"), "[1/12 0:00 elapsed] none/getpid");
}

TEST(Progress, TimeLeftIsTheMeanSoFarTimesWhatIsLeft) {
  // Three benchmarks took 42 s: 14 s each, nine to go.
  ASSERT_TRUE(time_left_s(42, 3, 12).has_value());
  EXPECT_DOUBLE_EQ(*time_left_s(42, 3, 12), 126);
  EXPECT_DOUBLE_EQ(*time_left_s(42, 12, 12), 0);
  EXPECT_EQ(progress_line(4, 12, 42, 126, "ebpf/getpid/count"), "[4/12 0:42 elapsed, ~2:06 left] ebpf/getpid/count");
  // Nonsense in, no estimate out.
  EXPECT_FALSE(time_left_s(42, 13, 12).has_value());
  EXPECT_FALSE(time_left_s(-1, 3, 12).has_value());
}

TEST(Progress, ClockText) {
  EXPECT_EQ(clock_text(0), "0:00");
  EXPECT_EQ(clock_text(59.6), "1:00");
  EXPECT_EQ(clock_text(725), "12:05");
  EXPECT_EQ(clock_text(3723), "1:02:03");
  EXPECT_EQ(clock_text(-5), "0:00");
}

}  // namespace
}  // namespace tracebench
