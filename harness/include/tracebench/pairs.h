// Runs recorded as interleaved pairs, and the paired test on them.
//
// A side recorded as pairs is a directory of `pair-NNNN/` subdirectories,
// each holding one run (`pair-NNNN/<run id>/result.json`), as `tracebench ab`
// writes DIR/A and DIR/B; the run of A and the run of B with the same pair
// number ran back to back (in ABBA order: A first in even pairs, B first in
// odd ones, so a drift of the host that is linear over two pairs cancels).
// `tracebench compare DIR/A DIR/B` then tests the pairs: the host's slow
// drift, which the runs of a pair share, leaves the differences.
#pragma once

#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench {

// When `dir` is laid out as pairs: true, with each run's result.json in
// `files` and its pair's name ("pair-0003") in `pair_ids`, in pair order.
// False (nothing added) when it is not; an error when a pair directory
// does not hold exactly one run.
Status paired_result_files(const std::string& dir, std::vector<std::string>* files, std::vector<std::string>* pair_ids,
                           bool* paired);

// The paired t test on d_i = log(b_i / a_i) (values > 0): mean and sd of the
// d's, t, df = n - 1, two-sided p.
struct PairedT {
  std::size_t n = 0;
  double mean_log = 0, sd_log = 0;
  double t = 0, df = 0;
  double p_value = 1;
};
PairedT paired_log_t(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tracebench
