// The survey of what the host takes from the measured CPU (cpu_gaps.h): on
// differences with a known answer, and against a known injection (the
// simulated host's stolen time, a timer's signal that spins on this
// thread).
#include "tracebench/cpu_gaps.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "simulated_steal.h"
#include "tracebench/clock.h"
#include "tracebench/host_simulation.h"

namespace tracebench {
namespace {

constexpr double kHz = 2e9;

TEST(CpuGaps, AGapIsADifferenceFarAboveTheTypicalRead) {
  const std::vector<std::uint64_t> typical(1000, 40);
  // 500 ns is 1000 cycles at 2 GHz; 20x the typical read is 800.
  const std::vector<std::uint64_t> candidates = {900, 1001, 4000, 8000, 6000};
  const CpuGaps g = gaps_in(typical, candidates, 0.002, kHz);
  EXPECT_EQ(g.count, 4u);
  EXPECT_DOUBLE_EQ(g.per_second, 2000);
  EXPECT_DOUBLE_EQ(g.threshold_ns, 500);
  EXPECT_NEAR(g.median_ns, 2500, 1e-9);
}

TEST(CpuGaps, ASlowReadRaisesTheThreshold) {
  const std::vector<std::uint64_t> typical(1000, 100);  // 20x: 2000 cycles, 1 us
  const CpuGaps g = gaps_in(typical, {1500, 2500}, 1, kHz);
  EXPECT_EQ(g.count, 1u);
  EXPECT_DOUBLE_EQ(g.threshold_ns, 1000);
}

TEST(CpuGaps, TheSampleCapLetsOneSampleInTenBeHit) {
  CpuGaps g;
  g.per_second = 5000;  // one every 200 us: 20 us samples are hit one time in ten
  EXPECT_DOUBLE_EQ(sample_cap_cycles(g, kHz, 400), 20e-6 * kHz);
  EXPECT_DOUBLE_EQ(sample_cap_cycles(g, kHz, 1e6), 1e6) << "never under the clock's own minimum";
  EXPECT_EQ(sample_cap_cycles(CpuGaps{}, kHz, 400), 0) << "no gap seen: no cap";
}

// 5000 times a second, 4 us taken: the survey sees about that many gaps more
// than the host's own, each at least that long (the timer's interrupt and the
// signal's delivery add to each: tens of microseconds on a VM whose timer
// exits are dear).
TEST(CpuGaps, TheSurveySeesTimeTakenFromTheThread) {
  HostSimulation s;
  ASSERT_TRUE(parse_host_simulation("steal_hz=5000,steal_us=4", &s));
  const double hz = probe_tsc().calibrated_hz;
  // Three surveys each way, interleaved, and their medians: the host's own
  // gaps come in bursts (1,000 to 3,500 a second here within a minute).
  std::vector<double> inside_hz, outside_hz, inside_ns;
  {
    SimulatedSteal steal;
    ASSERT_TRUE(steal.start(s));
    for (int i = 0; i < 3; ++i) {
      outside_hz.push_back(survey_cpu_gaps(0.1, hz).per_second);
      const StealWindow window;
      const CpuGaps g = survey_cpu_gaps(0.2, hz);
      inside_hz.push_back(g.per_second);
      inside_ns.push_back(g.median_ns);
    }
  }
  auto median3 = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[1];
  };
  const double with = median3(inside_hz), without = median3(outside_hz);
  // Over the host's own gaps (its timer tick: ~1000 a second here), seen
  // outside a window.  (A preemption while other work runs merges the
  // signals it delays into one gap.)
  EXPECT_GT(with - without, 3000) << with << " with, " << without << " without";
  EXPECT_LT(with - without, 7000) << with << " with, " << without << " without";
  EXPECT_GT(median3(inside_ns), 3900);
  EXPECT_LT(median3(inside_ns), 100000);
  // Outside a window (a tracer's attach, a BPF program's verification) the
  // signal waits: nothing is taken, no system call is interrupted.
  EXPECT_LT(without, with / 2) << "the host's own gaps (its timer tick) only";
}

// A system call that gives up when a signal is pending (the BPF verifier's
// EAGAIN, poll's EINTR) is not cut short by the simulated steal outside
// the timed windows: a 20 ms poll on nothing runs to its end.
TEST(CpuGaps, TheSimulatedStealInterruptsNoSystemCallOutsideItsWindows) {
  HostSimulation s;
  ASSERT_TRUE(parse_host_simulation("steal_hz=5000,steal_us=4", &s));
  SimulatedSteal steal;
  ASSERT_TRUE(steal.start(s));
  for (int i = 0; i < 5; ++i) {
    errno = 0;
    EXPECT_EQ(poll(nullptr, 0, 20), 0) << "poll interrupted: " << std::strerror(errno);
  }
  const StealWindow window;
  int interrupted = 0;
  for (int i = 0; i < 5; ++i) interrupted += poll(nullptr, 0, 20) < 0 && errno == EINTR;
  EXPECT_GT(interrupted, 0) << "inside a window the signal arrives (a poll of 20 ms sees ~100 of them)";
}

}  // namespace
}  // namespace tracebench
