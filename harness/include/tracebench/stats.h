// Descriptive statistics of a sample distribution, and the confidence
// interval of a median across repetitions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tracebench {

struct Summary {
  std::size_t n = 0;
  double min = 0, p10 = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double mean = 0, stddev = 0;
  double cv = 0;   // stddev / mean (0 when mean == 0)
  double mad = 0;  // median absolute deviation (unscaled)
};

// Percentile with linear interpolation between closest ranks; `p` is in
// percent (0..100), not a fraction.  `sorted` must be sorted ascending.
double percentile_sorted(const std::vector<double>& sorted, double p);

Summary summarize(std::vector<double> values);

// The median (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values);

// Distribution-free confidence interval for the median from order
// statistics (binomial): the narrowest symmetric [x(j), x(n-1-j)] whose
// coverage is >= `level`.  With too few values for `level`, the interval is
// the full range and `confidence` says what it actually covers.
struct MedianCI {
  double median = 0, low = 0, high = 0;
  double confidence = 0;
  std::size_t n = 0;
};
MedianCI median_ci(std::vector<double> values, double level = 0.95);

// An interval's label: the confidence it actually has, "96.9%" or "50%"
// (with few repetitions it is below the level asked for; every reporter
// labels an interval with this, never with the level).
std::string confidence_label(double confidence);

// Flags outliers that look like an interrupt or preemption landed in the
// sample: above median + max(10 * MAD, min_gap).
std::vector<bool> flag_disturbed(const std::vector<double>& values, double min_gap);

void to_json(nlohmann::json& j, const Summary& s);
void from_json(const nlohmann::json& j, Summary& s);
void to_json(nlohmann::json& j, const MedianCI& c);
void from_json(const nlohmann::json& j, MedianCI& c);

}  // namespace tracebench
