// Adaptive repetitions: a benchmark's repetitions stop once the 95%
// interval of its overhead (median over repetitions, stats.h median_ci) is
// within a target, or at the cap (--repetitions).
//
//   target = max(target_rel * |median|, 2 floors per event)
//
// where a floor per event is the clock's empty-region cost divided by the
// batch: below that the subtraction of the floor itself is the noise, and a
// near-zero overhead (the untraced `none` row) could never reach a share of
// itself.  The interval is "within" the target when both its ends are no
// further than the target from the median.  A minimum of repetitions stays:
// the order-statistics interval reaches 95% coverage only from six values
// on (five give [min, max] at 93.75%).
#pragma once

#include <string>
#include <vector>

namespace tracebench {

// Fewest repetitions (that counted) whose median interval covers 95%.
inline constexpr int kMinRepetitionsForInterval = 6;

struct StopRule {
  int cap = 10;              // --repetitions: never more
  double target_rel = 0.02;  // share of the figure; 0: run every repetition (fixed)
  double floor_cycles_per_event = 0;
};

// What stopped a benchmark's repetitions, as result.json says it.
struct RepetitionStop {
  std::string rule;              // "interval": within the target; "cap": the cap came first; "fixed": no target
  double target_cycles = 0;      // the target at the last repetition, cycles per event (0 when fixed)
  double half_width_cycles = 0;  // the interval's larger distance from the median then
  int cap = 0;
  int limit = 0;  // the repetitions level shifts could take it to (0: not recorded, results before it)
};

// After a repetition: whether the overheads so far (cycles per event, one
// per counted repetition) are enough to stop, and why.  `run` repetitions
// have run (counted or not).  Returns true and fills `stop` when the
// benchmark should stop now.
bool should_stop(const std::vector<double>& overheads, int run, const StopRule& rule, RepetitionStop* stop);

}  // namespace tracebench
