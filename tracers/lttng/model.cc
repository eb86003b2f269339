// What the cost model needs to know of the LTTng-UST adapter
// (Tracer::model()): its Table 7 scenarios, on its UST tracepoints.
#include "lttng_tracer.h"

namespace tracebench::lttng {

ModelDescription LttngTracer::model() const {
  ModelDescription d;
  d.scenarios = {
      model_scenario("sys", "UST tracepoint, 4 B recorded", "ust_hot", "record", 0, 50000),
      model_scenario("sys10", "ten handlers on the UST tracepoint, nine predicates false", "ust_hot", "record", 0,
                     50000, 10),
      model_scenario("payload", "256 B UST payload, the consumer daemon", "ust_payload", "record", 256, 20000)};
  return d;
}

}  // namespace tracebench::lttng
