#include "tracebench/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

namespace tracebench {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  if (p <= 0) return sorted.front();
  if (p >= 100) return sorted.back();
  double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

Summary summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.p10 = percentile_sorted(v, 10);
  s.p50 = percentile_sorted(v, 50);
  s.p90 = percentile_sorted(v, 90);
  s.p99 = percentile_sorted(v, 99);
  // Welford for a stable variance.
  double mean = 0, m2 = 0;
  std::size_t k = 0;
  for (double x : v) {
    ++k;
    double d = x - mean;
    mean += d / static_cast<double>(k);
    m2 += d * (x - mean);
  }
  s.mean = mean;
  s.stddev = v.size() > 1 ? std::sqrt(m2 / static_cast<double>(v.size() - 1)) : 0;
  s.cv = mean != 0 ? s.stddev / std::fabs(mean) : 0;
  std::vector<double> dev(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) dev[i] = std::fabs(v[i] - s.p50);
  std::sort(dev.begin(), dev.end());
  s.mad = percentile_sorted(dev, 50);
  return s;
}

namespace {
// Coverage of [x(j), x(n-1-j)] (0-based order statistics): with K the number
// of values below the true median, K ~ Binomial(n, 1/2), the interval covers
// it when j+1 <= K <= n-1-j.
double coverage(std::size_t n, std::size_t j) {
  // log-space binomial pmf to stay finite for large n.
  double total = 0;
  for (std::size_t k = j + 1; k + j + 1 <= n; ++k) {
    double lg = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
                std::lgamma(static_cast<double>(n - k) + 1) - static_cast<double>(n) * std::log(2.0);
    total += std::exp(lg);
  }
  return total;
}
}  // namespace

MedianCI median_ci(std::vector<double> v, double level) {
  MedianCI ci;
  ci.n = v.size();
  if (v.empty()) return ci;
  std::sort(v.begin(), v.end());
  ci.median = percentile_sorted(v, 50);
  std::size_t n = v.size();
  // Largest j (narrowest interval) that still covers `level`.
  std::size_t best = 0;
  double best_cov = coverage(n, 0);
  for (std::size_t j = 1; 2 * j < n; ++j) {
    double c = coverage(n, j);
    if (c < level) break;
    best = j;
    best_cov = c;
  }
  ci.low = v[best];
  ci.high = v[n - 1 - best];
  ci.confidence = best_cov;
  return ci;
}

std::string confidence_label(double confidence) {
  // One decimal, never rounded up past what it covers (0.9499 is not 95%).
  const double tenths = std::floor(std::max(0.0, std::min(1.0, confidence)) * 1000.0 + 1e-9);
  const auto whole = static_cast<long long>(tenths / 10);
  const auto decimal = static_cast<long long>(tenths) % 10;
  return decimal == 0 ? std::to_string(whole) + "%" : std::to_string(whole) + "." + std::to_string(decimal) + "%";
}

std::vector<bool> flag_disturbed(const std::vector<double>& values, double min_gap) {
  std::vector<bool> flags(values.size(), false);
  if (values.size() < 8) return flags;
  std::vector<double> sorted(values);
  std::sort(sorted.begin(), sorted.end());
  double med = percentile_sorted(sorted, 50);
  std::vector<double> dev(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) dev[i] = std::fabs(sorted[i] - med);
  std::sort(dev.begin(), dev.end());
  double mad = percentile_sorted(dev, 50);
  double limit = med + std::max(10.0 * mad, min_gap);
  for (std::size_t i = 0; i < values.size(); ++i) flags[i] = values[i] > limit;
  return flags;
}

void to_json(nlohmann::json& j, const Summary& s) {
  j = nlohmann::json{{"n", s.n},           {"min", s.min}, {"p10", s.p10}, {"p50", s.p50},
                     {"p90", s.p90},       {"p99", s.p99}, {"max", s.max}, {"mean", s.mean},
                     {"stddev", s.stddev}, {"cv", s.cv},   {"mad", s.mad}};
}
void from_json(const nlohmann::json& j, Summary& s) {
  j.at("n").get_to(s.n);
  j.at("min").get_to(s.min);
  j.at("p10").get_to(s.p10);
  j.at("p50").get_to(s.p50);
  j.at("p90").get_to(s.p90);
  j.at("p99").get_to(s.p99);
  j.at("max").get_to(s.max);
  j.at("mean").get_to(s.mean);
  j.at("stddev").get_to(s.stddev);
  j.at("cv").get_to(s.cv);
  j.at("mad").get_to(s.mad);
}
void to_json(nlohmann::json& j, const MedianCI& c) {
  j = nlohmann::json{
      {"median", c.median}, {"ci_low", c.low}, {"ci_high", c.high}, {"ci_confidence", c.confidence}, {"n", c.n}};
}
void from_json(const nlohmann::json& j, MedianCI& c) {
  j.at("median").get_to(c.median);
  j.at("ci_low").get_to(c.low);
  j.at("ci_high").get_to(c.high);
  j.at("ci_confidence").get_to(c.confidence);
  j.at("n").get_to(c.n);
}

}  // namespace tracebench
