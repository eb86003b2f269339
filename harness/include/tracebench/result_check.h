// A result's consistency, beyond what its schema says: the one check every
// reader of result.json applies (read_run calls it, so compare, history,
// export, report and model fit all refuse the same files for the same
// reasons).  The schema says a field is a number; this says the numbers fit
// together: repetition medians as many as the repetitions kept, per-event
// cycles no lower than an empty sample makes them, intervals ordered, every
// figure finite, the TSC rate the one calibrated, ns the cycles at that
// rate, counts of batches and samples positive.
#pragma once

#include <string>

#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench {

// Tolerance between context.tsc.hz and context.tsc.calibrated_hz: the clock
// check fails a run beyond it (clock_check.h, kRateFail).
inline constexpr double kResultRateTolerance = 0.05;

// The first inconsistency, as "FILE: benchmarks[I] (NAME): FIELD: what is
// wrong", or ok.  `file` only names the file in the message.
Status check_result(const RunResult& run, const std::string& file);

}  // namespace tracebench
