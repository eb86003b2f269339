// What the cost model needs to know of the ftrace adapter (Tracer::model()):
// its Table 7 scenarios, and that its buffer is read only between
// validation segments (while the event is disabled), so it must hold one.
#include "ftrace_tracer.h"

namespace tracebench::ftrace {

ModelDescription FtraceTracer::model() const {
  ModelDescription d;
  d.scenarios = {
      model_scenario("sys", std::string(kSysWhat) + " (the event recorded in the buffer)", "getpid", "count", 0, 50000),
      model_scenario("sys10", std::string(kSys10What) + " (ten instances)", "getpid", "count", 0, 50000, 10),
      model_scenario("pid", "uprobe event on a user function", "call", "count", 0, 2000),
      model_scenario("payload", "1 KiB trace_marker writes, the buffer read back", "marker", "payload", 1024, 20000)};
  // A trace_marker record: the payload, its header and the ip field
  // (~40 B), rounded up.
  d.segment_buffer = SegmentBuffer{"ftrace.buffer_kb", 64};
  return d;
}

}  // namespace tracebench::ftrace
