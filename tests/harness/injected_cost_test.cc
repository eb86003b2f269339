// The injected cost (none.inject_cycles) adds the cycles per event asked for
// to what the harness measures, in small batches too, where the spin's own
// entry and exit would add several cycles per event (a TSC read's cost over a
// batch of four), on a TSC that ticks in coarse steps, and on a busy machine
// (an interrupt inside a spin is no payment for the spins after it).
#include "injected_cost.h"
#include "tracebench/host_simulation.h"

#include <gtest/gtest.h>
#include <x86intrin.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace tracebench {
namespace {

class Nothing final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override { fired += n; }
  std::uint64_t fired = 0;
};

// Cycles per event of `batch`-event fires through `w`, as the harness sees
// them: the median over many short windows of a few fires each, so that an
// interrupt or a preemption (which the harness excludes with its sample)
// moves no figure.  The test's own reads are the machine's TSC, whatever the
// simulated host's.
double cycles_per_event(WorkloadState& w, std::uint64_t batch) {
  constexpr int kWindows = 2001, kFires = 25;
  std::vector<double> per_event(kWindows);
  for (double& x : per_event) {
    const std::uint64_t t0 = __rdtsc();
    for (int i = 0; i < kFires; ++i) w.fire(batch);
    x = static_cast<double>(__rdtsc() - t0) / (kFires * static_cast<double>(batch));
  }
  std::nth_element(per_event.begin(), per_event.begin() + kWindows / 2, per_event.end());
  return per_event[kWindows / 2];
}

// The median over interleaved rounds of (wrapped - bare) cycles per event.
double injected_per_event(std::uint64_t cycles, std::uint64_t batch) {
  InjectedCost wrapped(std::make_unique<Nothing>(), cycles);
  Nothing bare;
  std::vector<double> d;
  for (int round = 0; round < 9; ++round) {
    const double b = cycles_per_event(bare, batch);
    const double w = cycles_per_event(wrapped, batch);
    d.push_back(w - b);
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

TEST(InjectedCost, AveragesWhatIsAskedInSmallBatches) {
  for (std::uint64_t cycles : {13u, 27u, 100u}) {
    const double got = injected_per_event(cycles, 4);
    EXPECT_NEAR(got, static_cast<double>(cycles), 3.0) << cycles << " cycles asked at a batch of 4";
  }
}

// On a host whose TSC ticks in steps of 21 cycles (simulated: every read the
// spin makes is rounded down to a step; the test's own windows are long
// enough for any clock), the spin's reads see its entry and exit as 0 or 21
// cycles: the same average is still owed.
TEST(InjectedCost, AveragesWhatIsAskedOnACoarseClock) {
  HostSimulation coarse;
  ASSERT_TRUE(parse_host_simulation("tsc_step=21", &coarse));
  set_host_simulation(coarse);
  for (std::uint64_t cycles : {13u, 27u, 100u}) {
    const double got = injected_per_event(cycles, 4);
    EXPECT_NEAR(got, static_cast<double>(cycles), 3.0) << cycles << " cycles asked at a batch of 4, TSC step 21";
  }
  EXPECT_NEAR(injected_per_event(50, 100), 50.0, 2.0) << "at a batch of 100, TSC step 21";
  set_host_simulation(HostSimulation{});
}

TEST(InjectedCost, AveragesWhatIsAskedInLargeBatches) {
  const double got = injected_per_event(50, 100);
  EXPECT_NEAR(got, 50.0, 2.0);
}

TEST(InjectedCost, PassesEveryEventToTheWorkload) {
  auto inner = std::make_unique<Nothing>();
  Nothing* seen = inner.get();
  InjectedCost w(std::move(inner), 5);
  for (int i = 0; i < 10; ++i) w.fire(3);
  EXPECT_EQ(seen->fired, 30u);
  EXPECT_GE(w.unseen_cycles(), 0);
}

}  // namespace
}  // namespace tracebench
