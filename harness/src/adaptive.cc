#include "tracebench/adaptive.h"

#include <algorithm>
#include <cmath>

#include "tracebench/stats.h"

namespace tracebench {

namespace {

// Fills the target and the interval's half-width; true when the interval
// can be judged (enough repetitions counted).
bool judge(const std::vector<double>& overheads, const StopRule& rule, RepetitionStop* stop) {
  if (static_cast<int>(overheads.size()) < kMinRepetitionsForInterval) return false;
  MedianCI ci = median_ci(overheads);
  stop->target_cycles = std::max(rule.target_rel * std::fabs(ci.median), 2 * rule.floor_cycles_per_event);
  stop->half_width_cycles = std::max(ci.median - ci.low, ci.high - ci.median);
  return true;
}

}  // namespace

bool should_stop(const std::vector<double>& overheads, int run, const StopRule& rule, RepetitionStop* stop) {
  stop->cap = rule.cap;
  const bool adaptive = rule.target_rel > 0;
  const bool judged = adaptive && judge(overheads, rule, stop);
  // Within the target up to rounding: an interval whose width is the
  // target in exact arithmetic (a quantized clock makes that common) may
  // come out a few ulps over it.
  if (judged && stop->half_width_cycles <= stop->target_cycles * (1 + 1e-9)) {
    stop->rule = "interval";
    return true;
  }
  if (run >= rule.cap) {
    stop->rule = adaptive ? "cap" : "fixed";
    if (!adaptive) stop->target_cycles = stop->half_width_cycles = 0;
    return true;
  }
  return false;
}

}  // namespace tracebench
