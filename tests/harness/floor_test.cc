#include <gtest/gtest.h>

#include <filesystem>

#include "tracebench/workload.h"
#include "tracebench/clock.h"
#include "tracebench/clock_check.h"
#include "tracebench/runner.h"
#include "tracebench/system.h"

namespace tracebench {
namespace {

// The region's end is read the way this machine's clock plan says, and the
// migration check it chose recognizes the pinned CPU.
TEST(Clock, SerializedReadsAreMonotonicOnOneCpuAndThePinnedCpuIsRecognized) {
  int cpu = default_measured_cpu();
  ClockPlan plan = decide_clock(observe_clock(cpu));
  ASSERT_TRUE(plan.ok()) << plan.failures();
  ASSERT_TRUE(pin_current_thread(cpu).is_ok());
  unsigned aux = 0;
  std::uint64_t prev = tsc_begin();
  for (int i = 0; i < 1000; ++i) {
    std::uint64_t t = plan.end_read == EndRead::kRdtscp ? tsc_end_as<EndRead::kRdtscp>(&aux)
                                                        : tsc_end_as<EndRead::kLfenceRdtsc>(&aux);
    ASSERT_GE(t, prev);
    prev = t;
  }
  EXPECT_FALSE(sample_migrated(plan.migration, plan.expected_aux, cpu, aux, sched_getcpu(), sched_getcpu()))
      << "method " << to_string(plan.migration) << ", TSC_AUX " << aux;
}

TEST(Clock, TscFrequencyIsPlausibleAndCrossChecked) {
  TscInfo t = probe_tsc();
  EXPECT_GT(t.hz, 100e6);
  EXPECT_LT(t.hz, 10e9);
  // Whatever the source, calibration against CLOCK_MONOTONIC_RAW agrees.
  EXPECT_NEAR(t.calibrated_hz / t.hz, 1.0, 0.02);
}

TEST(Floor, IsSmallAndStable) {
  ClockPlan plan = decide_clock(observe_clock(default_measured_cpu()));
  std::vector<double> rounds;
  double a = 0, mad_a = 0, b = 0, mad_b = 0;
  calibrate_floor_rounds(plan.end_read, 3, 5000, &rounds, &a, &mad_a);
  calibrate_floor_rounds(plan.end_read, 3, 5000, &rounds, &b, &mad_b);
  EXPECT_GT(a, 0);
  EXPECT_LT(a, 2000);  // an empty region, even in a VM, is far below this
  EXPECT_NEAR(a, b, std::max({0.2 * a, 30.0, 2.0 * static_cast<double>(plan.step_cycles)}));
}

// The empty loop goes through the runner's own pilot: the batch it picks
// makes one sample span the clock plan's minimum (20 floors, 1000 TSC
// steps), and the per-event figure that comes out is a measured one.
TEST(Floor, PilotBatchesTheEmptyLoopAboveTheFloorAndTheTscStep) {
  auto out = std::filesystem::temp_directory_path() / ("tb-floor-" + std::to_string(getpid()));
  RunOptions opt;
  opt.tracers = {"none"};
  opt.workloads = {"empty"};
  opt.repetitions = 2;
  opt.samples = 200;
  opt.quick = true;
  opt.out_base = out.string();
  opt.write_samples = false;
  Plan plan;
  ASSERT_TRUE(make_plan(opt, &plan).is_ok());
  RunResult run;
  std::string dir;
  ASSERT_TRUE(run_benchmarks(opt, plan, &run, &dir).is_ok());
  std::filesystem::remove_all(out);
  ASSERT_EQ(run.benchmarks.size(), 1u);
  const BenchmarkResult& b = run.benchmarks[0];
  ASSERT_EQ(b.status, "ok") << b.error;
  double min_sample = run.context.clock.at("min_sample_cycles").get<double>();
  double step = run.context.clock.at("step_cycles").get<double>();
  EXPECT_GE(min_sample, 20 * run.context.floor_cycles);
  EXPECT_GE(min_sample, 1000 * step);
  EXPECT_GT(b.batch, 1u);
  ASSERT_GT(b.baseline.cycles.n, 0u);
  // A sample spans at least the minimum (the pilot's estimate may be off by
  // the pilot's own noise, not by a factor of two).
  EXPECT_GE(b.baseline.cycles.p50 * static_cast<double>(b.batch), 0.5 * min_sample);
  EXPECT_GT(b.baseline.cycles.p50, 0);
  EXPECT_LT(b.baseline.cycles.p50, run.context.floor_cycles);  // cheaper than the floor: why it is batched
}

}  // namespace
}  // namespace tracebench
