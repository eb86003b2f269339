// What the cost model needs to know of the perf adapter (Tracer::model()):
// its Table 7 scenarios and the option that sets how often its ring's
// reader is woken.
#include "perf_tracer.h"

namespace tracebench::perf {

ModelDescription PerfTracer::model() const {
  ModelDescription d;
  d.scenarios = {
      model_scenario("sys", std::string(kSysWhat) + " (a sample per event)", "getpid", "count", 0, 50000),
      model_scenario("sys10", std::string(kSys10What) + " (ten events)", "getpid", "count", 0, 50000, 10),
      model_scenario("pid", "uprobe event on a user function", "call", "count", 0, 2000),
      model_scenario("profile", "the thread's cpu-clock sampled at 10 kHz into the rings (perf record -e cpu-clock)",
                     "spin", "count", 0, 5000)};
  d.wakeup_knobs = {"wakeup_events"};
  d.wakeup_hint = "runs with other wakeup counts: `-o perf.wakeup_events=1`, `-o perf.wakeup_events=1000`";
  return d;
}

}  // namespace tracebench::perf
