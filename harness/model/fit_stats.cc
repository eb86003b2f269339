// The small statistics the cost model's fit uses (fit_internal.h): moments,
// least squares (a line, or up to three columns by the normal equations,
// weighted rows with a bootstrap over them), resampling and percentile
// intervals.
#include <algorithm>
#include <cmath>

#include "harness/model/fit_internal.h"
#include "tracebench/stats.h"

namespace tracebench::model::fit_detail {

double median_of(std::vector<double> v) { return summarize(std::move(v)).p50; }

Moments moments(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  Moments m;
  for (std::size_t i = 0; i < x.size(); ++i) {
    m.mx += x[i] / n;
    m.my += y[i] / n;
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    m.sxy += (x[i] - m.mx) * (y[i] - m.my);
    m.sxx += (x[i] - m.mx) * (x[i] - m.mx);
    m.syy += (y[i] - m.my) * (y[i] - m.my);
  }
  return m;
}

Line least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  const Moments m = moments(x, y);
  Line l;
  l.slope = m.sxx > 0 ? m.sxy / m.sxx : 0;
  l.intercept = m.my - l.slope * m.mx;
  return l;
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const Moments m = moments(a, b);
  return m.sxx > 0 && m.syy > 0 ? m.sxy / std::sqrt(m.sxx * m.syy) : 0.0;
}

std::vector<double> resample(const std::vector<double>& v, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
  std::vector<double> r(v.size());
  for (double& x : r) x = v[pick(rng)];
  return r;
}

void interval(std::vector<double> draws, Param* p) {
  std::sort(draws.begin(), draws.end());
  p->ci_low = percentile_sorted(draws, 2.5);
  p->ci_high = percentile_sorted(draws, 97.5);
}

Param median_param(const std::vector<double>& v, int bootstrap, std::mt19937_64& rng, std::vector<double>* draws) {
  Param p;
  p.cycles = median_of(v);
  p.n = v.size();
  std::vector<double> d;
  for (int b = 0; b < bootstrap; ++b) d.push_back(median_of(resample(v, rng)));
  interval(d, &p);
  if (draws) *draws = std::move(d);
  return p;
}

bool solve_least_squares(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                         std::vector<double>* b) {
  const std::size_t k = x.empty() ? 0 : x[0].size();
  if (k == 0 || x.size() < k) return false;
  std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0));
  for (std::size_t r = 0; r < x.size(); ++r)
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < k; ++j) a[i][j] += x[r][i] * x[r][j];
      a[i][k] += x[r][i] * y[r];
    }
  std::vector<double> diag(k);
  for (std::size_t i = 0; i < k; ++i) diag[i] = a[i][i];
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    std::swap(a[c], a[piv]);
    // Relative to the column's own scale: a column that is a combination of
    // the others leaves (almost) nothing here.
    if (!(std::fabs(a[c][c]) > 1e-9 * std::max(diag[c], 1e-300))) return false;
    for (std::size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (std::size_t j = c; j <= k; ++j) a[r][j] -= f * a[c][j];
    }
  }
  b->assign(k, 0);
  for (std::size_t i = 0; i < k; ++i) (*b)[i] = a[i][k] / a[i][i];
  return true;
}

bool fit_rows(const std::vector<std::vector<double>>& x, const std::vector<double>& y, int bootstrap,
              std::mt19937_64& rng, RowFit* f, const std::vector<double>& scale) {
  const std::size_t k = x.empty() ? 0 : x[0].size();
  // Each row and its y times its scale (weighted least squares, weights the
  // scales squared); the quality is said unscaled.
  auto solve = [&](const std::vector<std::size_t>& pick, std::vector<double>* b) {
    std::vector<std::vector<double>> xs;
    std::vector<double> ys;
    for (std::size_t i : pick) {
      const double c = scale.empty() ? 1.0 : scale[i];
      xs.push_back(x[i]);
      for (double& v : xs.back()) v *= c;
      ys.push_back(y[i] * c);
    }
    return solve_least_squares(xs, ys, b);
  };
  std::vector<std::size_t> all(x.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (x.size() < k + 1 || !solve(all, &f->b)) return false;
  double my = 0, ss_tot = 0, ss_res = 0;
  for (double v : y) my += v / static_cast<double>(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    double pred = 0;
    for (std::size_t j = 0; j < k; ++j) pred += f->b[j] * x[i][j];
    ss_tot += (y[i] - my) * (y[i] - my);
    ss_res += (y[i] - pred) * (y[i] - pred);
    f->worst_residual = std::max(f->worst_residual, std::fabs(y[i] - pred));
  }
  f->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1.0;
  f->draws.assign(k, {});
  std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
  for (int it = 0; it < bootstrap; ++it) {
    std::vector<std::size_t> rows;
    std::vector<double> bb;
    for (std::size_t i = 0; i < x.size(); ++i) rows.push_back(pick(rng));
    if (!solve(rows, &bb)) continue;
    for (std::size_t j = 0; j < k; ++j) f->draws[j].push_back(bb[j]);
  }
  return true;
}

}  // namespace tracebench::model::fit_detail
