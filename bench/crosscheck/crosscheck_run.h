// The command's rounds: which cases can run here, then for each round and
// each group of cases the suite's run and the references, in alternating
// order, every figure kept in the report.
#pragma once

#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cases.h"
#include "env.h"
#include "report.h"
#include "suite_side.h"
#include "tool.h"
#include "tracebench/lock_flags.h"
#include "tracebench/run_request.h"

namespace tracebench::crosscheck {

struct Args {
  std::vector<std::string> cases;  // empty: every case
  int rounds = 5;
  bool rounds_given = false;
  bool quick = false;
  int repetitions = 6;
  int cpu = -1;
  double redo_budget_s = 60;             // no round is attempted again past this
  std::vector<std::string> raw_options;  // -o tracer.key=value
  std::string keep, out;
  bool json = false, verbose = false;
  LockFlags lock;
};

// The command as typed, in the words that rerun it (crosscheck.json keeps it).
std::vector<std::string> command_line(const Args& a);

class Run {
 public:
  Run(const Args& a, std::vector<const Case*> cases, const TracerOptions& options, const MachineLock* lock,
      const std::string& scratch);
  // Which cases can run here: the others are skipped with the reason (the
  // tool missing, the suite's plan refusing the benchmark here); an error
  // is a request the plan refuses (a bad -o): exit 2.
  Status plan(Report* report);
  // Every round; stops early on SIGINT/SIGTERM (g_stop_requested).
  void measure(Report* report);

 private:
  struct Group {
    std::vector<const Case*> cases;
    Plan plan;
  };
  void group_round(const Group& g, int round, Report* report);
  void attempt(const Group& g, int round, Report* report);
  void suite_turn(const Group& g, int round, Report* report);
  void reference_case(const Case* c, int round, Report* report);
  CaseOutcome& outcome(Report* report, const Case* c);
  RoundRecord& record(Report* report, const Case* c, int round);
  void print_round(const Group& g, int round, Report* report);
  void settle_steadiness(Report* report) const;

  Args args_;
  // The cases as run: their suite options with the user's -o over them,
  // which the tools mirror (a buffer size, a ring's pages) too.
  std::deque<Case> owned_;
  std::vector<const Case*> cases_;
  SuiteSettings suite_;
  Env env_;
  std::map<const Case*, std::unique_ptr<Tool>> tools_;
  std::vector<Group> groups_;
  bool have_context_ = false;
  double fastest_probe_ns_ = INFINITY;  // the machine's uncontended speed, as far as seen
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace tracebench::crosscheck
