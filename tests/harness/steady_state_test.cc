// Steady state (tracebench/steady_state.h): level shifts among repetitions
// and stationarity of warm-up blocks, on series with a known answer; and the
// sample book leaving a leading level out whole.
#include "tracebench/steady_state.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tracebench/sample_book.h"

namespace tracebench {
namespace {

// The LTTng-UST 64-byte case seen on a bhyve-like host: four repetitions at
// the first pass of the ring buffer, then the steady cost.
TEST(LevelShift, AWarmUpInTheRepetitionsIsFoundWhereItEnds) {
  const std::vector<double> x = {371, 388, 368, 376, 146, 147};
  const auto s = find_level_shift(x, ShiftRule{});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 4u);
  EXPECT_NEAR(s->before, 373.5, 1e-9);
  EXPECT_NEAR(s->after, 146.5, 1e-9);
}

TEST(LevelShift, ARiseIsALevelShiftToo) {
  const auto s = find_level_shift({100, 101, 99, 100, 150, 152, 149}, ShiftRule{});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 4u);
}

TEST(LevelShift, AGradualWarmUpIsCutWhereTheLastPlateauBegins) {
  const auto s = find_level_shift({400, 400, 300, 300, 150, 150, 151}, ShiftRule{});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 4u);
}

TEST(LevelShift, NoiseAroundOneLevelIsNoShift) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(200, 6);  // 3% per repetition
  int found = 0;
  for (int t = 0; t < 2000; ++t) {
    std::vector<double> x;
    for (int i = 0; i < 10; ++i) x.push_back(noise(rng));
    found += find_level_shift(x, ShiftRule{}).has_value();
  }
  EXPECT_LE(found, 2) << "of 2000 series of ten repetitions with 3% noise";
}

TEST(LevelShift, AStepSmallerThanTenPercentIsNoShift) {
  EXPECT_FALSE(find_level_shift({100, 100.5, 100, 100.2, 108, 108.3, 108.1}, ShiftRule{}));
}

TEST(LevelShift, AStepWithinTheLevelsOwnSpreadIsNoShift) {
  // Apart and 15% up, but each level spreads over 10%: two noisy stretches.
  EXPECT_FALSE(find_level_shift({90, 100, 92, 99, 111, 121, 113}, ShiftRule{}));
}

TEST(LevelShift, NearZeroOverheadsAreJudgedAgainstTheFloor) {
  ShiftRule rule;
  rule.min_absolute = 4;  // two floors per event
  EXPECT_FALSE(find_level_shift({0.5, 0.6, 0.4, -1.5, -1.6, -1.4}, rule)) << "apart, but under two floors";
  EXPECT_TRUE(find_level_shift({0.5, 0.6, 0.4, 8.5, 8.6, 8.4}, rule));
}

TEST(LevelShift, EachLevelNeedsTwoPoints) {
  EXPECT_FALSE(find_level_shift({400, 150, 151, 150}, ShiftRule{})) << "one point is an outlier, not a level";
  EXPECT_FALSE(find_level_shift({150, 151}, ShiftRule{}));
}

TEST(Stationary, TheLastThreeBlocksMustAgree) {
  const ShiftRule rule;
  EXPECT_FALSE(stationary({371, 371}, rule)) << "two blocks are not three";
  EXPECT_FALSE(stationary({371, 250, 147}, rule));
  EXPECT_FALSE(stationary({371, 371, 250, 147, 146}, rule));
  EXPECT_TRUE(stationary({371, 371, 250, 147, 146, 147}, rule));
  EXPECT_TRUE(stationary({371, 371, 371}, rule)) << "a plateau is stationary: the buffer's first pass is required "
                                                    "apart (bench_run.h)";
}

TEST(Stationary, ANoisyLevelIsStationaryWhenItStaysWhereItWas) {
  const ShiftRule rule;
  // perf's getpid blocks on a busy VM: +-12% from block to block.
  const std::vector<double> noisy = {2687, 2825, 3025, 2574, 2418, 3051};
  EXPECT_FALSE(stationary({2687, 2825, 3025, 2574, 2418}, rule)) << "five blocks: no two windows yet";
  EXPECT_TRUE(stationary(noisy, rule));
  EXPECT_FALSE(stationary({400, 380, 360, 340, 320, 300}, rule)) << "still falling: 16% between the windows";
  EXPECT_FALSE(stationary({371, 371, 371, 250, 147, 147}, rule));
}

TEST(Stationary, NearZeroBlocksAreJudgedAgainstTheFloor) {
  ShiftRule rule;
  rule.min_absolute = 2;
  EXPECT_TRUE(stationary({0.1, -0.5, 0.9}, rule));
  EXPECT_FALSE(stationary({0.1, -0.5, 3.0}, rule));
}

// A block of `n` samples all at `cycles` per event.
TimedBlock block(double cycles, std::size_t n = 100) {
  TimedBlock b;
  b.per_event.assign(n, cycles);
  b.migrated.assign(n, 0);
  b.events = n;
  return b;
}

TEST(SampleBook, LeavesALeadingLevelOutOfEveryFigureAndRow) {
  SampleBook book(1e9, 1);
  const std::vector<double> traced = {400, 400, 400, 150, 150, 150, 150};
  for (int rep = 0; rep < static_cast<int>(traced.size()); ++rep) {
    book.add_block(false, rep, block(100));
    book.add_block(true, rep, block(traced[static_cast<std::size_t>(rep)]));
    book.end_repetition();
  }
  const auto shift = find_level_shift(book.overheads(), ShiftRule{});
  ASSERT_TRUE(shift);
  ASSERT_EQ(shift->index, 3u);
  book.leave_out_before(shift->index);
  EXPECT_EQ(book.overheads(), (std::vector<double>{50, 50, 50, 50}));
  EXPECT_EQ(book.left_out_overheads(), (std::vector<double>{300, 300, 300}));
  EXPECT_EQ(book.repetitions_kept(), 4u);
  BenchmarkResult r;
  ASSERT_EQ(book.finish(1e9, {}, &r), "");
  EXPECT_DOUBLE_EQ(r.overhead_cycles->median, 50);
  EXPECT_DOUBLE_EQ(r.traced.cycles.p50, 150);
  EXPECT_DOUBLE_EQ(r.traced.cycles.max, 150) << "no sample of the left-out level in the distribution";
  EXPECT_EQ(r.traced.samples, 400u);
  EXPECT_EQ(r.traced.repetition_medians.size(), 4u);
  EXPECT_EQ(*r.dropped_repetitions, 0u);
  const auto rows = book.take_rows();
  EXPECT_EQ(rows.size(), 800u);
  for (const auto& row : rows) EXPECT_GE(row.repetition, 3);
}

}  // namespace
}  // namespace tracebench
