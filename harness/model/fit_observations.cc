// The cost model's fit: what it reads of a benchmark (its configuration,
// handlers, whether their predicates hold) and the check that the runs are
// of one machine.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/model/fit_internal.h"
#include "tracebench/handler_count.h"
#include "tracebench/model_description.h"

namespace tracebench::model::fit_detail {

std::set<std::string> wakeup_knobs(const std::string& tracer) { return model_description(tracer).wakeup_knobs; }

std::pair<std::map<std::string, std::string>, std::string> config_of(const BenchmarkResult& b,
                                                                     const std::set<std::string>& skip) {
  std::map<std::string, std::string> o;
  std::string text;
  for (const auto& [k, v] : b.options) {
    if (k == kEcbsOption || k == kExtraPredicateOption || skip.count(k)) continue;
    o[k] = v;
    text += (text.empty() ? "" : ",") + k + "=" + v;
  }
  return {o, text};
}

Status same_machine(const std::vector<RunResult>& runs) {
  const RunContext& a = runs.front().context;
  for (const auto& r : runs) {
    const RunContext& b = r.context;
    auto differ = [&](const char* what, const std::string& x, const std::string& y) {
      return Status::error(
          fmt::format("model fit: one model is for one machine and kernel: run {} has {} '{}', run {} "
                      "has '{}'",
                      a.run_id, what, x, b.run_id, y));
    };
    if (b.emulated != a.emulated || b.execution != a.execution)
      return Status::error(fmt::format("model fit: refusing to mix emulated and host runs: {} ran on {}, {} on {}",
                                       a.run_id, a.execution, b.run_id, b.execution));
    if (b.concurrent)
      return Status::error(
          fmt::format("model fit: run {} was measured concurrently with another tracebench command "
                      "(context.concurrent): its figures may hold the other's probes and load; "
                      "measure it again alone",
                      b.run_id));
    if (b.host != a.host) return differ("host", a.host, b.host);
    if (b.cpu_model != a.cpu_model) return differ("CPU", a.cpu_model, b.cpu_model);
    if (b.kernel_release != a.kernel_release) return differ("kernel", a.kernel_release, b.kernel_release);
    if (!(b.tsc_hz > 0) || std::fabs(b.tsc_hz - a.tsc_hz) > 0.01 * a.tsc_hz)
      return Status::error(fmt::format("model fit: run {} has a TSC of {:.0f} Hz, run {} of {:.0f} Hz: not one machine",
                                       a.run_id, a.tsc_hz, b.run_id, b.tsc_hz));
  }
  return Status::ok();
}

int handlers_of(const BenchmarkResult& b) {
  if (b.tracer_details.contains(kEcbsOption) && b.tracer_details[kEcbsOption].is_number_integer())
    return std::max(1, b.tracer_details[kEcbsOption].get<int>());
  auto it = b.options.find(kEcbsOption);
  return it == b.options.end() ? 1 : std::max(1, std::atoi(it->second.c_str()));
}

bool extra_predicate_holds(const BenchmarkResult& b) {
  if (b.tracer_details.contains(kExtraPredicateOption) && b.tracer_details[kExtraPredicateOption].is_string())
    return b.tracer_details[kExtraPredicateOption].get<std::string>() != "false";
  auto it = b.options.find(kExtraPredicateOption);
  return it == b.options.end() || it->second != "false";
}

}  // namespace tracebench::model::fit_detail
