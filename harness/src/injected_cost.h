// A workload made slower by a known number of TSC cycles per event
// (Tracer::injected_cycles_per_event, the none tracer's inject_cycles): after
// each batch, a spin on the TSC, inside the timed region, in both blocks.
//
// A spin of exactly N cycles per event cannot be had by spinning N * batch
// from a TSC read: entering and leaving the spin (the read before the loop,
// the loop's last test, the call) costs a few cycles per batch that no read
// inside it sees, which at a batch of four events adds several cycles per
// event to the N asked for.  So the spin keeps an account: each batch owes
// N * batch, each spin pays what it measurably took plus that unseen part
// (measured once, when the workload is wrapped, as an average over a long
// window: right on a TSC that ticks in coarse steps too), and the
// difference carries to the next batch.  Over a block the injected cost per
// event averages N.
#pragma once

#include <cstdint>
#include <memory>

#include "tracebench/workload.h"

namespace tracebench {

// The workload's own cost per event in TSC cycles, measured on this
// machine: the median of short windows of its batches (an interrupt only
// lengthens a window).  What an injection given as a percentage is sized
// against.
double workload_cycles_per_event(WorkloadState& w, std::uint64_t batch);

class InjectedCost final : public WorkloadState {
 public:
  // The most a spin's overpayment is carried to the next batches (injected_cost.cc).
  static constexpr std::int64_t kMaxCredit = 2000;
  InjectedCost(std::unique_ptr<WorkloadState> inner, std::uint64_t cycles);
  void fire(std::uint64_t n) override;
  // The cycles a spin costs beyond what its own TSC reads see (>= 0).
  std::int64_t unseen_cycles() const { return unseen_; }

 private:
  void spin(std::uint64_t cycles);
  std::int64_t measure_unseen();

  std::unique_ptr<WorkloadState> inner_;
  std::uint64_t cycles_;
  std::int64_t owed_ = 0;
  std::int64_t unseen_ = 0;
};

}  // namespace tracebench
