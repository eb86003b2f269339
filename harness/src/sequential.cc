#include "tracebench/sequential.h"

#include <cmath>
#include <limits>

#include "tracebench/power.h"

namespace tracebench {

double t_mixture_bayes_factor(double t, std::size_t n, double tau) {
  if (n < 2) return 1;
  const double nu = static_cast<double>(n - 1);
  const double k = 1 + static_cast<double>(n) * tau * tau;
  if (!std::isfinite(t)) return std::pow(k, nu / 2);  // the limit as |t| grows
  const double x = t * t / nu;
  return std::exp(-0.5 * std::log(k) + (nu + 1) / 2 * (std::log1p(x) - std::log1p(x / k)));
}

double confidence_sequence_factor(std::size_t n, double alpha, double tau) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (n < 2) return kInf;
  const double nu = static_cast<double>(n - 1);
  const double k = 1 + static_cast<double>(n) * tau * tau;
  // BF = 1/alpha  <=>  (1 + x) / (1 + x/k) = R with x = t^2/nu and
  // R = (sqrt(k)/alpha)^(2/(nu+1)); solvable when R < k.
  const double log_r = 2 / (nu + 1) * (0.5 * std::log(k) - std::log(alpha));
  const double r = std::exp(log_r);
  if (r >= k) return kInf;
  const double x = (r - 1) / (1 - r / k);
  return std::sqrt(x * nu);
}

SequentialState sequential_test(const std::vector<double>& d, double alpha, double threshold) {
  SequentialState s;
  s.n = d.size();
  s.low = -std::numeric_limits<double>::infinity();
  s.high = std::numeric_limits<double>::infinity();
  if (s.n == 0) return s;
  double sum = 0;
  for (double x : d) sum += x;
  s.mean = sum / static_cast<double>(s.n);
  s.sd = sample_sd(d);
  if (s.n < 2) return s;
  const double se = s.sd / std::sqrt(static_cast<double>(s.n));
  const double t = se > 0 ? s.mean / se : (s.mean == 0 ? 0 : std::numeric_limits<double>::infinity());
  s.bayes_factor = t_mixture_bayes_factor(t, s.n);
  const double c = confidence_sequence_factor(s.n, alpha);
  if (std::isfinite(c)) {
    s.low = s.mean - c * se;
    s.high = s.mean + c * se;
  }
  const double bound = std::log1p(threshold);
  if (s.low > -bound && s.high < bound)
    s.verdict = "same";
  else if (s.low > 0)
    s.verdict = "regression";
  else if (s.high < 0)
    s.verdict = "improvement";
  return s;
}

}  // namespace tracebench
