// The samples of one benchmark, from timed blocks to the figures in its
// result.  Pure bookkeeping (no clock, no tracer), so the rules that decide
// whether a figure may be printed are tested on their own:
//
//   - a sample is excluded when it migrated CPU or looks hit by an
//     interrupt/preemption (above median + max(10 MAD, the interrupt gap));
//   - a repetition counts only when both of its blocks kept at least half of
//     their samples; its overhead is traced - baseline median;
//   - leading repetitions found on an earlier level (a warm-up the runner
//     saw in the repetitions) can be left out whole;
//   - a variant with no valid sample, or fewer than two repetitions that
//     count, gives no figure: finish() returns the reason, and the benchmark
//     is an error;
//   - more than kMaxExcludedShare of a variant's samples excluded is a
//     warning in the result (the figure stands, flagged);
//   - beside the median overhead, an amortized one (amortize()): what a
//     cost paid once in many events (a tracer's buffer page, a wakeup) adds
//     to each event, which the median sample leaves out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracebench/results.h"

namespace tracebench {

inline constexpr double kMaxExcludedShare = 0.20;
inline constexpr double kMinKeptShareForRepetition = 0.5;
// The amortized overhead's interval above the median overhead by this share
// of it: a warning in the result (the median leaves out that much).
inline constexpr double kAmortizedShareWorthSaying = 0.03;

// One block as timed: per-event cycles of each sample (floor subtracted,
// divided by the batch), whether it migrated, counter deltas over the block.
struct TimedBlock {
  std::vector<double> per_event;
  std::vector<std::uint8_t> migrated;
  std::vector<std::int64_t> counter_delta;
  std::uint64_t events = 0;      // the measured thread's
  std::uint64_t all_events = 0;  // every firing thread's (the measured one and its contenders)
  double seconds = 0;            // the block's wall time, contenders' start to stop
};

class SampleBook {
 public:
  // `interrupt_gap_cycles`: a sample this far above the block's median (per
  // batch) was hit by something else.  `empty_counter_delta`: what reading
  // the counters around an empty block costs, subtracted per block.
  SampleBook(double interrupt_gap_cycles, std::uint64_t batch, std::vector<double> empty_counter_delta = {},
             bool keep_rows = true);

  // The amortized overhead of a repetition: the mean of the traced block's
  // samples less the baseline block's, samples an interrupt hit included
  // (those above their block's median by more than `preemption_cycles` for
  // the whole sample are left out: a preemption, neither the tracer's nor
  // the host's steady share), less what the host's short gaps take of the
  // time the traced events add (`host_share` of it: cpu_gaps.h's
  // short_share; gaps hit a sample in proportion to its length).  Not
  // called: no amortized figure.
  void amortize(double host_share, double preemption_cycles);

  void add_block(bool traced, int repetition, const TimedBlock& b);
  // After both blocks of a repetition.
  void end_repetition();

  // Leaves out the repetitions before the `counted`-th one that counted (an
  // earlier level: tracebench/steady_state.h): their samples, rows and
  // figures go out of the result; their overheads are kept in
  // left_out_overheads().  Repetitions already left out stay out.
  void leave_out_before(std::size_t counted);

  // Fills both variants, repetition medians, the overhead and its CI, and
  // `warnings`, from the repetitions kept.  Returns the reason no figure can
  // be given, or "" when the figures stand.  `counter_names` label the
  // counter deltas.
  std::string finish(double tsc_hz, const std::vector<std::string>& counter_names, BenchmarkResult* r) const;

  // Overhead of the repetitions that counted and are kept (cycles per event).
  const std::vector<double>& overheads() const { return overhead_; }
  const std::vector<double>& left_out_overheads() const { return left_out_overhead_; }
  // What a traced event costs whole (cycles): the median of the kept
  // repetitions' traced medians; 0 before one counted.
  double traced_level() const;
  // Repetitions run since the first one kept (counted or not).
  std::size_t repetitions_kept() const { return reps_.size() - first_kept_; }
  std::size_t repetitions_counted() const { return overhead_.size(); }
  // Repetitions that did not count (a block kept too few samples), whether
  // before a level shift or after it.
  std::size_t repetitions_dropped() const;
  // The rows of the repetitions kept, moved out (for the result, once the
  // benchmark is done).
  std::vector<SampleRow> take_rows();
  // Last repetition's medians (for progress output); false when it did not count.
  bool last(double* baseline, double* traced) const;
  // Last repetition's traced block: every thread's events per second (0: no wall time).
  double last_traced_events_per_second() const;

 private:
  // One block as kept: its undisturbed per-event values, those an
  // interrupt hit (for the amortized figure), and its counts.
  struct Block {
    std::vector<double> values, hit;
    std::uint64_t samples = 0, excluded = 0, migrated = 0, events = 0, all_events = 0;
    double seconds = 0;
    std::vector<double> counters;  // deltas less an empty block's
    // Every thread's events per second of its wall time; 0 without one.
    double events_per_second() const { return seconds > 0 ? static_cast<double>(all_events) / seconds : 0; }
  };
  struct Repetition {
    int index = 0;
    Block block[2];  // baseline, traced
    bool counted = false;
  };
  // Every thread's events per second: the median over the counted
  // repetitions kept of their traced blocks.
  std::optional<double> traced_events_per_second() const;
  // A block's mean per event (amortize()), around its median `median`.
  double amortized_mean(const Block& b, double median) const;
  // The amortized figure into `r`, and a warning when the median leaves
  // out a share of it worth acting on.
  void finish_amortized(double tsc_hz, BenchmarkResult* r) const;

  double gap_;
  std::uint64_t batch_;
  std::vector<double> empty_counter_delta_;
  bool keep_rows_;
  std::vector<Repetition> reps_;
  std::size_t first_kept_ = 0;  // into reps_
  std::vector<double> overhead_, left_out_overhead_;
  bool amortize_ = false;
  double host_share_ = 0, preemption_cycles_ = 0;
  std::vector<double> amortized_;  // per counted repetition kept, as overhead_
  std::vector<SampleRow> rows_;
};

// Events per timed sample: enough that one sample spans `min_sample_cycles`
// (the clock plan's: 20x floor, 1000x the TSC step, 400 cycles), never below
// the workload's `unit`, at most 100000.  `user_batch` (> 0) wins.
std::uint64_t choose_batch(double per_event_cycles, double min_sample_cycles, std::uint64_t unit,
                           std::uint64_t user_batch);

}  // namespace tracebench
