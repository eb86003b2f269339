// What the cost model needs to know of the eBPF adapter (Tracer::model()):
// its Table 7 scenarios and the options that vary its ring buffer reader.
#include "ebpf_tracer.h"

namespace tracebench::ebpf {

ModelDescription EbpfTracer::model() const {
  ModelDescription d;
  ModelScenario payload = model_scenario("payload", "256 B copied from write(2) into the ring buffer, its reader",
                                         "write_null", "ringbuf", 256, 20000);
  // The payload sweep again with the reader woken on few records: a hot
  // loop wakes it on most records, a paced workload on few.  The reader then
  // reads on its timer, every 2 ms: often enough that a hot loop of 1 KiB
  // records does not fill the ring.
  payload.few_wakeups = {"ebpf.wakeup=no_wakeup", "ebpf.poll_ms=2"};
  d.scenarios = {model_scenario("sys", kSysWhat, "getpid", "count", 0, 50000),
                 model_scenario("sys10", kSys10What, "getpid", "count", 0, 50000, 10),
                 model_scenario("pid", kPidWhat, "call", "count", 0, 2000), payload,
                 // The paper's profile-997: here bpftrace's profile:hz on the
                 // firing thread's CPU clock (10 kHz), while 5000 ops of
                 // the spin workload run: its events are the timer's firings.
                 model_scenario("profile", "a profile probe (the thread's CPU clock sampled at 10 kHz), count", "spin",
                                "count", 0, 5000)};
  d.wakeup_knobs = {"wakeup", "poll_ms"};
  d.wakeup_hint = "runs with other wakeup policies: `-o ebpf.wakeup=no_wakeup`, `-o ebpf.wakeup=force`";
  // The empty program has no map: its events are counted from the kernel's
  // run stats, which cost each run two clock reads, so the action is
  // measured with them on too (the model pairs only runs alike in what the
  // adapter says was in effect).
  d.empty_handler_options = std::vector<std::string>{"ebpf.stats=on"};
  return d;
}

}  // namespace tracebench::ebpf
