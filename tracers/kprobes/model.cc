// What the cost model needs to know of the kprobes adapter
// (Tracer::model()): its Table 7 scenarios, on the companion module's
// target function, at a rate low enough for a guest under TCG (the VM lab:
// `tracebench vm -- model suite -t kprobes`), where one ioctl into the
// module costs microseconds.
#include "kprobes_tracer.h"

namespace tracebench::kprobes {

ModelDescription KprobesTracer::model() const {
  const std::string fbt = "kernel function probe on the module's tracebench_kmod_target";
  ModelDescription d;
  d.scenarios = {model_scenario("fbt", fbt + " (kprobe), BPF count", "kmod_target", "bpf_kprobe", 0, 5000),
                 model_scenario("fbt_return", fbt + " (kretprobe), BPF count", "kmod_target", "bpf_kretprobe", 0, 5000),
                 model_scenario("fbt_record", fbt + " (kprobe event, seq and len recorded, the buffer read back)",
                                "kmod_target", "tracefs_kprobe", 0, 5000)};
  return d;
}

}  // namespace tracebench::kprobes
