#include "injected_cost.h"

#include <x86intrin.h>

#include <algorithm>
#include <utility>
#include <vector>

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
  const std::uint64_t t0 = __rdtsc();
  std::uint64_t t = t0;
  while (static_cast<std::int64_t>(t - t0) < owed_) t = __rdtsc();
  owed_ = std::max(owed_ - static_cast<std::int64_t>(t - t0), -kMaxCredit);
}

// The median, over many tries, of a spin that owes nothing timed from outside
// (what it costs whole) less two back-to-back reads timed alike (what the
// outside reads cost themselves).  Medians, not minima: the spin's cost in the
// timed region is its typical one.
std::int64_t InjectedCost::measure_unseen() {
  constexpr int kTries = 2001;
  std::vector<std::int64_t> whole(kTries), bare(kTries);
  for (int i = 0; i < kTries; ++i) {
    owed_ = 0;
    unseen_ = 0;
    const std::uint64_t a = __rdtsc();
    spin(0);
    const std::uint64_t b = __rdtsc();
    const std::uint64_t c = __rdtsc();
    const std::uint64_t d = __rdtsc();
    whole[i] = static_cast<std::int64_t>(b - a);
    bare[i] = static_cast<std::int64_t>(d - c);
  }
  auto median = [](std::vector<std::int64_t>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  return std::max<std::int64_t>(0, median(whole) - median(bare));
}

}  // namespace tracebench
