#include "selftest_verdict.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tracebench/stats.h"

namespace tbdelay {
namespace {

double detail(const nlohmann::json& d, const char* key) {
  const auto it = d.find(key);
  return it != d.end() && it->is_number() ? it->get<double>() : NAN;
}

// A figure's noise over the rounds: its rounds' 95% intervals (half, the
// median of them) or half the spread between rounds, the larger; 0 for none.
double spread(const std::vector<double>& figures, const std::vector<double>& halfwidths) {
  if (figures.empty()) return 0.0;
  const auto [lo, hi] = std::minmax_element(figures.begin(), figures.end());
  return std::max(halfwidths.empty() ? 0.0 : median(halfwidths), 0.5 * (*hi - *lo));
}

}  // namespace

double median(std::vector<double> v) { return v.empty() ? NAN : tracebench::median_of(std::move(v)); }

double calibration_uncertainty(const nlohmann::json& probe, double ns) {
  const double firing = detail(probe, "firing_ns"), iqr = detail(probe, "firing_iqr_ns");
  if (std::isnan(firing) || std::isnan(iqr)) return 0.0;
  return std::fabs(firing - ns) + 0.5 * iqr;
}

// In the blocks: the mean spin beyond the shortest.  At calibration: the
// firing beyond the shortest firing's cost and the spin.
double spin_excess(const nlohmann::json& probe) {
  const double spent = detail(probe, "spent_ns_per_firing"), least_spent = detail(probe, "min_spent_ns");
  const double firing = detail(probe, "firing_ns"), least_firing = detail(probe, "least_firing_ns");
  const double spin = detail(probe, "spin_ns");
  const double in_blocks = spent - least_spent, at_calibration = std::max(0.0, firing - least_firing - spin);
  if (std::isnan(in_blocks) || std::isnan(at_calibration)) return 0.0;
  return std::max(0.0, in_blocks - at_calibration);
}

double bound_of(const CaseFigures& c, double floor_ns) {
  if (!c.kernel) return std::max(0.03 * c.ns, 2.0 * floor_ns);
  const double uncertainty = c.uncertainties.empty() ? 0.0 : median(c.uncertainties);
  return std::max(0.03 * c.ns, 2.0 * c.floor_per_event_ns) + uncertainty;
}

Judgement judge_case(const CaseFigures& c, double floor_ns) {
  Judgement j;
  if (c.medians.empty()) {
    if (!c.unsteady.empty()) j.verdict = Verdict::kCannotJudge;
    return j;
  }
  j.recovered = median(c.medians);
  j.known = c.references.empty() ? c.ns : median(c.references);
  j.error = j.recovered - j.known;
  j.noise = std::hypot(spread(c.medians, c.halfwidths), spread(c.references, c.reference_halfwidths));
  j.bound = bound_of(c, floor_ns);
  j.excess = c.kernel && !c.excesses.empty() ? median(c.excesses) : 0.0;
  // The distance from [known, known + excess].
  const double off = j.error < 0 ? -j.error : std::max(0.0, j.error - j.excess);
  j.verdict = off <= j.bound ? Verdict::kPass : off - j.bound > 3.0 * j.noise ? Verdict::kFail : Verdict::kCannotJudge;
  // The module spun by a clock whose rate moved from its calibration: its N
  // was not N ns, whatever was recovered.
  j.clock_moved = c.kernel && !(std::fabs(c.clock_ratio - 1.0) <= 0.02);
  if (j.clock_moved) j.verdict = Verdict::kCannotJudge;
  return j;
}

bool another_round(int done, int asked, const std::vector<Verdict>& verdicts) {
  if (done < asked) return true;
  const auto any = [&](Verdict v) { return std::find(verdicts.begin(), verdicts.end(), v) != verdicts.end(); };
  return any(Verdict::kCannotJudge) && !any(Verdict::kFail) && done < std::max(asked, kRoundsWhileUndecided);
}

}  // namespace tbdelay
