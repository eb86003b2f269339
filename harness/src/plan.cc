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

}  // namespace

Status make_plan(const RunOptions& opt, Plan* plan) {
  plan->specs.clear();
  plan->skipped.clear();
  for (const auto& name : opt.tracers) {
    if (!make_tracer(name)) return Status::error(fmt::format("unknown tracer '{}' (see `tracebench list`)", name));
  }
  for (const auto& name : opt.workloads) {
    if (!find_workload(name)) return Status::error(fmt::format("unknown workload '{}' (see `tracebench list`)", name));
  }
  std::vector<std::size_t> sweep = opt.payloads;
  if (sweep.empty()) {
    sweep = opt.quick ? std::vector<std::size_t>{0, 64, 1024} : std::vector<std::size_t>{0, 8, 64, 256, 1024, 4096};
  }
  TB_TRY(check_payloads_carried(opt));
  std::set<std::string> unavailable_workloads;
  for (const auto& w : workload_registry()) {
    if (!selected(opt.workloads, w.name) || !w.available || opt.plan_for_guest || opt.availability_by_caller) continue;
    if (Availability a = w.available(); !a.ok) {
      unavailable_workloads.insert(w.name);
      plan->skipped.emplace_back("workload " + w.name, a.reason);
    }
  }
  std::set<std::string> actions_used;
  std::vector<std::string> refused;  // specs a tracer's validate() rejects
  std::map<std::string, std::vector<std::string>> supported_actions;
  for (const auto& entry : tracer_registry()) {
    if (!selected(opt.tracers, entry.name)) continue;
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
      continue;
    }
    std::vector<std::string> actions = opt.actions;
    std::vector<std::string> supported = tracer->actions();
    supported_actions[entry.name] = supported;
    if (actions.empty()) {
      actions = {supported.front()};
    } else {
      std::vector<std::string> keep;
      for (const auto& a : actions) {
        if (std::find(supported.begin(), supported.end(), a) != supported.end()) keep.push_back(a);
      }
      if (keep.empty()) {
        plan->skipped.emplace_back(entry.name, fmt::format("none of the requested actions is supported (has: {})",
                                                           fmt::join(supported, ", ")));
        continue;
      }
      actions = keep;
    }
    std::size_t before = plan->specs.size();
    const std::size_t refused_before = refused.size();
    for (const auto& w : workload_registry()) {
      if (!selected(opt.workloads, w.name) || unavailable_workloads.count(w.name)) continue;
      if (!tracer->supports(w.probe)) continue;
      if (!w.only_tracer.empty() && w.only_tracer != entry.name) continue;
      std::vector<std::size_t> payloads = !w.takes_payload           ? std::vector<std::size_t>{0}
                                          : w.fixed_payloads.empty() ? sweep
                                          : opt.payloads.empty()     ? w.fixed_payloads
                                                                     : opt.payloads;
      for (const auto& action : actions) {
        if (!tracer->supports_action(w.probe, action)) continue;
        const bool default_sweep = w.takes_payload && w.fixed_payloads.empty() && opt.payloads.empty();
        for (std::size_t p : opt.quick&& default_sweep ? quick_payloads(action, w.probe.kind, payloads) : payloads) {
          // A payload the tracer cannot carry whole: left out of the default
          // sweep (and said); asked for, it is skipped with the sweep's other
          // combinations that do not apply (settle_sweep).
          if (std::size_t max = opt.plan_for_guest ? SIZE_MAX : tracer->max_payload_bytes(w.probe, action); p > max) {
            std::string why = fmt::format("{} carries at most {} bytes per event at {} on this kernel", entry.name, max,
                                          w.probe.name);
            std::string name = fmt::format("{}/{}/{}/payload:{}", entry.name, w.name, action, p);
            if (opt.payloads.empty())
              plan->skipped.emplace_back(name, why);
            else
              refused.push_back(fmt::format("{}: {}", name, why));
            continue;
          }
          if (std::string no = w.takes_payload ? payload_refusal(w, p) : ""; !no.empty()) {
            std::string name = fmt::format("{}/{}/{}/payload:{}", entry.name, w.name, action, p);
            if (opt.payloads.empty() && w.fixed_payloads.empty())
              plan->skipped.emplace_back(name, no);
            else
              refused.push_back(fmt::format("{}: {}", name, no));
            continue;
          }
          BenchSpec spec{entry.name, w.name, action, p, 1, 0, parsed};
          AttachSpec as;
          TB_TRY(attach_spec_of(spec, opt, &as));
          if (Status s = opt.plan_for_guest ? Status::ok() : tracer->validate(as); !s) {
            refused.push_back(fmt::format("{}: {}", spec.name(), s.message()));
            continue;
          }
          actions_used.insert(action);
          for (int t : opt.threads)
            plan->specs.push_back(BenchSpec{entry.name, w.name, action, p, t, opt.gap_us, parsed});
        }
      }
    }
    // Named together, a tracer and workloads it cannot trace: said (and a
    // refusal when nothing else in the sweep applies).
    if (plan->specs.size() == before && !opt.tracers.empty() && !opt.workloads.empty() &&
        refused.size() == refused_before) {
      std::vector<std::string> can;
      for (const auto& w : workload_registry()) {
        if (tracer->supports(w.probe)) can.push_back(w.name);
      }
      refused.push_back(fmt::format("{}: tracer {} supports none of the selected workloads ({}); it traces: {}",
                                    entry.name, entry.name, fmt::join(opt.workloads, ", "), fmt::join(can, ", ")));
    }
  }
  // A sweep runs what applies and lists what it skips; only a sweep where
  // nothing applies is refused (sweep.h).
  TB_TRY(settle_sweep(std::move(refused), plan));
  // An action no selected tracer has is an error, even beside known ones.
  for (const auto& a : opt.actions) {
    if (actions_used.count(a)) continue;
    std::string has;
    for (const auto& [t, acts] : supported_actions) has += fmt::format("\n  {}: {}", t, fmt::join(acts, ", "));
    return Status::error(
        fmt::format("--action {}: no selected tracer runs it on the selected workloads; actions:{}", a, has));
  }
  // Options for a tracer that is not in the run would be silently unused.
  std::set<std::string> planned;
  for (const auto& s : plan->specs) planned.insert(s.tracer);
  for (const auto& [t, kv] : opt.options) {
    if (!planned.count(t)) return tracer_not_in_run(t, kv.begin()->first, fmt::format("{}", fmt::join(planned, ", ")));
  }
  if (plan->specs.empty()) {
    std::string why = "nothing to run: no available tracer supports the selected workloads";
    for (const auto& [t, reason] : plan->skipped) why += fmt::format("\n  {}: {}", t, reason);
    return Status::error(why);
  }
  // A filter that selects none of them would make a "complete" run of no
  // benchmark.
  std::vector<std::string> names;
  for (const auto& s : plan->specs) names.push_back(s.name());
  std::size_t selected = 0;
  TB_TRY(gbench_selects(opt.gbench_args, names, opt.repetitions, &selected));
  if (selected == 0)
    return Status::error(
        fmt::format("the Google Benchmark filter selects none of the {} planned benchmarks (e.g. "
                    "{}): nothing would run; see them with --plan",
                    names.size(), names.front()));
  return Status::ok();
}

}  // namespace tracebench
