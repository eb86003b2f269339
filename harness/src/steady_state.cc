#include "tracebench/steady_state.h"

#include <algorithm>
#include <cmath>

#include "tracebench/stats.h"

namespace tracebench {

namespace {

struct Segment {
  double lo, hi, median;
  double half_range() const { return 0.5 * (hi - lo); }
};

Segment segment(const std::vector<double>& x, std::size_t from, std::size_t to) {
  std::vector<double> v(x.begin() + static_cast<std::ptrdiff_t>(from), x.begin() + static_cast<std::ptrdiff_t>(to));
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return Segment{*lo, *hi, median_of(v)};
}

// How clearly a split at `t` separates two levels: the change over the
// levels' spread, or 0 when it does not qualify.
double clarity(const std::vector<double>& x, std::size_t t, const ShiftRule& rule) {
  const Segment a = segment(x, 0, t), b = segment(x, t, x.size());
  const bool apart = a.hi < b.lo || b.hi < a.lo;
  if (!apart) return 0;
  const double change = std::fabs(b.median - a.median);
  const double level = std::max(std::fabs(a.median), std::fabs(b.median));
  if (change < std::max(rule.min_relative * level, rule.min_absolute)) return 0;
  const double spread = std::max(a.half_range(), b.half_range());
  if (change < rule.noise_multiple * spread) return 0;
  return spread > 0 ? change / spread : HUGE_VAL;
}

}  // namespace

std::optional<LevelShift> find_level_shift(const std::vector<double>& x, const ShiftRule& rule) {
  const std::size_t k = std::max<std::size_t>(1, rule.min_segment);
  if (x.size() < 2 * k) return std::nullopt;
  std::optional<LevelShift> best;
  double best_clarity = 0;
  for (std::size_t t = k; t + k <= x.size(); ++t) {
    const double c = clarity(x, t, rule);
    // Ties (two splits both without spread) go to the later split: the level
    // the run is in now is the one it ended in.
    if (c > 0 && c >= best_clarity) {
      best_clarity = c;
      best = LevelShift{t, segment(x, 0, t).median, segment(x, t, x.size()).median};
    }
  }
  return best;
}

bool last_apart(const std::vector<double>& x, const ShiftRule& rule) {
  if (x.size() < 3) return false;
  const Segment rest = segment(x, 0, x.size() - 1);
  const double last = x.back();
  if (last >= rest.lo && last <= rest.hi) return false;
  const double change = std::fabs(last - rest.median);
  const double level = std::max(std::fabs(last), std::fabs(rest.median));
  return change >= std::max(rule.min_relative * level, rule.min_absolute) &&
         change >= rule.noise_multiple * rest.half_range();
}

bool stationary(const std::vector<double>& x, const ShiftRule& rule, std::size_t window) {
  if (window == 0 || x.size() < window) return false;
  const std::size_t n = x.size();
  const auto within = [&](double change, double level) {
    return change <= std::max(rule.min_relative * std::fabs(level), rule.min_absolute);
  };
  const Segment last = segment(x, n - window, n);
  if (within(last.hi - last.lo, last.median)) return true;
  // A noisy level: the last window's median where the one before it was.
  if (n < 2 * window) return false;
  const Segment before = segment(x, n - 2 * window, n - window);
  return within(std::fabs(last.median - before.median), std::max(std::fabs(last.median), std::fabs(before.median)));
}

}  // namespace tracebench
