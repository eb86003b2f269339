// One round of the reference side of a case: the independent tool around a
// fresh loop process (untraced and traced runs alternating, U T U T U T U:
// each traced run's figure is its time minus the mean of the untraced runs
// beside it, so drift within the round cancels to first order, and the
// round's figure is the median of the three), or the loop alone (untraced
// cases), or `perf bench syscall basic`.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "cases.h"
#include "env.h"
#include "tool.h"

namespace tracebench::crosscheck {

// Traced runs per round.
inline constexpr int kTracedRuns = 3;

struct ReferenceRound {
  double figure_ns = NAN;                          // what is compared with the suite
  double untraced_ns = NAN, traced_ns = NAN;       // medians of the runs
  std::vector<double> untraced_runs, traced_runs;  // each run's median chunk, ns per event
  std::vector<double> getpid_ns;  // the loop's getpid right after each run (its speed then), where it probes
  ToolCounts counts;
  bool verified = false;  // counts_verified(counts), or true where the tool records nothing
};

// "" when the case's reference can run here, else why not.
std::string reference_missing(const Case& c, Tool* tool, const Env& env);

Status reference_round(const Case& c, Tool* tool, const Env& env, ReferenceRound* out);

}  // namespace tracebench::crosscheck
