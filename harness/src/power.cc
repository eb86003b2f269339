#include "tracebench/power.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "tracebench/stats.h"

namespace tracebench {

double t_quantile(double p, double df) {
  if (!std::isfinite(df)) return boost::math::quantile(boost::math::normal(), p);
  return boost::math::quantile(boost::math::students_t(df), p);
}

double sample_sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  return summarize(v).stddev;
}

double robust_sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  return 1.4826 * summarize(v).mad;
}

double mde_from_se(double se, double df, double alpha, double power) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!std::isfinite(se) || se < 0 || !(df > 0) || !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1)) return kInf;
  if (se == 0) return 0;
  return (t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) * se;
}

double mde_welch(double sd_a, std::size_t n_a, double sd_b, std::size_t n_b, double alpha, double power) {
  if (n_a < 2 || n_b < 2) return std::numeric_limits<double>::infinity();
  const double va = sd_a * sd_a / static_cast<double>(n_a), vb = sd_b * sd_b / static_cast<double>(n_b);
  const double se = std::sqrt(va + vb);
  if (se == 0) return 0;
  const double df =
      (va + vb) * (va + vb) / (va * va / static_cast<double>(n_a - 1) + vb * vb / static_cast<double>(n_b - 1));
  return mde_from_se(se, df, alpha, power);
}

double mde_mann_whitney(double sd, std::size_t n_a, std::size_t n_b, double alpha, double power) {
  if (n_a < 2 || n_b < 2) return std::numeric_limits<double>::infinity();
  const double se = sd * std::sqrt(std::numbers::pi / 3.0) *
                    std::sqrt(1.0 / static_cast<double>(n_a) + 1.0 / static_cast<double>(n_b));
  return mde_from_se(se, std::numeric_limits<double>::infinity(), alpha, power);
}

double mde_paired(double sd, std::size_t n, double alpha, double power) {
  if (n < 2) return std::numeric_limits<double>::infinity();
  return mde_from_se(sd / std::sqrt(static_cast<double>(n)), static_cast<double>(n - 1), alpha, power);
}

}  // namespace tracebench
