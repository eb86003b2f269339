// A model's terms checked as costs before anything predicts with them
// (tracebench/model.h: check_model_terms, check_fixed_against_points).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "tracebench/model.h"

namespace tracebench::model {

namespace {

// The probe's own costs, each measured directly (the fixed cost: the line
// through the overhead medians at payload 0; a byte's, a handler's, a false
// predicate's, a burst's first event's): a negative one beyond the noise of
// a disabled probe, with its whole interval below zero, is not a cost (the
// slack: cycles, or cycles per byte).  The other terms are not held to a
// sign: differences (action_over_empty, contention_N, probe_per_wakeup) may
// be negative, and so may the consumer's least-squares terms, where another
// term takes up their share; what a prediction adds up is held to its sign
// by check_prediction_costs() instead.
const std::map<std::string, double> kSignedCostTerms = {
    {"fixed", 50}, {"per_byte", 0.5}, {"per_ecb", 50}, {"false_predicate", 50}, {"idle_start", 50}};

std::string entry_name(const Entry& e) { return fmt::format("{} {} {}", e.tracer, e.probe_kind, action_label(e)); }

Status check_term(const Entry& e, const std::string& name, const Param& p) {
  if (!p.ok()) return Status::ok();
  auto bad = [&](const std::string& what) {
    return Status::error(fmt::format("model entry {}: term {}: {}", entry_name(e), name, what));
  };
  const double v = *p.cycles;
  for (const auto& [field, x] :
       {std::pair{"cycles", v}, std::pair{"ci_low", p.ci_low}, std::pair{"ci_high", p.ci_high}}) {
    if (!std::isfinite(x)) return bad(fmt::format("{} is {}, not a finite number", field, x));
  }
  // The estimate is held to a magnitude a cost can have; its interval only
  // to being finite and ordered: a wide interval (a consumer term fitted
  // from few, noisy runs) says the term is uncertain, not that it is absurd.
  if (std::fabs(v) > kMaxTermCycles)
    return bad(
        fmt::format("{:.6g} cycles is beyond {:.0e} cycles (a second of a GHz CPU for each event, record or "
                    "wakeup it counts)",
                    v, kMaxTermCycles));
  if (p.ci_low > p.ci_high) return bad(fmt::format("interval [{}, {}] is inverted", p.ci_low, p.ci_high));
  // A bootstrap interval holds its estimate, or nearly: one more than twice
  // the interval's width and magnitude away is not that estimate's interval.
  const double slack = 2 * std::max({p.ci_high - p.ci_low, std::fabs(p.ci_low), std::fabs(p.ci_high)}) + 1;
  if (v < p.ci_low - slack || v > p.ci_high + slack)
    return bad(fmt::format("{} cycles lies far outside its own interval [{}, {}]", v, p.ci_low, p.ci_high));
  if (std::string why = negative_cost(name, p); !why.empty()) return bad(why);
  return Status::ok();
}

}  // namespace

bool determined(const Param& p) { return !p.ok() || p.ci_high - p.ci_low <= 10 * std::fabs(*p.cycles); }

std::string negative_cost(const std::string& term, const Param& p) {
  const auto slack = kSignedCostTerms.find(term);
  if (!p.ok() || slack == kSignedCostTerms.end() || !(*p.cycles < -slack->second && p.ci_high < 0)) return "";
  return fmt::format("{:.4g} cycles, interval [{:.4g}, {:.4g}]: a cost cannot be negative", *p.cycles, p.ci_low,
                     p.ci_high);
}

Status check_model_terms(const Model& m) {
  for (const auto& e : m.entries) {
    for (const auto& [name, p] : named_params(e)) TB_TRY(check_term(e, name, *p));
    if (e.wakeups_per_record && (!std::isfinite(*e.wakeups_per_record) || *e.wakeups_per_record < 0))
      return Status::error(fmt::format("model entry {}: wakeups_per_record {} is not a share of records", entry_name(e),
                                       *e.wakeups_per_record));
    if (e.idle_gap_us && (!std::isfinite(*e.idle_gap_us) || *e.idle_gap_us <= 0))
      return Status::error(fmt::format("model entry {}: idle_gap_us {} is not a gap", entry_name(e), *e.idle_gap_us));
    if (e.consumer_fit && e.consumer_fit->user_fraction &&
        !(*e.consumer_fit->user_fraction >= 0 && *e.consumer_fit->user_fraction <= 1))
      return Status::error(fmt::format("model entry {}: the consumer's user_fraction {} is not a share of its time",
                                       entry_name(e), *e.consumer_fit->user_fraction));
  }
  return Status::ok();
}

Status check_fixed_against_points(const Model& m) {
  for (const auto& e : m.entries) {
    if (!e.fixed.ok() || e.points.empty()) continue;
    double lo = e.points.front().median_cycles, hi = lo, top = 0;
    std::uint64_t bytes = 0;
    for (const auto& p : e.points) {
      lo = std::min(lo, p.median_cycles);
      hi = std::max(hi, p.median_cycles);
      top = std::max(top, std::fabs(p.median_cycles));
      bytes = std::max(bytes, p.payload_bytes);
    }
    // The line through the points at payload 0 lies within their range,
    // widened by what the per-byte slope moves across the payloads, the
    // worst residual and, generously, half the largest figure.
    const double slope = e.per_byte.ok() ? std::fabs(*e.per_byte.cycles) * static_cast<double>(bytes) : 0;
    const double room = slope + e.worst_residual_cycles.value_or(0) + 0.5 * top + 100;
    const double fixed = *e.fixed.cycles;
    if (fixed < lo - room || fixed > hi + room)
      return Status::error(fmt::format(
          "model entry {}: the fitted fixed cost {:.0f} cycles is absurd for its inputs, whose per-payload medians "
          "span {:.0f}..{:.0f} cycles: the runs fitted are inconsistent (check them with tracebench compare)",
          entry_name(e), fixed, lo, hi));
  }
  return Status::ok();
}

}  // namespace tracebench::model
