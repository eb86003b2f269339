// What the cost model needs to know of the D-VM in the module (tracer
// "dvm_kernel", Tracer::model()): its Table 7 scenarios in the VM lab
// (`tracebench vm -- model suite -t dvm_kernel`), at rates a guest under TCG
// holds, and its consumer, which wakes on its own timer.
#include "tracers/dvm/dvm_tracer.h"

namespace tracebench {

ModelDescription dvm_kernel_model() {
  // The syscall probe placed as a kprobe on the syscall's own function
  // (syscallprobe=kprobe): its own configuration, so its own runs.
  ModelScenario kprobe = model_scenario("sys_kprobe", "the same count, the syscall probe a kprobe on getpid's function",
                                        "getpid", "count", 0, 5000);
  kprobe.options = {"dvm_kernel.syscallprobe=kprobe"};
  ModelDescription d;
  d.scenarios = {
      model_scenario("sys", "syscall::getpid:entry { @c = count(); } in the module", "getpid", "count", 0, 5000),
      model_scenario("sys10", std::string(kSys10What) + " in the module", "getpid", "count", 0, 5000, 10), kprobe,
      model_scenario("pid", "pid provider (a uprobe) on a user function, count", "call", "count", 0, 2000),
      model_scenario("payload", "tracemem of 256 B from the module's tracepoint, the consumer thread", "kmod_payload",
                     "record", 256, 5000)};
  d.wakeup_knobs = dvm_wakeup_knobs();
  d.wakeup_hint = dvm_wakeup_hint("dvm_kernel");
  // A tenth of the default rate: the module's pass (an ioctl and an IPI per
  // CPU) costs a guest under TCG about a millisecond.
  d.second_timer_rate = "dvm_kernel.switchrate=100hz";
  return d;
}

}  // namespace tracebench
