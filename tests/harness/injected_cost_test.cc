// The injected cost (none.inject_cycles) adds the cycles per event asked for
// to what the harness measures, in small batches too, where the spin's own
// entry and exit would add several cycles per event (a TSC read's cost over a
// batch of four), on a TSC that ticks in coarse steps, and on a busy machine
// (an interrupt inside a spin is no payment for the spins after it).
#include "injected_cost.h"
#include "tracebench/host_simulation.h"
#include "tracebench/simulated_host.h"

#include <gtest/gtest.h>
#include <x86intrin.h>

#include <signal.h>
#include <sys/time.h>
#include <time.h>

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

// Cycles per event of `fires` fires of `batch` events through `w`.
double cycles_per_event(WorkloadState& w, int fires, std::uint64_t batch) {
  const std::uint64_t t0 = __rdtsc();
  for (int i = 0; i < fires; ++i) w.fire(batch);
  return static_cast<double>(__rdtsc() - t0) / (static_cast<double>(fires) * static_cast<double>(batch));
}

// The median over interleaved rounds of (wrapped - bare) cycles per event.
// Rounds of ~100,000 cycles (~40 us), so that most hold no preemption: a
// spin preempted is not paid back by the next ones (kMaxCredit), and on a
// busy machine a long round's mean would hold the other process's time.
double injected_per_event(std::uint64_t cycles, std::uint64_t batch) {
  InjectedCost wrapped(std::make_unique<Nothing>(), cycles);
  Nothing bare;
  const int fires = std::max<int>(10, static_cast<int>(100000 / (batch * (cycles + 20))));
  std::vector<double> d;
  for (int round = 0; round < 201; ++round) {
    const double b = cycles_per_event(bare, fires, batch);
    const double w = cycles_per_event(wrapped, fires, batch);
    d.push_back(w - b);
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

// What a percentage is sized against: a workload whose events cost a known
// number of cycles (an injection around nothing) measures as that, on the
// real clock and on the simulated coarse one.
TEST(InjectedCost, AWorkloadsOwnCostIsMeasuredAsItIs) {
  HostSimulation coarse;
  ASSERT_TRUE(parse_host_simulation("tsc_step=21", &coarse));
  for (const HostSimulation& host : {HostSimulation{}, coarse}) {
    set_host_simulation(host);
    for (std::uint64_t cycles : {200u, 1000u}) {
      InjectedCost known(std::make_unique<Nothing>(), cycles);
      const double got = workload_cycles_per_event(known, 64);
      EXPECT_NEAR(got, static_cast<double>(cycles), 0.1 * static_cast<double>(cycles))
          << cycles << " cycles per event, TSC step " << host.tsc_step;
    }
  }
  set_host_simulation(HostSimulation{});
}

TEST(InjectedCost, AveragesWhatIsAskedInSmallBatches) {
  for (std::uint64_t cycles : {13u, 27u, 100u}) {
    const double got = injected_per_event(cycles, 4);
    EXPECT_NEAR(got, static_cast<double>(cycles), 3.0) << cycles << " cycles asked at a batch of 4";
  }
}

// On a host whose TSC ticks in steps of 21 cycles (simulated: every read the
// spin makes is rounded down to a step; the test's own reads are the
// machine's TSC), the spin's reads see its entry and exit as 0 or 21 cycles:
// the same average is still owed (on a bhyve-like host 27 asked read 30.35).
// Within 4 cycles, a fifth of a step: the simulated step leaves each size an
// offset of its own (under 2 cycles, the same from run to run), and a host
// that changes speed between the spin's calibration and the rounds adds to it.
TEST(InjectedCost, AveragesWhatIsAskedOnACoarseClock) {
  HostSimulation coarse;
  ASSERT_TRUE(parse_host_simulation("tsc_step=21", &coarse));
  set_host_simulation(coarse);
  for (std::uint64_t cycles : {13u, 27u, 100u}) {
    const double got = injected_per_event(cycles, 4);
    EXPECT_NEAR(got, static_cast<double>(cycles), 4.0) << cycles << " cycles asked at a batch of 4, TSC step 21";
  }
  EXPECT_NEAR(injected_per_event(50, 100), 50.0, 2.0) << "at a batch of 100, TSC step 21";
  set_host_simulation(HostSimulation{});
}

TEST(InjectedCost, AveragesWhatIsAskedInLargeBatches) {
  const double got = injected_per_event(50, 100);
  EXPECT_NEAR(got, 50.0, 2.0);
}

// A paced run outside the runner's blocks (model validate) gets the
// simulated host's slow syscalls too, where each event makes one, through
// every event to the workload; other probe kinds and a plain host are left
// as they are.
TEST(InjectedCost, SimulatedSyscallsOnAPacedWorkload) {
  HostSimulation slow;
  ASSERT_TRUE(parse_host_simulation("syscall_ns=1000", &slow));
  set_host_simulation(slow);
  const double tsc_hz = 2e9;  // 1000 ns = 2000 cycles
  for (ProbeKind kind : {ProbeKind::kSyscall, ProbeKind::kMarker}) {
    auto inner = std::make_unique<Nothing>();
    Nothing* seen = inner.get();
    std::unique_ptr<WorkloadState> w = with_simulated_syscalls(std::move(inner), kind, tsc_hz);
    ASSERT_NE(w.get(), seen) << "wrapped";
    const double got = cycles_per_event(*w, 200, 50) - cycles_per_event(*seen, 200, 50);
    EXPECT_GE(got, 2000 * 0.9) << "cycles per event";
    EXPECT_EQ(seen->fired, 2u * 200 * 50);
  }
  auto inner = std::make_unique<Nothing>();
  Nothing* seen = inner.get();
  EXPECT_EQ(with_simulated_syscalls(std::move(inner), ProbeKind::kUserFunction, tsc_hz).get(), seen)
      << "a user function's events make no syscall";
  set_host_simulation(HostSimulation{});
  inner = std::make_unique<Nothing>();
  seen = inner.get();
  EXPECT_EQ(with_simulated_syscalls(std::move(inner), ProbeKind::kSyscall, tsc_hz).get(), seen) << "no simulation";
}

TEST(InjectedCost, PassesEveryEventToTheWorkload) {
  auto inner = std::make_unique<Nothing>();
  Nothing* seen = inner.get();
  InjectedCost w(std::move(inner), 5);
  for (int i = 0; i < 10; ++i) w.fire(3);
  EXPECT_EQ(seen->fired, 30u);
  EXPECT_GE(w.unseen_cycles(), 0);
}

// A spin interrupted for milliseconds (here a signal whose handler sleeps
// 10 ms, as a preemption or a host's stolen time would take) does not
// cancel the injection of the batches after it: what it overpaid is carried
// as credit up to InjectedCost::kMaxCredit cycles only.  Without the bound,
// the 10 ms of credit cancelled the next ~26,000 events of 1000 cycles.
void sleep_10ms(int) {
  timespec ts{0, 10 * 1000 * 1000};
  nanosleep(&ts, nullptr);
}

TEST(InjectedCost, AnInterruptedSpinDoesNotCancelTheNextEvents) {
  InjectedCost w(std::make_unique<Nothing>(), 1000);
  struct sigaction sa {
  }, old{};
  sa.sa_handler = sleep_10ms;
  ASSERT_EQ(sigaction(SIGALRM, &sa, &old), 0);
  itimerval in_200us{{0, 0}, {0, 200}};
  ASSERT_EQ(setitimer(ITIMER_REAL, &in_200us, nullptr), 0);
  const std::uint64_t t0 = __rdtsc();
  w.fire(3000);  // owes 3M cycles (~1 ms): the signal lands inside the spin
  const double spun = static_cast<double>(__rdtsc() - t0);
  sigaction(SIGALRM, &old, nullptr);
  // The next 9 x 200 events, each round against the bare workload: the median.
  Nothing bare;
  std::vector<double> d;
  for (int round = 0; round < 9; ++round) d.push_back(cycles_per_event(w, 200, 1) - cycles_per_event(bare, 200, 1));
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  EXPECT_NEAR(d[d.size() / 2], 1000.0, 100.0) << "the interrupted spin took " << spun << " cycles for 3M owed";
}

}  // namespace
}  // namespace tracebench
