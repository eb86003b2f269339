#include "lava_remote.h"

#include <sstream>

#include "lava_yaml.h"
#include "tracebench/util.h"

namespace tracebench::lava {
namespace {

std::string str(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

}  // namespace

Status job_status_from_json(const nlohmann::json& j, JobStatus* out) {
  if (!j.is_object() || !j.contains("id") || !j["id"].is_number_integer() || str(j, "state").empty())
    return Status::error("the server's job record has no id or state (not LAVA's REST API v0.2?)");
  out->id = j["id"].get<long>();
  out->state = str(j, "state");
  out->health = str(j, "health");
  out->device = str(j, "actual_device");
  out->device_type = str(j, "requested_device_type");
  out->description = str(j, "description");
  out->submit_time = str(j, "submit_time");
  out->start_time = str(j, "start_time");
  out->end_time = str(j, "end_time");
  out->failure_comment = str(j, "failure_comment");
  return Status::ok();
}

LogVerdict verdict_from_log(const std::string& log_text) {
  LogVerdict v;
  std::istringstream in(log_text);
  std::string line;
  while (std::getline(in, line)) {
    // Only results records: cheap to spot, and the console lines (target)
    // may be anything the guest printed.
    // The server's lines are `- {...}`; lava-run's output and logs written
    // by hand may drop the list's dash (lava_log.h reads both, so does this).
    if (line.rfind("{", 0) == 0) line = "- " + line;
    if (line.rfind("- {", 0) != 0 || line.find("\"lvl\": \"results\"") == std::string::npos) continue;
    // YAML flow, not JSON: the dispatcher writes tags (`"endtc": ! "580"`).
    nlohmann::json doc;
    if (!parse_yaml(line, "log", &doc) || !doc.is_array() || doc.size() != 1) continue;
    const nlohmann::json& rec = doc[0];
    if (!rec.is_object() || !rec.contains("msg") || !rec["msg"].is_object()) continue;
    const nlohmann::json& m = rec["msg"];
    const std::string definition = str(m, "definition"), name = str(m, "case"), result = str(m, "result");
    if (definition == "lava") {
      if (name == "job") {
        v.has_job_result = true;
        v.job_result = result;
        v.error_type = str(m, "error_type");
        v.error_msg = str(m, "error_msg");
        while (!v.error_msg.empty() && (v.error_msg.back() == '\n' || v.error_msg.back() == ' '))
          v.error_msg.pop_back();
      }
      continue;
    }
    ++v.cases;
    // unknown: a benchmark whose events were right but whose overhead had no
    // one level (lava_cases.h): no verdict on the kernel, not a failure.
    if (result != "pass" && result != "skip" && result != "unknown") v.failed_cases.push_back(definition + "/" + name);
  }
  return v;
}

std::string JobOutcome::kind() const {
  if (!status.finished()) return status.state == "Canceling" ? "canceled" : "running";
  if (status.health == "Canceled" || log.error_type == "Canceled") return "canceled";
  if (status.health == "Complete" && log.job_result != "fail")
    return log.failed_cases.empty() ? "passed" : "test failure";
  const std::string& t = log.error_type;
  if (t == "Infrastructure") return "infrastructure error";
  if (t == "Job") return "job error";
  if (t == "Test") return "test error";
  if (t == "LAVATimeout") return "timeout";
  if (t == "Configuration") return "configuration error";
  if (t == "Bug") return "LAVA bug";
  return "failed";
}

std::string JobOutcome::lava_error() const {
  std::string e;
  if (!log.error_type.empty()) e = "LAVA: [" + log.error_type + "] " + log.error_msg;
  if (!status.failure_comment.empty())
    e += (e.empty() ? "" : "; ") + std::string("failure comment: ") + status.failure_comment;
  if (!log.failed_cases.empty()) {
    e += (e.empty() ? "" : "; ") + std::string("failed test cases:");
    for (const auto& c : log.failed_cases) e += " " + c;
  }
  if (e.empty() && !passed() && status.finished())
    e = "health " + status.health + " and no error in the job's log (see its page)";
  return e;
}

std::string job_url(const LavaServer& s, long id) { return s.base_url + "/scheduler/job/" + std::to_string(id); }

std::string outcome_line(const LavaServer& s, const JobOutcome& o) {
  std::string where = o.status.device.empty() ? std::string("no device") : o.status.device;
  if (!o.worker.empty()) where += " (" + o.worker + ")";
  std::string line = "job " + std::to_string(o.status.id) + " on " + where + ": " + o.kind();
  if (o.passed()) line += ", " + std::to_string(o.log.cases) + " test case(s)";
  if (std::string e = o.lava_error(); !e.empty() && !o.passed()) line += ": " + e;
  return line + "  " + job_url(s, o.status.id);
}

Status read_outcome(const RestClient& c, long id, JobOutcome* out, std::string* log_text) {
  nlohmann::json j;
  TB_TRY(c.get_json("jobs/" + std::to_string(id) + "/", &j));
  TB_TRY(job_status_from_json(j, &out->status));
  if (!out->status.device.empty()) {
    nlohmann::json d;
    TB_TRY(c.get_json("devices/" + out->status.device + "/", &d));
    out->worker = str(d, "worker_host");
  }
  if (!out->status.finished()) return Status::ok();
  HttpReply r;
  TB_TRY(c.get("jobs/" + std::to_string(id) + "/logs/", &r));
  // A job that never started (refused at scheduling) has no log: 404.
  if (r.code == 200) {
    out->log = verdict_from_log(r.body);
    if (log_text) *log_text = std::move(r.body);
  } else if (r.code != 404) {
    return Status::error("GET the log of job " + std::to_string(id) + ": " + reply_error(r));
  }
  return Status::ok();
}

JobOutcome outcome_from_log(const std::string& log_text) {
  JobOutcome o;
  o.log = verdict_from_log(log_text);
  // No server: the log's own `lava/job` result stands for the job's health;
  // a log without one was cut while the job ran.
  o.status.state = o.log.has_job_result ? "Finished" : "Running";
  o.status.health = !o.log.has_job_result ? "Unknown" : o.log.job_result == "pass" ? "Complete" : "Incomplete";
  return o;
}

}  // namespace tracebench::lava
