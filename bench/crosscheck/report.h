// The cross-check's findings as one value: the host, the settings, every
// case's outcome; written as the table (stdout), as JSON (--json, and
// crosscheck.json in --out DIR), and read back by `tracebench report
// --crosscheck` through the JSON alone.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "outcome.h"
#include "tracebench/results.h"

namespace tracebench::crosscheck {

inline constexpr const char* kSchema = "tracebench.crosscheck";
inline constexpr int kSchemaVersion = 2;

struct Report {
  RunContext context;  // of the suite's first run: host, kernel, hypervisor, TSC
  bool have_context = false;
  std::vector<std::string> command_line;
  std::string date_utc;
  int rounds = 0;
  int measured_cpu = -1;
  double seconds = 0;
  // Some suite run measured beside another command that held or ignored
  // the machine lock (--allow-concurrent): its figures may hold the other's load.
  bool concurrent = false;
  double fastest_probe_ns = 0;  // the machine's uncontended getpid, against which rounds were judged
  bool cases_named = false;     // --case: a named case that cannot run here is a failure, not a skip
  std::vector<CaseOutcome> cases;
};

// 0 when every case that ran agrees (and one ran, and none named with
// --case was skipped); else 1.
int exit_status(const Report& r);

nlohmann::json to_json(const Report& r);

// The table, then a note per case (what each side did, its checks, what
// differs), then the rule, a hint when the host's speed kept cases from a
// verdict (unsteady_hint), and the summary line.
void print_table(const Report& r, std::ostream& out);

}  // namespace tracebench::crosscheck
