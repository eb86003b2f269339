// The request functions every entry point shares (run_request.h): the
// payload's range, `-o` splitting, and a single benchmark planned by
// make_plan() like any run.
#include "tracebench/run_request.h"

#include <fmt/format.h>

#include "tracebench/workload.h"
#include "tracebench/suggest.h"

namespace tracebench {

Status check_payload_arg(long long bytes) {
  if (bytes < 0 || bytes > kMaxPayloadBytes)
    return Status::error(fmt::format("--payload {} is outside 0..{} (bytes per event)", bytes, kMaxPayloadBytes));
  return Status::ok();
}

Status split_option_args(const std::vector<std::string>& raw, std::string_view sole_tracer, TracerOptions* out) {
  for (const auto& kv : raw) {
    const auto eq = kv.find('=');
    const auto dot = kv.find('.');
    const bool named = dot != std::string::npos && dot < eq;
    const bool bare_ok = !named && !sole_tracer.empty() && eq != std::string::npos && eq > 0;
    if (eq == std::string::npos || (!named && !bare_ok) || (named && (dot == 0 || dot + 1 == eq)))
      return Status::error(
          fmt::format("--option '{}': expected <tracer>.<key>=<value>, e.g. ebpf.wakeup=no_wakeup", kv));
    const std::string tracer = named ? kv.substr(0, dot) : std::string(sole_tracer);
    if (!make_tracer(tracer))
      return Status::error(fmt::format("--option '{}': {}", kv, unknown_tracer_message(tracer)));
    const std::size_t key_at = named ? dot + 1 : 0;
    const std::string key = kv.substr(key_at, eq - key_at);
    if (!(*out)[tracer].emplace(key, kv.substr(eq + 1)).second)
      return Status::error(fmt::format("--option '{}': {}.{} is given twice", kv, tracer, key));
  }
  return Status::ok();
}

Status attach_spec_of(const BenchSpec& bench, const RunOptions& opt, AttachSpec* out) {
  const Workload* w = find_workload(bench.workload);
  if (!w) return Status::error(unknown_workload_message(bench.workload));
  AttachSpec as;
  as.probe = w->probe;
  as.action = bench.action;
  as.payload_bytes = bench.payload_bytes;
  if (auto it = opt.options.find(bench.tracer); it != opt.options.end()) as.options = it->second;
  as.parsed_options = bench.options;
  *out = std::move(as);
  return Status::ok();
}

Status tracer_not_in_run(const std::string& tracer, const std::string& key, const std::string& running) {
  return Status::error(
      fmt::format("--option {}.{}: tracer {} is not in this run (running: {})", tracer, key, tracer, running));
}

Status plan_tracer_options(const std::string& tracer, const std::vector<std::string>& raw_options,
                           std::shared_ptr<const OptionValues>* parsed) {
  TracerOptions split;
  TB_TRY(split_option_args(raw_options, tracer, &split));
  for (const auto& [t, kv] : split)
    if (t != tracer) return tracer_not_in_run(t, kv.begin()->first, tracer);
  std::unique_ptr<Tracer> t = make_tracer(tracer);
  if (!t) return Status::error(unknown_tracer_message(tracer));
  auto values = std::make_shared<OptionValues>();
  TB_TRY(parse_options(tracer, t->option_schema(), split[tracer], values.get()));
  *parsed = std::move(values);
  return Status::ok();
}

Status plan_single_run(const SingleRunRequest& req, AttachSpec* spec, BenchSpec* bench) {
  TB_TRY(check_payload_arg(req.payload));
  RunOptions opt;
  opt.availability_by_caller = req.availability_by_caller;
  TB_TRY(split_option_args(req.raw_options, req.tracer, &opt.options));
  opt.tracers = {req.tracer};
  opt.workloads = {req.workload};
  if (req.action != "default") opt.actions = {req.action};
  opt.payloads = {static_cast<std::size_t>(req.payload)};
  opt.repetitions = 2;
  Plan plan;
  TB_TRY(make_plan(opt, &plan));
  if (plan.specs.size() != 1)
    return Status::error(
        fmt::format("{} x {} plans {} benchmarks; name one action (-a)", req.tracer, req.workload, plan.specs.size()));
  if (bench) *bench = plan.specs.front();
  return attach_spec_of(plan.specs.front(), opt, spec);
}

}  // namespace tracebench
