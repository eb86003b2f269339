// The sequential test of `tracebench ab`: an always-valid mixture sequential
// probability ratio test (mSPRT) on the pairs' log-ratio differences, whose
// error rates hold however often it is looked at and whenever it stops.
//
// Data: d_i = log(B_i / A_i), one per interleaved pair, taken as normal with
// unknown mean delta and unknown sd sigma.  The statistic is the Bayes factor
// of the one-sample t test with a normal mixture N(0, tau^2) over the
// standardized effect delta/sigma and the right-Haar prior 1/sigma over the
// sd (Rouder et al. 2009's form with g = tau^2):
//   BF_n(t) = (1 + n tau^2)^(-1/2) *
//             [(1 + t^2/nu) / (1 + t^2 / ((1 + n tau^2) nu))]^((nu + 1)/2),
// with t the one-sample t statistic of the n differences and nu = n - 1.
// Validity with the variance estimated: this Bayes factor depends on the
// data only through their scale-invariant part (the t statistics), and with
// the right-Haar prior it is a nonnegative martingale of mean 1 under
// delta = 0 in that filtration (Pérez-Ortiz, Lardy, de Heide, Grünwald 2024,
// "E-statistics, group invariance and anytime-valid testing").  By Ville's
// inequality P(sup_n BF_n >= 1/alpha) <= alpha: rejecting the first time it
// reaches 1/alpha keeps the false-alarm rate at alpha under optional
// stopping.  A plug-in sd in a normal-known-variance mSPRT would not.
//
// Inverting the test at every delta0 gives a confidence sequence: the deltas
// not rejected, mean +- c_n * s / sqrt(n), which covers the true delta at all
// n at once with probability 1 - alpha.  The verdicts read it, with
// b = log(1 + threshold):
//   same         it lies inside (-b, b): changes as large as the threshold
//                are excluded (a change shown to be real but smaller than
//                the threshold is same, as in compare)
//   regression   otherwise, its lower end > 0: B is slower, and a change
//                of the threshold is not excluded
//   improvement  otherwise, its upper end < 0
// and none of these until the budget is spent: inconclusive.  So a
// regression when B is not slower, or a same when the change is at least
// the threshold, each happen with probability at most alpha; true changes
// between 0 and the threshold may be called either (the nearer the
// threshold, the more often regression).
// Why a mixture SPRT rather than a group-sequential design: pairs arrive one
// at a time at a cost that differs from machine to machine, so the number of
// looks and the maximum sample are not known in advance; the mSPRT may look
// after every pair and stop at any budget, where alpha spending needs the
// information fractions planned.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tracebench {

// The mixture's sd over delta/sigma: 1 is tuned to effects about one sd of
// the pair differences, where a threshold of a few percent sits on a machine
// whose runs differ by a few percent.
inline constexpr double kMixtureTau = 1.0;

// BF_n for a t statistic from n >= 2 values; 1 for fewer.
double t_mixture_bayes_factor(double t, std::size_t n, double tau = kMixtureTau);

// The half-width, in units of s / sqrt(n), of the confidence sequence at n:
// the |t| at which BF_n reaches 1/alpha; infinite when no t reaches it.
double confidence_sequence_factor(std::size_t n, double alpha, double tau = kMixtureTau);

struct SequentialState {
  std::size_t n = 0;
  double mean = 0, sd = 0;   // of the log-ratio differences
  double bayes_factor = 1;   // against delta = 0
  double low = 0, high = 0;  // the confidence sequence on delta (log scale); +-inf while unbounded
  std::string verdict;       // "regression", "improvement", "same", or "" (undecided)
};

// The state after the differences `d` (log ratios), at `alpha` and the
// relative `threshold`.
SequentialState sequential_test(const std::vector<double>& d, double alpha, double threshold);

}  // namespace tracebench
