// A tracebench run rebuilt from a LAVA job log (`tracebench lava fetch`).
//
// The log is LAVA's: one record a line, `- {"dt": ..., "lvl": ..., "msg":
// ...}` (YAML flow mappings with double-quoted scalars), as `lava-run`
// prints it and as a server serves it (REST API v0.2
// /api/v0.2/jobs/<id>/logs/, `lavacli jobs logs --raw`).  The guest's
// console lines are the `target` records; the files of the run are framed
// in them by scripts/lava/guest-test.sh (TBLAVA FILE/DATA/END/DONE); the
// test cases and the job's own result are the `results` records.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench::lava {

// One record of the log.
struct LogRecord {
  std::string level;                                        // target, results, info, error, ...
  std::string msg;                                          // a string record's text
  std::vector<std::pair<std::string, std::string>> fields;  // a mapping record's (results)
  std::string field(const std::string& key) const;
};

// Reads a LAVA log's records; lines that are not records are skipped and
// counted in *skipped (may be null).
Status read_log(const std::string& text, std::vector<LogRecord>* records, std::size_t* skipped);

struct FetchedFile {
  std::string name;    // relative to the guest's /results
  int revision = 0;    // the guest's revision number
  bool final = false;  // sent after the run ended (else a journal revision)
  std::uint64_t size = 0;
  std::string sha256;
};

struct TestCase {
  std::string definition, name, result, measurement, units;
};

struct FetchOutcome {
  std::vector<FetchedFile> files;     // written under the directory
  std::vector<std::string> broken;    // revisions that did not check, why
  std::optional<int> guest_status;    // from TBLAVA DONE
  std::string job_result;             // LAVA's: pass | fail | "" (not in the log)
  std::string error_type, error_msg;  // LAVA's, when it failed
  std::string failed_action;          // the first of LAVA's actions that failed (boot-qemu-image, ...)
  std::vector<TestCase> cases;        // LAVA's results of the tracebench definition
  bool complete() const;              // the job passed, the guest finished with 0, all final
  std::string verdict() const;        // one line: what happened
};

// Rebuilds the run's files under `dir` from a log's text: per file, the
// last revision whose size and sha256 check (a final one beats any journal
// revision).  An error only when the log cannot be read or `dir` written;
// a job that failed is an outcome.  lava.json is the caller's to write
// (lava_record.h), with what else it knows of the job.
Status fetch_from_log(const std::string& log_text, const std::string& dir, FetchOutcome* out);

}  // namespace tracebench::lava
