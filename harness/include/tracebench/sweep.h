// A sweep across tracers x workloads x actions x payloads: the planner
// (plan.cc) collects the combinations that do not apply (a fixed-size
// workload at another size, an action a tracer cannot take at a probe, a
// payload larger than a tracer carries, a tracer named with workloads it
// cannot trace), each "what: why".  The sweep runs every combination that
// applies and lists the others as skipped; it is refused only when nothing
// applies, with every reason.
#pragma once

#include <string>
#include <vector>

#include "tracebench/runner.h"
#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench {

// The quick suite's payload sizes for one (action, probe): only the first
// of `sweep` where the tracer counts events (action "count", or the
// untraced "none") at a probe other than trace_marker.  Counting never reads
// the payload, so the overhead does not depend on its size (a marker write
// copies it into the tracer's buffer, so it does); the full suite still
// sweeps every size.
std::vector<std::size_t> quick_payloads(const std::string& action, ProbeKind kind,
                                        const std::vector<std::size_t>& sweep);

// `not_applicable`: "name: reason" lines.  With planned specs, each becomes
// a skipped entry of `plan`; without, the error lists them all.
Status settle_sweep(std::vector<std::string> not_applicable, Plan* plan);

}  // namespace tracebench
