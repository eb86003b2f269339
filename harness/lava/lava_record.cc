#include "lava_record.h"

#include "tracebench/util.h"

namespace tracebench::lava {
namespace {

nlohmann::json or_null(const std::string& v) { return v.empty() ? nlohmann::json() : nlohmann::json(v); }

// Where the job ran and when, as the server says it.
void add_server_facts(const LavaServer& s, const JobOutcome& o, nlohmann::json* j) {
  (*j)["lab_url"] = s.base_url;
  (*j)["job_id"] = o.status.id;
  (*j)["job_url"] = job_url(s, o.status.id);
  (*j)["job_name"] = or_null(o.status.description);
  (*j)["device"] = or_null(o.status.device);
  (*j)["device_type"] = or_null(o.status.device_type);
  (*j)["worker"] = or_null(o.worker);
  (*j)["state"] = o.status.state;
  (*j)["health"] = o.status.health;
  (*j)["failure_comment"] = or_null(o.status.failure_comment);
  (*j)["submit_time"] = or_null(o.status.submit_time);
  (*j)["start_time"] = or_null(o.status.start_time);
  (*j)["end_time"] = or_null(o.status.end_time);
}

// What came back of the run: its files (each checked against the sha256 the
// guest printed), the guest's exit status, LAVA's test cases.
void add_log_facts(const FetchOutcome& r, nlohmann::json* j) {
  (*j)["complete"] = r.complete();
  (*j)["verdict"] = r.verdict();
  (*j)["guest_status"] = r.guest_status ? nlohmann::json(*r.guest_status) : nlohmann::json();
  (*j)["files"] = nlohmann::json::array();
  for (const auto& f : r.files)
    (*j)["files"].push_back(
        {{"name", f.name}, {"revision", f.revision}, {"final", f.final}, {"size", f.size}, {"sha256", f.sha256}});
  (*j)["broken_revisions"] = r.broken;
  (*j)["test_cases"] = nlohmann::json::array();
  for (const auto& c : r.cases) {
    nlohmann::json t = {{"definition", c.definition}, {"case", c.name}, {"result", c.result}};
    if (!c.measurement.empty()) t["measurement"] = c.measurement;
    if (!c.units.empty()) t["units"] = c.units;
    (*j)["test_cases"].push_back(t);
  }
}

}  // namespace

bool figures_valid(const FetchOutcome& run, const JobOutcome& job) { return job.passed() && run.complete(); }

nlohmann::json lava_record(const FetchOutcome& run, const JobOutcome& job, const LavaServer* server) {
  nlohmann::json j;
  j["source"] = server ? "server" : "log";
  for (const char* key : {"lab_url", "job_id", "job_url", "job_name", "device", "device_type", "worker", "state",
                          "health", "failure_comment", "submit_time", "start_time", "end_time"})
    j[key] = nullptr;
  if (server) add_server_facts(*server, job, &j);
  j["outcome"] = job.kind();
  j["job_result"] = or_null(run.job_result);
  j["error_type"] = or_null(job.log.error_type);
  j["error_msg"] = or_null(job.log.error_msg);
  j["failed_action"] = or_null(run.failed_action);
  j["failed_test_cases"] = job.log.failed_cases;
  add_log_facts(run, &j);
  j["fetched_at"] = utc_now_iso8601();
  // A run whose job did not pass, or that did not come back whole, is
  // evidence, never a benchmark figure.
  j["figures_valid"] = figures_valid(run, job);
  return j;
}

Status write_lava_record(const std::string& dir, const nlohmann::json& record) {
  return write_file_atomic(dir + "/lava.json", record.dump(2) + "\n");
}

}  // namespace tracebench::lava
