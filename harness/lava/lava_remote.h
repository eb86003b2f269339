// A LAVA job seen from the submitter: its state and health on the server,
// LAVA's own error from its log, what that makes of it (passed, a test
// failure, an infrastructure error, ...).  lava.json is lava_record.h's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lava_rest.h"
#include "tracebench/status.h"

namespace tracebench::lava {

// /api/v0.2/jobs/<id>/ (the fields used here).
struct JobStatus {
  long id = 0;
  std::string state;   // Submitted, Scheduling, Scheduled, Running, Canceling, Finished
  std::string health;  // Unknown, Complete, Incomplete, Canceled
  std::string device;  // actual_device: empty until scheduled
  std::string device_type, description, submit_time, start_time, end_time;
  std::string failure_comment;  // set by LAVA (or an admin) on some failures
  bool finished() const { return state == "Finished"; }
};
Status job_status_from_json(const nlohmann::json& j, JobStatus* out);

// What the job's log says of its end: LAVA's `lava/job` result (error_type,
// error_msg when it failed) and every test case of the job's own definitions.
struct LogVerdict {
  bool has_job_result = false;
  std::string job_result;  // pass | fail
  std::string error_type;  // Infrastructure, Job, Test, Bug, Configuration, LAVATimeout, Canceled
  std::string error_msg;
  int cases = 0;                          // test cases outside LAVA's own `lava` definition
  std::vector<std::string> failed_cases;  // "definition/case"
};
// Reads the log's `results` records (one `- {...}` YAML flow line each, as
// the server serves /jobs/<id>/logs/); other lines are skipped.
LogVerdict verdict_from_log(const std::string& log_text);

struct JobOutcome {
  JobStatus status;
  std::string worker;  // the device's worker (empty until scheduled)
  LogVerdict log;
  // passed | test failure | infrastructure error | job error | test error |
  // timeout | configuration error | LAVA bug | canceled | failed | running
  std::string kind() const;
  bool passed() const { return kind() == "passed"; }
  // LAVA's own words: "LAVA: [error type] message", the failure comment,
  // the failed test cases.
  std::string lava_error() const;
};

// The job's page on the server (what a person opens).
std::string job_url(const LavaServer& s, long id);

// One line: "job 7 on qemu-2 (worker-2): passed, 3 test cases, http://..."
std::string outcome_line(const LavaServer& s, const JobOutcome& o);

// Reads the job, its device's worker and (once finished) its log.
Status read_outcome(const RestClient& c, long id, JobOutcome* out, std::string* log_text);

// The job as its log alone tells it (`fetch --log`, no server): finished
// when the log has LAVA's `lava/job` result, Complete when that passed.
JobOutcome outcome_from_log(const std::string& log_text);

}  // namespace tracebench::lava
