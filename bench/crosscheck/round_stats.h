// The cross-check's statistics, pure functions of the rounds' figures.
//
// Each round measures both sides back to back (suite then reference, or the
// other way round, alternating), so the host's slow drift moves both alike
// and falls out of the round's ratio suite/reference.  Over the rounds: the
// median ratio and its distribution-free confidence interval from order
// statistics (the binomial interval of tracebench/stats.h's median_ci at
// 95%; with fewer than 6 rounds no such interval reaches 95% and it is the
// whole range of the rounds, covering 1 - 2^(1-n): 75% with 3 rounds,
// 93.8% with 5).  The verdict is read from that interval against the
// tolerance (±10%):
//   agree       the whole interval lies within [1 - tol, 1 + tol];
//   disagree    the whole interval lies outside it (above 1 + tol or below
//               1 - tol);
//   cannot tell the interval crosses a bound (too wide to decide), or fewer
//               than kMinRounds rounds gave a ratio.
// So "agree" is never said of a figure whose rounds do not all (at 5 rounds
// or fewer), or nearly all, lie within ±10% of the reference: a figure 2x off
// is "disagree", or "cannot tell" when the rounds are that noisy.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tracebench::crosscheck {

inline constexpr double kTolerance = 0.10;
inline constexpr std::size_t kMinRounds = 3;

enum class Verdict { kAgree, kDisagree, kCannotTell, kNotMeasured };

// "agree", "disagree", "cannot tell", "not measured".
const char* verdict_word(Verdict v);

// The ratio suite/reference of one round; NaN when either figure is missing
// or the reference is not above zero (it measured no cost to compare with).
double round_ratio(double suite_ns, double reference_ns);

struct RatioInterval {
  std::size_t n = 0;  // rounds with a ratio
  double median = 0, low = 0, high = 0;
  double confidence = 0;  // what [low, high] covers
};

// Over the rounds' ratios (NaN ones left out).
RatioInterval ratio_interval(const std::vector<double>& ratios);

// The verdict on an interval; cannot tell below kMinRounds ratios.
Verdict decide(const RatioInterval& r, double tolerance = kTolerance);

// Why the verdict, in words ("the whole interval lies within ±10%", ...).
// Fewer than kMinRounds ratios: "N steady round(s) gave a ratio".
std::string verdict_reason(const RatioInterval& r, Verdict v, double tolerance = kTolerance);

// The median of the finite values (NaN when none).
double median_of(std::vector<double> v);

}  // namespace tracebench::crosscheck
