// What every tool shares: the factory by kind, the check of its count.
#include <fmt/format.h>

#include "child.h"
#include "tool.h"

namespace tracebench::crosscheck {

std::unique_ptr<Tool> make_tool(ToolKind kind) {
  switch (kind) {
    case ToolKind::kTracefs: return make_tracefs_tool();
    case ToolKind::kBpftrace: return make_bpftrace_tool();
    case ToolKind::kPerfRecord: return make_perf_record_tool();
    case ToolKind::kLttng: return make_lttng_tool();
    case ToolKind::kLoopAlone:
    case ToolKind::kPerfBench: return nullptr;
  }
  return nullptr;
}

std::string version_line(const std::vector<std::string>& argv) {
  ChildSpec s;
  s.argv = argv;
  std::string out;
  if (Status st = run_to_end(s, 20, &out); !st) return st.message();
  const auto nl = out.find('\n');
  return out.substr(0, nl);
}

}  // namespace tracebench::crosscheck
