// Change points in a series of benchmark figures (one per run, in time
// order): E-Divisive with means (Matteson & James 2014), as Hunter / Apache
// Otava use it.  The energy statistic finds the split that best separates
// the series into two distributions; a permutation test says whether that
// split is more than noise; the halves are searched again until no split is
// significant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tracebench {

struct ChangePoint {
  std::size_t index = 0;  // the first point after the change
  double before_median = 0, after_median = 0;
  double relative_change = 0;  // after / before - 1
  double p_value = 1;          // permutation test
};

struct ChangePointOptions {
  double alpha = 0.05;          // significance level of the permutation test
  int permutations = 199;       // p-value resolution 1 / (permutations + 1)
  std::size_t min_segment = 3;  // points on each side of a change
  double min_change = 0;        // |relative change| below this is not reported
  std::uint64_t seed = 1;       // the same series gives the same answer
};

// Change points in time order.
std::vector<ChangePoint> change_points(const std::vector<double>& series, const ChangePointOptions& o = {});

}  // namespace tracebench
