// The independent tools of the reference side.  A tool is switched on around
// each traced run of a loop process and says at the end of the round what it
// recorded of the events the loop fired in them (reference_round.h drives
// it: begin, then enable/disable around each traced run, then finish, end).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "cases.h"
#include "counts.h"
#include "env.h"
#include "loop_process.h"
#include "tracebench/status.h"

namespace tracebench::crosscheck {

class Tool {
 public:
  virtual ~Tool() = default;
  // "" when the case can run here; else why not (not installed, not root,
  // no such event or attach type), said as `tracebench env` says it.
  virtual std::string missing(const Case& c, const Env& env) = 0;
  virtual std::string version() = 0;
  // Per round, before the loop starts.
  virtual Status prepare(const Env&) { return Status::ok(); }
  // Per round, once the loop runs (its pid known): the tool's set-up,
  // undone by end() and on every way out.
  virtual Status begin(const Case& c, const Env& env, const LoopProcess& loop) = 0;
  // Around each traced run.
  virtual Status enable() = 0;
  virtual Status disable() = 0;
  // After the round's traced runs: what it recorded of the `fired` events
  // they fired in all.
  virtual Status finish(std::uint64_t fired, ToolCounts* out) = 0;
  virtual void end() = 0;
};

std::unique_ptr<Tool> make_tracefs_tool();
std::unique_ptr<Tool> make_bpftrace_tool();
std::unique_ptr<Tool> make_perf_record_tool();
std::unique_ptr<Tool> make_lttng_tool();
// The tool of a case's kind (null for the loop alone and perf bench).
std::unique_ptr<Tool> make_tool(ToolKind kind);

// First line of a program's `--version` (or `version`) output.
std::string version_line(const std::vector<std::string>& argv);

}  // namespace tracebench::crosscheck
