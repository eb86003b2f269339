// The KCIDB reporter: a run as a KernelCI KCIDB submission (`tracebench
// export kcidb`), schema v5.3 of kernelci/kcidb-io.  One checkout (the
// kernel the run measured), one build of it (its configuration), and one
// test per benchmark: its path in the test tree, its status from the
// verification, and its figure as the test's numeric output in ns.  Ids are
// "ORIGIN:..." as KCIDB requires, made from what the run says, so that two
// runs on one kernel name the same checkout and build; a test's id also
// carries its result.json's hash, so two runs that share a run id (older,
// second-precision ids could) never name the same test.
#include "tracebench/report.h"
#include "tracebench/results.h"
#include "tracebench/reporter.h"
#include "tracebench/system.h"

#include <fmt/format.h>

namespace tracebench {

namespace {

// A short stable hash (FNV-1a) for ids made from free text.
std::string short_hash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return fmt::format("{:012x}", h & 0xffffffffffffull);
}

// A benchmark's name as a KCIDB test path: "tracebench" then one node per
// part of the name, each in the schema's [a-zA-Z0-9_-] (others become _):
// ftrace/getpid/count/payload:0/threads:1 -> tracebench.ftrace.getpid.count.payload_0.threads_1.
std::string test_path(const std::string& name) {
  std::string path = "tracebench.";
  bool node_empty = true;
  for (char c : name) {
    if (c == '/') {
      if (node_empty) path += '_';
      path += '.';
      node_empty = true;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    path += ok ? c : '_';
    node_empty = false;
  }
  if (node_empty) path += '_';
  return path;
}

// PASS/FAIL where the verification judged the events, DONE (a measurement
// without a verdict on the kernel) for the none tracer, ERROR when the
// benchmark failed, SKIP when it did not run.
std::string test_status(const BenchmarkResult& b) {
  if (b.status == "skipped") return "SKIP";
  if (b.status != "ok") return "ERROR";
  if (b.events.verification == "failed") return "FAIL";
  if (b.events.verification == "passed") return "PASS";
  return "DONE";
}

nlohmann::json checkout(const RunContext& c, const KcidbSource& src, std::string* id) {
  const std::string key =
      src.kernel_commit.empty() ? short_hash(c.kernel_release + "|" + c.kernel_version) : src.kernel_commit;
  *id = fmt::format("{}:kernel-{}", src.origin, key);
  nlohmann::json j = {{"id", *id}, {"origin", src.origin}, {"git_commit_name", c.kernel_release}, {"valid", true}};
  if (!src.kernel_commit.empty()) j["git_commit_hash"] = src.kernel_commit;
  if (!src.kernel_repo.empty()) j["git_repository_url"] = src.kernel_repo;
  j["misc"] = {{"kernel_release", c.kernel_release}, {"kernel_version", c.kernel_version}};
  return j;
}

// The kernel as configured: the run ran on it, so its build passed.
nlohmann::json build(const RunContext& c, const KcidbSource& src, const std::string& checkout_id, std::string* id) {
  const std::string config =
      c.kernel_config_hash.empty() ? "config-unknown" : "config-" + c.kernel_config_hash.substr(0, 16);
  *id = checkout_id + ":" + config;
  nlohmann::json j = {{"id", *id}, {"checkout_id", checkout_id}, {"origin", src.origin}, {"status", "PASS"}};
  nlohmann::json misc = nlohmann::json::object();
  if (!c.kernel_config_hash.empty()) misc["kernel_config_hash"] = c.kernel_config_hash;
  if (!c.kernel_config_source.empty()) misc["kernel_config_source"] = c.kernel_config_source;
  j["misc"] = misc;
  return j;
}

nlohmann::json test(const RunContext& c, const BenchmarkResult& b, const KcidbSource& src,
                    const std::string& build_id) {
  nlohmann::json j = {{"id", fmt::format("{}:{}~{}/{}", src.origin, c.run_id, src.run_hash, b.name)},
                      {"build_id", build_id},
                      {"origin", src.origin},
                      {"path", test_path(b.name)},
                      {"status", test_status(b)},
                      {"start_time", c.date_utc}};
  j["environment"] = {{"comment", c.host + " (" + c.cpu_model + ", " + c.execution + ")"},
                      {"misc",
                       {{"host", c.host},
                        {"cpu_model", c.cpu_model},
                        {"cpus", c.cpus},
                        {"execution", c.execution},
                        {"emulated", c.emulated},
                        {"hypervisor", c.virtualized ? hypervisor_name(c.hypervisor) : ""},
                        {"hypervisor_cpuid", c.virtualized ? c.hypervisor : ""}}}};
  nlohmann::json misc = {{"run_id", c.run_id},
                         {"benchmark", b.name},
                         {"tracer", b.tracer},
                         {"workload", b.workload},
                         {"verification", b.events.verification}};
  // The figure: the overhead per event, or the none tracer's own cost
  // (what compare and the history follow); a benchmark without one has no
  // number (never 0).
  const bool base = b.tracer == kBaselineTracer;
  if (b.status == "ok" && base && b.baseline.ns.n > 0) {
    j["number"] = {{"value", b.baseline.ns.p50}, {"unit", "ns"}};
    misc["figure"] = "baseline_ns_per_event";
    misc["interval_ns"] = {{"low", b.baseline.ns.p10}, {"high", b.baseline.ns.p90}, {"spread", "p10..p90"}};
  }
  if (b.status == "ok" && !base && b.overhead_ns) {
    j["number"] = {{"value", b.overhead_ns->median}, {"unit", "ns"}};
    misc["figure"] = "overhead_ns_per_event";
    misc["interval_ns"] = {
        {"low", b.overhead_ns->low}, {"high", b.overhead_ns->high}, {"confidence", b.overhead_ns->confidence}};
  }
  if (!base && b.overhead_cycles) misc["overhead_cycles"] = b.overhead_cycles->median;
  misc["events"] = {{"fired", b.events.fired}, {"recorded", b.events.recorded}, {"lost", b.events.lost}};
  j["misc"] = misc;
  if (!src.log_url.empty()) j["log_url"] = src.log_url;
  const std::string why = b.status != "ok" ? b.error : b.events.verification_reason;
  if (!why.empty()) j["comment"] = why;
  return j;
}

}  // namespace

nlohmann::json kcidb_json(const RunResult& run, const KcidbSource& src) {
  std::string checkout_id, build_id;
  nlohmann::json co = checkout(run.context, src, &checkout_id);
  nlohmann::json bu = build(run.context, src, checkout_id, &build_id);
  nlohmann::json tests = nlohmann::json::array();
  for (const auto& b : run.benchmarks) tests.push_back(test(run.context, b, src, build_id));
  return {{"version", {{"major", kKcidbMajor}, {"minor", kKcidbMinor}}},
          {"checkouts", nlohmann::json::array({co})},
          {"builds", nlohmann::json::array({bu})},
          {"tests", tests}};
}

namespace {
class KcidbRunReporter final : public JsonReporter<RunReport> {
 public:
  Status document(const RunReport& in, nlohmann::json* out) const override {
    *out = kcidb_json(in.run, in.kcidb);
    return Status::ok();
  }
};
}  // namespace

const Reporter<RunReport>& kcidb_run_reporter() {
  static const KcidbRunReporter r;
  return r;
}

}  // namespace tracebench
