// What the cost model needs to know of the D-VM in this process (tracer
// "dvm", Tracer::model()): its Table 7 scenarios and its consumer, which
// wakes on its own timer (switchrate), never on a record.
#include "dvm_tracer.h"

namespace tracebench {

ModelDescription dvm_model() {
  ModelDescription d;
  d.scenarios = {
      model_scenario("sys", "syscall::getpid:entry { @c = count(); }", "dvm_getpid", "count", 0, 50000),
      model_scenario("sys10", std::string(kSys10What) + " (/arg0 == -1/)", "dvm_getpid", "count", 0, 50000, 10),
      model_scenario("pid", "fbt-style function entry, count", "dvm_func", "count", 0, 50000),
      model_scenario("payload", "tracemem of 256 B, the consumer thread", "dvm_hot", "record", 256, 20000)};
  d.wakeup_knobs = dvm_wakeup_knobs();
  d.wakeup_hint = dvm_wakeup_hint("dvm");
  // A hot loop gives the consumer ~1e-4 wakeups per record at any size, too
  // few to tell a pass's cost from the records'; at five times the default
  // rate the wakeups per record differ enough to fit both.
  d.second_timer_rate = "dvm.switchrate=5000hz";
  d.empty_handler_options = std::vector<std::string>{};  // the clause `{ }` needs nothing set
  return d;
}

std::set<std::string> dvm_wakeup_knobs() { return {"switchrate", "aggrate"}; }

std::string dvm_wakeup_hint(const std::string& tracer) {
  return "runs with other consumer rates: `-o " + tracer + ".switchrate=100hz`, `-o " + tracer + ".switchrate=5000hz`";
}

}  // namespace tracebench
