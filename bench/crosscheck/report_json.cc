#include <cmath>

#include <fmt/format.h>

#include "machine_state.h"
#include "report.h"
#include "tracebench/system.h"

namespace tracebench::crosscheck {
namespace {

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json counts_json(const ToolCounts& c) {
  if (!c.counted) return nlohmann::json();
  return {{"fired", c.fired},
          {"recorded", c.recorded},
          {"lost", c.lost},
          {"fields_checked", c.payload_checked},
          {"fields_differ", c.payload_bad},
          {"how", c.how}};
}

nlohmann::json round_json(const RoundRecord& r) {
  const ReferenceRound& ref = r.reference;
  return {{"round", r.round + 1},
          {"attempt", r.attempt},
          {"order", r.suite_first ? "suite first" : "reference first"},
          {"speed_probes_ns", r.probes_ns},
          {"steady", r.steady},
          {"suite",
           {{"ns", number(r.suite.figure_ns)},
            {"verified", r.suite.verified},
            {"verification", r.suite.verification},
            {"error", r.suite.error},
            {"run_id", r.suite.run_id},
            {"benchmark", r.suite.facts}}},
          {"reference",
           {{"ns", number(ref.figure_ns)},
            {"untraced_ns", number(ref.untraced_ns)},
            {"traced_ns", number(ref.traced_ns)},
            {"untraced_runs_ns", ref.untraced_runs},
            {"traced_runs_ns", ref.traced_runs},
            {"getpid_after_runs_ns", ref.getpid_ns},
            {"counts", counts_json(ref.counts)},
            {"verified", ref.verified},
            {"error", r.reference_error}}},
          {"ratio", number(r.ratio)},
          {"counts", round_problem(r).empty()},
          {"problem", round_problem(r)}};
}

nlohmann::json case_json(const CaseOutcome& o) {
  nlohmann::json rounds = nlohmann::json::array(), redone = nlohmann::json::array();
  for (const auto& r : o.rounds) rounds.push_back(round_json(r));
  for (const auto& r : o.redone) redone.push_back(round_json(r));
  return {{"name", o.c->name},
          {"what", o.c->what},
          {"independent_tool", o.c->tool},
          {"tool_version", o.tool_version},
          {"reference", o.c->reference},
          {"suite_arguments", run_arguments(o.suite)},
          {"differs", o.c->differs},
          {"skipped", o.skipped},
          {"independent_ns", number(o.independent_ns)},
          {"suite_ns", number(o.suite_ns)},
          {"ratio",
           {{"median", o.ratio.n ? number(o.ratio.median) : nlohmann::json()},
            {"low", o.ratio.n ? number(o.ratio.low) : nlohmann::json()},
            {"high", o.ratio.n ? number(o.ratio.high) : nlohmann::json()},
            {"confidence", o.ratio.n ? number(o.ratio.confidence) : nlohmann::json()},
            {"rounds", o.ratio.n}}},
          {"rounds_left_out", o.unsteady},
          {"verdict", verdict_word(o.verdict)},
          {"reason", o.reason},
          {"rounds", rounds},
          {"redone", redone}};
}

nlohmann::json host_json(const Report& r) {
  if (!r.have_context) return nlohmann::json();
  const RunContext& c = r.context;
  return {{"host", c.host},
          {"cpu_model", c.cpu_model},
          {"cpus", c.cpus},
          {"kernel", c.kernel_release},
          {"kernel_version", c.kernel_version},
          {"virtualized", c.virtualized},
          {"hypervisor", c.virtualized ? hypervisor_name(c.hypervisor) : std::string("none")},
          {"execution", c.execution},
          {"clocksource", c.clocksource},
          {"tsc_hz", c.tsc_hz},
          {"tsc_calibrated_hz", c.tsc_calibrated_hz},
          {"tracebench_version", c.tracebench_version},
          {"git_sha", c.git_sha},
          {"build_type", c.build_type}};
}

}  // namespace

int exit_status(const Report& r) {
  bool ran = false;
  for (const auto& o : r.cases) {
    if (!o.skipped.empty()) {
      if (r.cases_named) return 1;
      continue;
    }
    ran = true;
    if (o.verdict != Verdict::kAgree) return 1;
  }
  return ran ? 0 : 1;
}

nlohmann::json to_json(const Report& r) {
  nlohmann::json cases = nlohmann::json::array();
  nlohmann::json summary = {{"agree", 0}, {"disagree", 0}, {"cannot tell", 0}, {"not measured", 0}, {"skipped", 0}};
  for (const auto& o : r.cases) {
    cases.push_back(case_json(o));
    summary[o.skipped.empty() ? verdict_word(o.verdict) : "skipped"] =
        summary[o.skipped.empty() ? verdict_word(o.verdict) : "skipped"].get<int>() + 1;
  }
  return {
      {"schema", kSchema},
      {"schema_version", kSchemaVersion},
      {"date_utc", r.date_utc},
      {"machine", host_json(r)},
      {"command_line", r.command_line},
      {"measured_cpu", r.measured_cpu},
      {"rounds", r.rounds},
      {"seconds", r.seconds},
      {"fastest_probe_ns", r.fastest_probe_ns},
      {"concurrent", r.concurrent},
      {"tolerance", kTolerance},
      {"interval",
       "order-statistic confidence interval of the median of the rounds' ratios suite/independent (binomial, "
       "95%; below 6 rounds the whole range, covering 1 - 2^(1-n))"},
      {"steadiness",
       fmt::format("a round counts for a case when all it saw of getpid's speed (probes on the measured CPU around "
                   "the suite's run and the case's reference; the loop's getpid after each run; the untraced getpid "
                   "figures beside a traced getpid) stays within {0:.0f}% of the command's fastest probe "
                   "(fastest_probe_ns) for an untraced case, within {0:.0f}% of its own least for a traced one "
                   "(one state, whichever); else it is attempted again, up to "
                   "{1} times and within the redo budget (dropped attempts under `redone`), and one still "
                   "unsteady is kept with steady: false and left out of the interval",
                   kSteadyTolerance * 100, kRoundAttempts)},
      {"verdict_rule",
       "agree: the whole interval within [0.9, 1.1]; disagree: the whole interval outside it; cannot tell: "
       "the interval crosses a bound; not measured: a round whose side failed or did not account for every "
       "event"},
      {"cases", cases},
      {"summary", summary},
      {"exit_status", exit_status(r)}};
}

}  // namespace tracebench::crosscheck
