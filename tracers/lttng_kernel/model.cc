// What the cost model needs to know of the LTTng kernel adapter
// (Tracer::model()): its Table 7 scenarios in the VM lab (`tracebench vm
// --lttng-modules -- model suite -t lttng_kernel`), at a rate a guest under
// TCG holds.
#include "lttng_kernel_tracer.h"

namespace tracebench::lttng_kernel {

ModelDescription LttngKernelTracer::model() const {
  const std::string fbt = "kernel function probe on the module's tracebench_kmod_target";
  ModelDescription d;
  d.scenarios = {
      model_scenario("sys", "getpid's syscall entry and exit events, the consumer daemon", "getpid", "record", 0, 5000),
      model_scenario("fbt", fbt + " (kprobe), the consumer daemon", "kmod_target", "record", 0, 5000),
      model_scenario("payload", "256 B from the module's tracepoint, the consumer daemon", "kmod_payload", "record",
                     256, 5000)};
  return d;
}

}  // namespace tracebench::lttng_kernel
