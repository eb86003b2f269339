// Steady state: whether a series of figures (the medians of successive
// traced blocks while warming up, the overheads of successive repetitions)
// sits on one level, or moved from one level to another during the run.
//
// A tracer can cost more at first than for good: its buffer's pages touched
// for the first time, a consumer that has not caught up, caches and
// predictors cold.  On a host where page faults are dear (a VM whose exits
// cost microseconds) that can last for hundreds of thousands of events, and a
// median over repetitions then lands in the warm-up.  The runner therefore
//   1. warms each benchmark up with traced blocks until the last three agree,
//      or, on a noisy host, sit where the three before them did
//      (`stationary`), within a time budget, and
//   2. after each repetition looks for a level shift among the repetitions it
//      keeps (`find_level_shift`): the repetitions before the shift are left
//      out and more are taken, so the figure rests on the level the run ended
//      in; a run about to stop whose last repetition stands apart
//      (`last_apart`) takes one more first; a benchmark that does not hold
//      one level for the repetitions an interval needs within its budget has
//      no figure (it is unsteady).
// A level that lasts longer than the whole run cannot be told from the
// steady state by any test on the run itself: where the mechanism is known
// (Tracer::first_pass_events: a buffer in user memory, slow on its first
// passes) the warm-up fires those events first.
//
// A level shift between two runs of points, each at least `min_segment`
// long, is one where
//   - the two levels' ranges do not overlap,
//   - their medians differ by at least max(min_relative x the larger level,
//     min_absolute), and
//   - that difference is at least `noise_multiple` times the levels' own
//     spread (the larger half-range),
// i.e. two plateaus, not noise around one: on a quiet host successive
// repetitions differ by a few percent, so a 10% step with separated ranges
// happens by chance too rarely to matter, and a 2.5x warm-up is caught at
// once.  Of several splits that qualify, the clearest (the largest change
// over spread) is taken.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tracebench {

struct ShiftRule {
  double min_relative = 0.10;
  double min_absolute = 0;  // cycles per event: e.g. two clock floors per event
  double noise_multiple = 4;
  std::size_t min_segment = 2;
};

struct LevelShift {
  std::size_t index = 0;         // the first point of the later level
  double before = 0, after = 0;  // the two levels' medians
};

std::optional<LevelShift> find_level_shift(const std::vector<double>& x, const ShiftRule& rule);

// Whether the last point stands apart from all before it as a level shift
// would (the same rule, with the last point as a level of one): the start of
// a new level, or an outlier; a run about to stop takes one more repetition
// to tell which.
bool last_apart(const std::vector<double>& x, const ShiftRule& rule);

// Whether the last `window` points are one level: their range is within
// max(min_relative x |their median|, min_absolute), or (a level noisier
// than that) their median is that near the median of the `window` before.
bool stationary(const std::vector<double>& x, const ShiftRule& rule, std::size_t window = 3);

}  // namespace tracebench
