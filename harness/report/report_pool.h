// The report draws configurations, not result rows: benchmarks of several
// runs that measured the same thing the same way are pooled into one point.
#pragma once

#include <nlohmann/json.hpp>

#include "tracebench/results.h"

namespace tracebench::report {

// Whether a benchmark note is information (how the figure was taken) rather
// than a warning (something that weakens it and a user should act on).
bool is_information(const std::string& note);

// One entry per configuration of the benchmarks in `runs`: tracer, workload,
// action, payload, threads, options, --gap-us and the samples a block may
// hold (-n; the samples it took, for files that do not say).  A
// configuration measured by several runs gets the median and 95% interval of
// all their repetitions' overheads (each in ns by its own run's TSC rate);
// one measured once keeps its figures as written.
nlohmann::json pool_configurations(const std::vector<RunResult>& runs);

}  // namespace tracebench::report
