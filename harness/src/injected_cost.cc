#include "injected_cost.h"

#include <x86intrin.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "tracebench/host_simulation.h"

namespace tracebench {

InjectedCost::InjectedCost(std::unique_ptr<WorkloadState> inner, std::uint64_t cycles)
    : inner_(std::move(inner)), cycles_(cycles) {
  unseen_ = measure_unseen();
  owed_ = 0;
}

void InjectedCost::fire(std::uint64_t n) {
  inner_->fire(n);
  spin(n * cycles_);
}

// Pays what is owed: spins while the time its reads see is short of it.
// Not inlined, so the cost measured by measure_unseen() is the cost paid.
// What a spin overpays is carried as credit up to kMaxCredit cycles only:
// the last read's overshoot is a few cycles, but an interrupt or a
// preemption inside the spin is time no event chose to spend, and carried
// whole, one 4 ms preemption would cancel the injection for the next ~14,000
// events of 720 cycles (seen: runs whose repetitions after the first lost it).
__attribute__((noinline)) void InjectedCost::spin(std::uint64_t cycles) {
  owed_ += static_cast<std::int64_t>(cycles) - unseen_;
  const std::uint64_t t0 = seen_tsc(__rdtsc());
  std::uint64_t t = t0;
  while (static_cast<std::int64_t>(t - t0) < owed_) t = seen_tsc(__rdtsc());
  owed_ = std::max(owed_ - static_cast<std::int64_t>(t - t0), -kMaxCredit);
}

// The workload's own cost (injected_cost.h): doubles the batches per window
// until one spans kWindowCycles, then the median of kWindows windows.
double workload_cycles_per_event(WorkloadState& w, std::uint64_t batch) {
  constexpr int kWindows = 21;
  constexpr std::uint64_t kWindowCycles = 100'000;
  batch = std::max<std::uint64_t>(1, batch);
  w.fire(batch);  // warm
  std::uint64_t batches = 1;
  for (;;) {
    const std::uint64_t a = seen_tsc(__rdtsc());
    for (std::uint64_t i = 0; i < batches; ++i) w.fire(batch);
    if (seen_tsc(__rdtsc()) - a >= kWindowCycles || batches >= (1u << 20)) break;
    batches *= 2;
  }
  std::vector<double> per_event;
  for (int k = 0; k < kWindows; ++k) {
    const std::uint64_t a = seen_tsc(__rdtsc());
    for (std::uint64_t i = 0; i < batches; ++i) w.fire(batch);
    const std::uint64_t b = seen_tsc(__rdtsc());
    per_event.push_back(static_cast<double>(b - a) / static_cast<double>(batches * batch));
  }
  std::nth_element(per_event.begin(), per_event.begin() + kWindows / 2, per_event.end());
  return per_event[kWindows / 2];
}

// What a spin costs beyond what its own reads see: spins of a known debt
// back to back between two reads, their average less that debt.  Spins that
// run their loop, as the real ones do: leaving a loop whose length varies
// costs a mispredicted branch after the last read (a dozen cycles or more,
// a few per event at a batch of four), which a spin that owes nothing never
// pays.  The debt is four events' worth (a small batch), within 64..4096
// cycles.  An average over a window, not a per-try median: on a TSC that
// ticks in steps of 21 cycles (some hypervisors') every try reads 0 or 21,
// and the credit carries each try's rounding to the next, so only a
// window's total is exact.  Short windows (~80 us), the median of 41: an
// interrupt inside a spin is time beyond the credit's bound, and a window
// of milliseconds holds a timer tick or more in most of them.
std::int64_t InjectedCost::measure_unseen() {
  constexpr int kWindows = 41;
  constexpr std::uint64_t kWindowCycles = 200'000;
  const std::uint64_t debt = std::clamp<std::uint64_t>(4 * cycles_, 64, 4096);
  const int tries = static_cast<int>(std::max<std::uint64_t>(40, kWindowCycles / (debt + 50)));
  std::vector<double> per_try;
  for (int w = 0; w < kWindows; ++w) {
    owed_ = 0;
    unseen_ = 0;
    const std::uint64_t a = seen_tsc(__rdtsc());
    for (int i = 0; i < tries; ++i) spin(debt);
    const std::uint64_t b = seen_tsc(__rdtsc());
    per_try.push_back(static_cast<double>(b - a) / tries - static_cast<double>(debt));
  }
  std::nth_element(per_try.begin(), per_try.begin() + kWindows / 2, per_try.end());
  return std::max<std::int64_t>(0, std::llround(per_try[kWindows / 2]));
}

}  // namespace tracebench
