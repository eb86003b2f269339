#include "round_stats.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tracebench/stats.h"

namespace tracebench::crosscheck {

const char* verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kAgree: return "agree";
    case Verdict::kDisagree: return "disagree";
    case Verdict::kCannotTell: return "cannot tell";
    case Verdict::kNotMeasured: return "not measured";
  }
  return "?";
}

double round_ratio(double suite_ns, double reference_ns) {
  if (!std::isfinite(suite_ns) || !std::isfinite(reference_ns) || reference_ns <= 0) return NAN;
  return suite_ns / reference_ns;
}

RatioInterval ratio_interval(const std::vector<double>& ratios) {
  std::vector<double> finite;
  for (double r : ratios) {
    if (std::isfinite(r)) finite.push_back(r);
  }
  RatioInterval out;
  out.n = finite.size();
  if (finite.empty()) return out;
  const MedianCI ci = median_ci(finite, 0.95);
  out.median = ci.median;
  out.low = ci.low;
  out.high = ci.high;
  out.confidence = ci.confidence;
  return out;
}

Verdict decide(const RatioInterval& r, double tolerance) {
  if (r.n < kMinRounds) return Verdict::kCannotTell;
  const double lo = 1.0 - tolerance, hi = 1.0 + tolerance;
  if (r.low >= lo && r.high <= hi) return Verdict::kAgree;
  if (r.high < lo || r.low > hi) return Verdict::kDisagree;
  return Verdict::kCannotTell;
}

std::string verdict_reason(const RatioInterval& r, Verdict v, double tolerance) {
  const int pct = static_cast<int>(std::lround(tolerance * 100));
  switch (v) {
    case Verdict::kAgree: return fmt::format("the whole interval lies within ±{}%", pct);
    case Verdict::kDisagree:
      return r.low > 1.0 ? fmt::format("the whole interval lies above {:.2f} (+{}%)", 1.0 + tolerance, pct)
                         : fmt::format("the whole interval lies below {:.2f} (-{}%)", 1.0 - tolerance, pct);
    case Verdict::kCannotTell:
      if (r.n < kMinRounds) return fmt::format("{} steady round(s) gave a ratio, fewer than {}", r.n, kMinRounds);
      return fmt::format("the interval crosses a bound of ±{}%: too wide to decide (more rounds, a quieter host)", pct);
    case Verdict::kNotMeasured: return "not measured";
  }
  return "";
}

double median_of(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace tracebench::crosscheck
