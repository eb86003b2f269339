// The `at` option of the adapters that place a user function's uprobe as a
// tracefs uprobe event, through the uprobe PMU or in a stap script (ftrace,
// perf, systemtap): `entry`, or `return` for a return probe (a uretprobe) on
// the same function.  Declared
// once, with its refusal on a probe that is not a user function; each
// tracer's help says how it makes the return probe.
#pragma once

#include <string>
#include <utility>

#include "tracebench/options.h"
#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench::common {

inline OptionSpec at_option(std::string help) {
  return {.name = "at",
          .type = OptionSpec::Type::kChoice,
          .help = std::move(help),
          .default_value = "entry",
          .words = {"entry", "return"}};
}

// at=return on anything but a user function: refused, naming the probe.
inline Status check_at_return(const char* tracer, bool at_return, const ProbePoint& probe) {
  if (!at_return || probe.kind == ProbeKind::kUserFunction) return Status::ok();
  return Status::error(std::string(tracer) +
                       " option at=return applies to user-function probes (a return probe on the function), not " +
                       probe.name + " (" + std::string(to_string(probe.kind)) + ")");
}

}  // namespace tracebench::common
