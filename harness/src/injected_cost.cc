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
__attribute__((noinline)) void InjectedCost::spin(std::uint64_t cycles) {
  owed_ += static_cast<std::int64_t>(cycles) - unseen_;
  const std::uint64_t t0 = seen_tsc(__rdtsc());
  std::uint64_t t = t0;
  while (static_cast<std::int64_t>(t - t0) < owed_) t = seen_tsc(__rdtsc());
  // What the spin paid beyond its debt carries over, up to a limit: the last
  // read's overshoot (a coarse TSC's step) is a payment, an interrupt or a
  // preemption inside the spin is not (credited, it would let the next
  // thousands of spins go unpaid).
  owed_ = std::max(owed_ - static_cast<std::int64_t>(t - t0), -kMaxCarry);
}

// What a spin that owes nothing costs whole, none of which its own reads see:
// many such spins back to back between two reads, the total over their
// number.  An average over one long window, not a per-try median: on a TSC
// that ticks in steps of 21 cycles (some hypervisors') every try reads 0 or
// 21, and their medians say 0 where the spin costs a dozen cycles.  Over
// 20000 tries the step is a thousandth of a cycle per try.  The median of
// five windows, so an interrupt in one does not count.
std::int64_t InjectedCost::measure_unseen() {
  constexpr int kTries = 20000, kWindows = 5;
  std::vector<double> per_try;
  for (int w = 0; w < kWindows; ++w) {
    owed_ = 0;
    unseen_ = 0;
    const std::uint64_t a = seen_tsc(__rdtsc());
    for (int i = 0; i < kTries; ++i) spin(0);
    const std::uint64_t b = seen_tsc(__rdtsc());
    per_try.push_back(static_cast<double>(b - a) / kTries);
  }
  std::nth_element(per_try.begin(), per_try.begin() + kWindows / 2, per_try.end());
  return std::max<std::int64_t>(0, std::llround(per_try[kWindows / 2]));
}

}  // namespace tracebench
