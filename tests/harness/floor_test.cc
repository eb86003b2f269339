#include <gtest/gtest.h>

#include "bench/workload.h"
#include "tracebench/clock.h"
#include "tracebench/runner.h"
#include "tracebench/system.h"

namespace tracebench {
namespace {

TEST(Clock, SerializedReadsAreMonotonicOnOneCpu) {
  ASSERT_TRUE(pin_current_thread(default_measured_cpu()).is_ok());
  unsigned aux = 0;
  std::uint64_t prev = tsc_begin();
  for (int i = 0; i < 1000; ++i) {
    std::uint64_t t = tsc_end(&aux);
    ASSERT_GE(t, prev);
    prev = t;
  }
  EXPECT_EQ(static_cast<int>(aux & 0xfff), default_measured_cpu());
}

TEST(Clock, TscFrequencyIsPlausibleAndCrossChecked) {
  TscInfo t = probe_tsc();
  EXPECT_GT(t.hz, 100e6);
  EXPECT_LT(t.hz, 10e9);
  // Whatever the source, calibration against CLOCK_MONOTONIC_RAW agrees.
  EXPECT_NEAR(t.calibrated_hz / t.hz, 1.0, 0.02);
}

TEST(Floor, IsSmallAndStable) {
  double a = 0, mad_a = 0, b = 0, mad_b = 0;
  calibrate_floor(&a, &mad_a);
  calibrate_floor(&b, &mad_b);
  EXPECT_GT(a, 0);
  EXPECT_LT(a, 2000);  // an empty region, even in a VM, is far below this
  EXPECT_NEAR(a, b, std::max(0.2 * a, 30.0));
}

TEST(Floor, EmptyLoopNeedsBatchingBecauseItIsCheaperThanTheFloor) {
  double floor = 0, mad = 0;
  calibrate_floor(&floor, &mad);
  const Workload* w = find_workload("empty");
  ASSERT_NE(w, nullptr);
  std::unique_ptr<WorkloadState> st;
  ASSERT_TRUE(w->setup({}, &st).is_ok());
  // A batch of 10000 events per sample: per-event cost is far below the floor.
  unsigned aux;
  std::vector<double> per_event;
  for (int i = 0; i < 50; ++i) {
    std::uint64_t t0 = tsc_begin();
    st->fire(10000);
    std::uint64_t t1 = tsc_end(&aux);
    per_event.push_back((static_cast<double>(t1 - t0) - floor) / 10000);
  }
  std::sort(per_event.begin(), per_event.end());
  EXPECT_LT(per_event[25], floor);
  EXPECT_GT(per_event[25], 0);
}

}  // namespace
}  // namespace tracebench
