#include "suite_side.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "tracebench/quiet_output.h"

namespace tracebench::crosscheck {
namespace {

bool wanted(const std::vector<const Case*>& group, const BenchSpec& b, const SuiteSettings& s) {
  return b.threads == 1 && std::any_of(group.begin(), group.end(), [&](const Case* c) {
           const SuiteSide side = effective_suite(*c, s);
           return side.workload == b.workload && side.payload == b.payload_bytes;
         });
}

RunOptions run_options(const std::vector<const Case*>& group, const SuiteSettings& s) {
  RunOptions opt;
  const SuiteSide first = effective_suite(*group.front(), s);
  opt.tracers = {first.tracer};
  if (!first.action.empty()) opt.actions = {first.action};
  std::set<std::size_t> payloads;
  for (const Case* c : group) {
    const SuiteSide side = effective_suite(*c, s);
    if (std::find(opt.workloads.begin(), opt.workloads.end(), side.workload) == opt.workloads.end())
      opt.workloads.push_back(side.workload);
    payloads.insert(side.payload);
  }
  if (*payloads.rbegin() > 0) opt.payloads.assign(payloads.begin(), payloads.end());
  if (!first.options.empty()) opt.options[first.tracer] = first.options;
  opt.repetitions = s.repetitions;
  opt.samples = 1000;
  opt.quick = true;
  opt.block_seconds = 0.01;
  opt.measured_cpu = s.cpu;
  opt.out_base = s.out_base;
  opt.write_samples = false;
  opt.machine_lock = s.lock;
  opt.command_line = {"tracebench", "crosscheck", "(suite side)", run_arguments(first)};
  return opt;
}

// Why the plan has no benchmark for the case.
std::string reason_missing(const Plan& plan, const SuiteSide& side) {
  for (const auto& [what, why] : plan.skipped) {
    if (what.find(side.tracer) != std::string::npos || what.find(side.workload) != std::string::npos)
      return what + ": " + why;
  }
  return "`tracebench run " + run_arguments(side) + "` plans no such benchmark here";
}

nlohmann::json facts_of(const BenchmarkResult& b) {
  nlohmann::json j = {{"benchmark", b.name},
                      {"status", b.status},
                      {"repetitions", b.repetitions},
                      {"batch", b.batch},
                      {"samples_per_block", b.samples_per_block},
                      {"baseline_ns_p50", b.baseline.ns.n ? nlohmann::json(b.baseline.ns.p50) : nlohmann::json()},
                      {"traced_ns_p50", b.traced.ns.n ? nlohmann::json(b.traced.ns.p50) : nlohmann::json()},
                      {"events_fired", b.events.fired},
                      {"events_recorded", b.events.recorded},
                      {"events_lost", b.events.lost},
                      {"verification", b.events.verification},
                      {"options", b.options}};
  if (b.overhead_ns)
    j["overhead_ns"] = {{"median", b.overhead_ns->median},
                        {"low", b.overhead_ns->low},
                        {"high", b.overhead_ns->high},
                        {"confidence", b.overhead_ns->confidence}};
  return j;
}

SuiteRound round_of(const Case& c, const SuiteSide& side, const RunResult& run) {
  SuiteRound r;
  r.run_id = run.context.run_id;
  auto b = std::find_if(run.benchmarks.begin(), run.benchmarks.end(), [&](const BenchmarkResult& x) {
    return x.workload == side.workload && x.payload_bytes == side.payload;
  });
  if (b == run.benchmarks.end()) {
    r.error = "the run has no result for " + c.name;
    return r;
  }
  r.facts = facts_of(*b);
  r.verification = b->events.verification == "passed" || b->events.verification_reason.empty()
                       ? b->events.verification
                       : b->events.verification + ": " + b->events.verification_reason;
  if (b->status == "unsteady") {
    r.unsteady = true;
    return r;
  }
  if (b->status != "ok") {
    r.error = b->error.empty() ? "the benchmark failed" : b->error;
    return r;
  }
  if (side.figure == SuiteFigure::kUntraced) {
    r.figure_ns = b->baseline.ns.n ? b->baseline.ns.p50 : NAN;
    r.verified = true;  // nothing traced, nothing to verify
  } else if (side.figure == SuiteFigure::kAmortized) {
    r.figure_ns = b->amortized_overhead_ns ? b->amortized_overhead_ns->median : NAN;
    r.verified = b->events.verification == "passed";
  } else {
    r.figure_ns = b->overhead_ns ? b->overhead_ns->median : NAN;
    r.verified = b->events.verification == "passed";
  }
  return r;
}

}  // namespace

std::vector<std::vector<const Case*>> suite_groups(const std::vector<const Case*>& cases) {
  std::vector<std::vector<const Case*>> groups;
  for (const Case* c : cases) {
    auto g = std::find_if(groups.begin(), groups.end(), [&](const std::vector<const Case*>& g) {
      const SuiteSide& a = g.front()->suite;
      return a.tracer == c->suite.tracer && a.action == c->suite.action && a.options == c->suite.options;
    });
    if (g == groups.end())
      groups.push_back({c});
    else
      g->push_back(c);
  }
  return groups;
}

SuiteSide effective_suite(const Case& c, const SuiteSettings& s) {
  SuiteSide side = c.suite;
  if (auto it = s.options.find(side.tracer); it != s.options.end()) {
    for (const auto& [k, v] : it->second) side.options[k] = v;
  }
  return side;
}

Status plan_group(const std::vector<const Case*>& group, const SuiteSettings& s, Plan* plan,
                  std::map<std::string, std::string>* unavailable) {
  const RunOptions opt = run_options(group, s);
  TB_TRY(make_plan(opt, plan));
  std::vector<BenchSpec> kept;
  for (const auto& b : plan->specs) {
    if (wanted(group, b, s)) kept.push_back(b);
  }
  plan->specs = kept;
  for (const Case* c : group) {
    const SuiteSide side = effective_suite(*c, s);
    const bool planned = std::any_of(kept.begin(), kept.end(), [&](const BenchSpec& b) {
      return b.workload == side.workload && b.payload_bytes == side.payload;
    });
    if (!planned) (*unavailable)[c->name] = reason_missing(*plan, side);
  }
  return Status::ok();
}

Status run_group(const std::vector<const Case*>& group, const SuiteSettings& s, const Plan& plan,
                 std::map<std::string, SuiteRound>* out, RunContext* context) {
  const RunOptions opt = run_options(group, s);
  RunResult run;
  std::string dir;
  Status st = Status::ok();
  {
    QuietOutput quiet(!s.verbose);
    st = run_benchmarks(opt, plan, &run, &dir);
  }
  if (!st) return st;
  *context = run.context;
  for (const Case* c : group) (*out)[c->name] = round_of(*c, effective_suite(*c, s), run);
  return Status::ok();
}

}  // namespace tracebench::crosscheck
