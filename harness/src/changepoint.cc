// E-Divisive with means (tracebench/changepoint.h).  For a segment of n
// points and a split at t (t points before it), with D the pairwise
// distances |x_i - x_j|:
//   Q(t) = t(n-t)/n * ( 2/(t(n-t)) * sum_{i<t<=j} D_ij
//                       - 1/C(t,2) * sum_{i<j<t} D_ij - 1/C(n-t,2) * sum_{t<=i<j} D_ij )
// The sums move with t in O(n) each, so a scan over t costs O(n^2), and the
// permutation test repeats the scan on shuffled copies of the segment.
#include "tracebench/changepoint.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "tracebench/stats.h"

namespace tracebench {
namespace {

// The best split of x (index into x, > 0) and its statistic; 0 when the
// segment is too short for two sides of min_segment points.
std::pair<std::size_t, double> best_split(const std::vector<double>& x, std::size_t min_segment) {
  const std::size_t n = x.size();
  if (n < 2 * min_segment || min_segment < 2) return {0, 0};
  auto d = [&](std::size_t i, std::size_t j) { return std::fabs(x[i] - x[j]); };
  // t = 0: everything on the right.
  double between = 0, left = 0, right = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) right += d(i, j);
  std::size_t best_t = 0;
  double best_q = -1;
  for (std::size_t t = 1; t + min_segment <= n; ++t) {
    const std::size_t k = t - 1;  // moves from the right side to the left
    double to_left = 0, to_right = 0;
    for (std::size_t i = 0; i < k; ++i) to_left += d(i, k);
    for (std::size_t j = k + 1; j < n; ++j) to_right += d(k, j);
    between += to_right - to_left;
    left += to_left;
    right -= to_right;
    if (t < min_segment) continue;
    const double a = static_cast<double>(t), b = static_cast<double>(n - t), nn = static_cast<double>(n);
    const double q = a * b / nn * (2 * between / (a * b) - left / (a * (a - 1) / 2) - right / (b * (b - 1) / 2));
    if (q > best_q) {
      best_q = q;
      best_t = t;
    }
  }
  return {best_t, best_q};
}

void search(const std::vector<double>& x, std::size_t lo, std::size_t hi, const ChangePointOptions& o,
            std::mt19937_64& rng, std::vector<ChangePoint>* out) {
  std::vector<double> seg(x.begin() + static_cast<std::ptrdiff_t>(lo), x.begin() + static_cast<std::ptrdiff_t>(hi));
  const auto [t, q] = best_split(seg, o.min_segment);
  if (t == 0) return;
  int as_large = 0;
  std::vector<double> shuffled = seg;
  for (int p = 0; p < o.permutations; ++p) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    if (best_split(shuffled, o.min_segment).second >= q) ++as_large;
  }
  const double p_value = (as_large + 1.0) / (o.permutations + 1.0);
  if (p_value > o.alpha) return;
  ChangePoint c;
  c.index = lo + t;
  c.before_median = median_of({seg.begin(), seg.begin() + static_cast<std::ptrdiff_t>(t)});
  c.after_median = median_of({seg.begin() + static_cast<std::ptrdiff_t>(t), seg.end()});
  c.relative_change = c.before_median != 0 ? c.after_median / c.before_median - 1 : 0;
  c.p_value = p_value;
  search(x, lo, lo + t, o, rng, out);
  if (std::fabs(c.relative_change) >= o.min_change) out->push_back(c);
  search(x, lo + t, hi, o, rng, out);
}

}  // namespace

std::vector<ChangePoint> change_points(const std::vector<double>& series, const ChangePointOptions& o) {
  std::vector<ChangePoint> out;
  std::mt19937_64 rng(o.seed);
  search(series, 0, series.size(), o, rng, &out);
  return out;
}

}  // namespace tracebench
