// What the cost model needs to know of the SystemTap adapter
// (Tracer::model()): its counting scenarios, at rates a guest under TCG
// keeps up with (the VM lab: `tracebench vm -- model suite -t systemtap`,
// `-t systemtap_bpf`).  The BPF runtime has no probe on the companion
// module's function here (script.cc), so no fbt row, and no sys10: stap took
// one to two minutes to compile each handler count's script for stapbpf in
// the VM lab's set-up (a probe per handler on the tracepoint), and the sweep
// needs six.
#include "systemtap_tracer.h"

namespace tracebench::systemtap {

ModelDescription SystemtapTracer::model() const {
  ModelDescription d;
  d.scenarios = {model_scenario("sys",
                                "syscall probe (raw_syscalls:sys_enter, pid and number filtered in the script), count",
                                "getpid", "count", 0, 20000)};
  if (runtime_ == Runtime::kModule) {
    d.scenarios.push_back(model_scenario("sys10", std::string(kSys10What) + " (ten probes of the script)", "getpid",
                                         "count", 0, 20000, 10));
    d.scenarios.push_back(model_scenario("fbt",
                                         "kernel function probe on the module's tracebench_kmod_target (kprobe), count",
                                         "kmod_target", "count", 0, 5000));
  }
  d.scenarios.push_back(model_scenario("pid", kPidWhat, "call", "count", 0, 2000));
  return d;
}

}  // namespace tracebench::systemtap
