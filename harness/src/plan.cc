// Planning a run: which tracer x workload x action x payload x threads
// benchmarks run, and every refusal of bad input before anything is attached.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tracebench/gbench.h"
#include "tracebench/options.h"
#include "tracebench/run_request.h"
#include "tracebench/runner.h"
#include "tracebench/sweep.h"
#include "tracebench/system.h"
#include "tracebench/tracer.h"
#include "tracebench/workload.h"
#include "tracebench/suggest.h"

namespace tracebench {

// ---------------------------------------------------------------------------
// Planning.

std::string BenchSpec::name() const {
  std::string n = fmt::format("{}/{}/{}/payload:{}/threads:{}", tracer, workload, action, payload_bytes, threads);
  if (gap_us > 0) n += fmt::format("/gap_us:{}", gap_us);
  return n;
}

namespace {

bool selected(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

// A workload runs when -w names it, or with no -w unless it runs only when named.
bool selected(const std::vector<std::string>& filter, const Workload& w) {
  return filter.empty() ? !w.only_when_named : selected(filter, w.name);
}

// Why workload `w` cannot hand over `p` payload bytes per event ("" when it
// can): a fact of the workload, whatever the tracer or the kernel.
std::string payload_refusal(const Workload& w, std::size_t p) {
  if (p > 0 && !w.takes_payload) return fmt::format("{} takes no payload", w.name);
  const auto& fixed = w.fixed_payloads;
  if (!fixed.empty() && std::find(fixed.begin(), fixed.end(), p) == fixed.end())
    return fmt::format("{} carries exactly {} bytes", w.name, fmt::join(w.fixed_payloads, " or "));
  if (p > w.max_payload_bytes) return fmt::format("{} carries at most {} bytes per event", w.name, w.max_payload_bytes);
  return "";
}

// Payloads asked for with workloads named: refused when no selected workload
// can carry any of them (a sweep with some that apply runs those and skips
// the rest, settle_sweep).  Before any tracer or the kernel is asked, so the
// refusal is the same on every machine.
Status check_payloads_carried(const RunOptions& opt) {
  if (opt.payloads.empty() || opt.workloads.empty()) return Status::ok();
  // `-p 0` alone is what a workload without a payload runs at anyway.
  const bool only_zero = std::all_of(opt.payloads.begin(), opt.payloads.end(), [](std::size_t p) { return p == 0; });
  bool any_takes = false;
  for (const auto& name : opt.workloads) any_takes |= find_workload(name)->takes_payload;
  if (!only_zero && !any_takes)
    return Status::error(
        fmt::format("--payload: none of the selected workloads ({}) takes a payload (see "
                    "`tracebench list`: [payload])",
                    fmt::join(opt.workloads, ", ")));
  std::vector<std::string> why;
  for (const auto& name : opt.workloads) {
    const Workload& w = *find_workload(name);
    for (std::size_t p : opt.payloads) {
      std::string no = w.takes_payload ? payload_refusal(w, p) : "";  // runs at 0 (above)
      if (no.empty()) return Status::ok();
      if (std::find(why.begin(), why.end(), no) == why.end()) why.push_back(no);
    }
  }
  return Status::error(fmt::format("--payload {}: {}", fmt::join(opt.payloads, ", "), fmt::join(why, "; ")));
}

// What planning gathers across the tracers, for the checks made at the end.
struct PlanState {
  std::set<std::string> unavailable_workloads;
  std::set<std::string> actions_used;
  std::vector<std::string> refused;  // specs a tracer's validate() rejects
  std::map<std::string, std::vector<std::string>> supported_actions;
};

// One tracer's planning: the run's options, the tracer, its parsed options
// and the payload sweep.
struct TracerPlan {
  const RunOptions& opt;
  const std::string& name;
  const Tracer& tracer;
  std::shared_ptr<const OptionValues> parsed;
  const std::vector<std::size_t>& sweep;
};

// Every tracer and workload named exists (whether it runs here is asked later).
Status check_names(const RunOptions& opt) {
  for (const auto& name : opt.tracers) {
    if (!make_tracer(name)) return Status::error(unknown_tracer_message(name));
  }
  for (const auto& name : opt.workloads) {
    if (!find_workload(name)) return Status::error(unknown_workload_message(name));
  }
  return Status::ok();
}

// --payload, else the default sweep (shorter with --quick).
std::vector<std::size_t> payload_sweep(const RunOptions& opt) {
  if (!opt.payloads.empty()) return opt.payloads;
  return opt.quick ? std::vector<std::size_t>{0, 64, 1024} : std::vector<std::size_t>{0, 8, 64, 256, 1024, 4096};
}

// Selected workloads this machine cannot run: skipped, with why.
void skip_unavailable_workloads(const RunOptions& opt, Plan* plan, PlanState* st) {
  for (const auto& w : workload_registry()) {
    if (!selected(opt.workloads, w) || !w.available || opt.plan_for_guest || opt.availability_by_caller) continue;
    if (Availability a = w.available(); !a.ok) {
      st->unavailable_workloads.insert(w.name);
      plan->skipped.emplace_back("workload " + w.name, a.reason);
    }
  }
}

// The tracer's actions to run: --action's that it has, else its first.
// False (and the tracer skipped) when it has none of those asked for.
bool choose_actions(const RunOptions& opt, const std::string& name, const Tracer& tracer,
                    std::vector<std::string>* actions, Plan* plan, PlanState* st) {
  std::vector<std::string> supported = tracer.actions();
  st->supported_actions[name] = supported;
  if (opt.actions.empty()) {
    *actions = {supported.front()};
    return true;
  }
  actions->clear();
  for (const auto& a : opt.actions) {
    if (std::find(supported.begin(), supported.end(), a) != supported.end()) actions->push_back(a);
  }
  if (actions->empty()) {
    plan->skipped.emplace_back(
        name, fmt::format("none of the requested actions is supported (has: {})", fmt::join(supported, ", ")));
    return false;
  }
  return true;
}

// A combination that does not apply: skipped (said with the plan) or
// refused (settle_sweep decides whether the run goes on without it).
void skip_or_refuse(bool skip, const std::string& name, const std::string& why, Plan* plan, PlanState* st) {
  if (skip)
    plan->skipped.emplace_back(name, why);
  else
    st->refused.push_back(fmt::format("{}: {}", name, why));
}

// One tracer x workload x action x payload: planned (once per --threads
// value), skipped or refused, with why.
Status plan_payload(const TracerPlan& tp, const Workload& w, const std::string& action, std::size_t p, Plan* plan,
                    PlanState* st) {
  const RunOptions& opt = tp.opt;
  // A payload the tracer cannot carry whole: left out of the default
  // sweep (and said); asked for, it is skipped with the sweep's other
  // combinations that do not apply (settle_sweep).
  if (std::size_t max = opt.plan_for_guest ? SIZE_MAX : tp.tracer.max_payload_bytes(w.probe, action); p > max) {
    std::string why =
        fmt::format("{} carries at most {} bytes per event at {} on this kernel", tp.name, max, w.probe.name);
    skip_or_refuse(opt.payloads.empty(), fmt::format("{}/{}/{}/payload:{}", tp.name, w.name, action, p), why, plan, st);
    return Status::ok();
  }
  if (std::string no = w.takes_payload ? payload_refusal(w, p) : ""; !no.empty()) {
    skip_or_refuse(opt.payloads.empty() && w.fixed_payloads.empty(),
                   fmt::format("{}/{}/{}/payload:{}", tp.name, w.name, action, p), no, plan, st);
    return Status::ok();
  }
  BenchSpec spec{tp.name, w.name, action, p, 1, 0, tp.parsed};
  AttachSpec as;
  TB_TRY(attach_spec_of(spec, opt, &as));
  if (Status s = opt.plan_for_guest ? Status::ok() : tp.tracer.validate(as); !s) {
    st->refused.push_back(fmt::format("{}: {}", spec.name(), s.message()));
    return Status::ok();
  }
  st->actions_used.insert(action);  // a real action of the tracer, whatever this kernel says of it
  const bool ask_kernel = !opt.plan_for_guest && !opt.availability_by_caller;
  if (Availability a = ask_kernel ? tp.tracer.available_for(as) : Availability::yes(); !a.ok) {
    st->refused.push_back(fmt::format("{}: {}", spec.name(), a.reason));
    return Status::ok();
  }
  for (int t : opt.threads) plan->specs.push_back(BenchSpec{tp.name, w.name, action, p, t, opt.gap_us, tp.parsed});
  return Status::ok();
}

// One workload with each of the tracer's actions, at each payload that
// applies to it.
Status plan_workload(const TracerPlan& tp, const Workload& w, const std::vector<std::string>& actions, Plan* plan,
                     PlanState* st) {
  const RunOptions& opt = tp.opt;
  std::vector<std::size_t> payloads = !w.takes_payload           ? std::vector<std::size_t>{0}
                                      : w.fixed_payloads.empty() ? tp.sweep
                                      : opt.payloads.empty()     ? w.fixed_payloads
                                                                 : opt.payloads;
  for (const auto& action : actions) {
    if (!tp.tracer.supports_action(w.probe, action)) continue;
    const bool default_sweep = w.takes_payload && w.fixed_payloads.empty() && opt.payloads.empty();
    for (std::size_t p : opt.quick&& default_sweep ? quick_payloads(action, w.probe.kind, payloads) : payloads)
      TB_TRY(plan_payload(tp, w, action, p, plan, st));
  }
  return Status::ok();
}

// A tracer plans a workload whose probe it supports, at every site of it.
bool traces(const Tracer& tracer, const ProbePoint& probe) {
  return tracer.supports(probe) && (probe.more_sites.empty() || tracer.attaches_many_sites());
}

// Named together, a tracer and workloads it cannot trace: said (and a
// refusal when nothing else in the sweep applies).
void refuse_if_traces_none(const TracerPlan& tp, PlanState* st) {
  std::vector<std::string> can;
  for (const auto& w : workload_registry()) {
    if (traces(tp.tracer, w.probe)) can.push_back(w.name);
  }
  st->refused.push_back(fmt::format("{}: tracer {} supports none of the selected workloads ({}); it traces: {}",
                                    tp.name, tp.name, fmt::join(tp.opt.workloads, ", "), fmt::join(can, ", ")));
}

// One tracer's benchmarks: its options parsed, its availability, its
// actions, then every selected workload it supports.
Status plan_tracer(const RunOptions& opt, const TracerEntry& entry, const std::vector<std::size_t>& sweep, Plan* plan,
                   PlanState* st) {
  auto tracer = entry.make();
  // The tracer's options, against its schema, before anything else: parsed
  // here once, the typed values carried to validate() and attach().
  auto parsed = std::make_shared<OptionValues>();
  {
    auto it = opt.options.find(entry.name);
    TB_TRY(parse_options(entry.name, tracer->option_schema(),
                         it == opt.options.end() ? std::map<std::string, std::string>{} : it->second, parsed.get()));
  }
  Availability av = opt.plan_for_guest || opt.availability_by_caller ? Availability::yes() : tracer->available();
  if (!av.ok) {
    plan->skipped.emplace_back(entry.name, av.reason);
    return Status::ok();
  }
  std::vector<std::string> actions;
  if (!choose_actions(opt, entry.name, *tracer, &actions, plan, st)) return Status::ok();
  const TracerPlan tp{opt, entry.name, *tracer, parsed, sweep};
  const std::size_t before = plan->specs.size();
  const std::size_t refused_before = st->refused.size();
  for (const auto& w : workload_registry()) {
    if (!selected(opt.workloads, w) || st->unavailable_workloads.count(w.name)) continue;
    if (!traces(*tracer, w.probe)) continue;
    if (!w.only_tracer.empty() && w.only_tracer != entry.name) continue;
    TB_TRY(plan_workload(tp, w, actions, plan, st));
  }
  if (plan->specs.size() == before && !opt.tracers.empty() && !opt.workloads.empty() &&
      st->refused.size() == refused_before)
    refuse_if_traces_none(tp, st);
  return Status::ok();
}

// The run as a whole, once every tracer is planned: every --action used,
// every -o tracer in the run, something to run, and the Google Benchmark
// filter selecting some of it.
Status check_plan(const RunOptions& opt, const PlanState& st, const Plan& plan) {
  // An action no selected tracer has is an error, even beside known ones.
  for (const auto& a : opt.actions) {
    if (st.actions_used.count(a)) continue;
    std::string has;
    for (const auto& [t, acts] : st.supported_actions) has += fmt::format("\n  {}: {}", t, fmt::join(acts, ", "));
    return Status::error(
        fmt::format("--action {}: no selected tracer runs it on the selected workloads; actions:{}", a, has));
  }
  // Options for a tracer that is not in the run would be silently unused.
  std::set<std::string> planned;
  for (const auto& s : plan.specs) planned.insert(s.tracer);
  for (const auto& [t, kv] : opt.options) {
    if (!planned.count(t)) return tracer_not_in_run(t, kv.begin()->first, fmt::format("{}", fmt::join(planned, ", ")));
  }
  if (plan.specs.empty()) {
    std::string why = "nothing to run: no available tracer supports the selected workloads";
    for (const auto& [t, reason] : plan.skipped) why += fmt::format("\n  {}: {}", t, reason);
    return Status::error(why);
  }
  // A filter that selects none of them would make a "complete" run of no
  // benchmark.
  std::vector<std::string> names;
  for (const auto& s : plan.specs) names.push_back(s.name());
  std::size_t selected = 0;
  TB_TRY(gbench_selects(opt.gbench_args, names, opt.repetitions, &selected));
  if (selected == 0)
    return Status::error(
        fmt::format("the Google Benchmark filter selects none of the {} planned benchmarks (e.g. "
                    "{}): nothing would run; see them with --plan",
                    names.size(), names.front()));
  return Status::ok();
}

}  // namespace

Status make_plan(const RunOptions& opt, Plan* plan) {
  plan->specs.clear();
  plan->skipped.clear();
  TB_TRY(check_names(opt));
  const std::vector<std::size_t> sweep = payload_sweep(opt);
  TB_TRY(check_payloads_carried(opt));
  PlanState st;
  skip_unavailable_workloads(opt, plan, &st);
  for (const auto& entry : tracer_registry()) {
    if (selected(opt.tracers, entry.name)) TB_TRY(plan_tracer(opt, entry, sweep, plan, &st));
  }
  // A sweep runs what applies and lists what it skips; only a sweep where
  // nothing applies is refused (sweep.h).
  TB_TRY(settle_sweep(std::move(st.refused), plan));
  return check_plan(opt, st, *plan);
}

}  // namespace tracebench
