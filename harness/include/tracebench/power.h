// The minimum detectable effect (MDE) of a comparison: the smallest change
// the test that was used would find with a given power at its significance
// level, from the spread it observed and the number of values a side.
// A comparison that could not have seen a change as large as the threshold
// says so ("inconclusive") instead of "same".
#pragma once

#include <cstddef>
#include <vector>

namespace tracebench {

// Quantile of Student's t with `df` degrees of freedom (Boost.Math); a df
// that is not finite gives the standard normal's quantile.
double t_quantile(double p, double df);

// Sample standard deviation (n - 1); 0 for fewer than two values.
double sample_sd(const std::vector<double>& v);

// A robust standard deviation: 1.4826 * MAD (the sd of normal data), for the
// rank test's spread, which outliers must not inflate.
double robust_sd(const std::vector<double>& v);

// Two-sided test at `alpha`: a true difference of
//   (t_{1-alpha/2, df} + t_{power, df}) * se
// makes the statistic exceed its critical value with probability `power`
// (the noncentral t approximated by a shifted central t, which is close for
// df >= 3 and conservative below).  Absolute MDE, in the values' unit;
// infinite when se or df cannot be had.
double mde_from_se(double se, double df, double alpha, double power);

// Welch's t on two samples of sd_a, sd_b with n_a, n_b values: se and the
// Welch-Satterthwaite df.
double mde_welch(double sd_a, std::size_t n_a, double sd_b, std::size_t n_b, double alpha, double power);

// Mann-Whitney U on n_a and n_b values of spread `sd` (robust): its
// asymptotic relative efficiency to the t test on normal data is 3/pi, so it
// needs pi/3 times the values for the same power; the normal approximation
// (as the U test's p uses).
double mde_mann_whitney(double sd, std::size_t n_a, std::size_t n_b, double alpha, double power);

// One-sample (paired) t on n differences of sd `sd`, df n - 1.
double mde_paired(double sd, std::size_t n, double alpha, double power);

}  // namespace tracebench
