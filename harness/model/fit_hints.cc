// The cost model's fit: the commands a term that no run measured names
// (each one `run` accepts), and why a sweep does not apply.
#include <memory>

#include <fmt/format.h>

#include "harness/model/fit_internal.h"
#include "tracebench/handler_count.h"
#include "tracebench/model_description.h"
#include "tracebench/run_request.h"
#include "tracebench/tracer.h"
#include "tracebench/workload.h"

namespace tracebench::model::fit_detail {
namespace {

// The entry's configuration with `extra` options at payload 0, planned as
// `run` plans it (run_request.h), on each of its workloads: a command the
// list names must run.  Where the runs were made (the VM lab) is not asked:
// availability is left out.
Status tracer_accepts(const Entry& e, const std::map<std::string, std::string>& extra) {
  if (!make_tracer(e.tracer)) return Status::ok();  // a tracer this binary lacks: it cannot tell
  std::map<std::string, std::string> options = e.options;
  for (const auto& [k, v] : extra) options[k] = v;
  std::vector<std::string> raw;
  for (const auto& [k, v] : options) raw.push_back(k + "=" + v);  // the sole tracer's
  for (const auto& name : e.workloads) {
    if (!find_workload(name)) continue;
    AttachSpec spec;
    TB_TRY(plan_single_run({e.tracer, name, e.action, 0, raw, /*availability_by_caller=*/true}, &spec));
  }
  return Status::ok();
}

}  // namespace

std::string run_command(const Entry& e) {
  std::string cmd = fmt::format("tracebench run -t {}", e.tracer);
  for (const auto& w : e.workloads) cmd += " -w " + w;
  cmd += " -a " + e.action;
  for (const auto& [key, v] : e.options) cmd += fmt::format(" -o {}.{}={}", e.tracer, key, v);
  return cmd;
}

bool takes_payload(const Entry& e) {
  for (const auto& name : e.workloads)
    if (const Workload* w = find_workload(name); w && w->takes_payload) return true;
  return false;
}

std::string handler_sweep_missing(const Entry& e, bool predicate) {
  // A probe its timer fires has one handler per timer (an eBPF perf event
  // runs one program): more handlers would be more timers.
  if (e.probe_kind == "profile")
    return "a profile probe has one handler per timer: no handler-count sweep applies (more programs would be more "
           "timers)";
  // A tracer this binary knows says whether it has the handler-count option.
  if (std::unique_ptr<Tracer> t = make_tracer(e.tracer)) {
    if (!has_handler_count(t->option_schema()))
      return fmt::format("not measured for {} by this version of the suite ({} has no handler-count option)", e.tracer,
                         e.tracer);
  }
  if (Status s = tracer_accepts(e, {{kEcbsOption, "2"}}); !s)
    return "no handler-count sweep applies to this configuration: " + s.message();
  return fmt::format("no handler-count sweep in the runs: `for n in 1 2 4 10; do {} -p 0 -o {}.{}=$n{}; done`",
                     run_command(e), e.tracer, kEcbsOption,
                     predicate ? "" : fmt::format(" -o {}.{}=false", e.tracer, kExtraPredicateOption));
}

std::string wakeup_hint(const std::string& tracer) {
  std::string hint = model_description(tracer).wakeup_hint;
  return hint.empty() ? "runs with another wakeup policy (this tracer has no option for one)" : hint;
}

}  // namespace tracebench::model::fit_detail
