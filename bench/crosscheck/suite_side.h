// The suite's side of the cross-check: `run`'s own machinery in this
// process (make_plan + run_benchmarks, the quick suite's blocks), one run
// per group of cases that share a tracer, an action and options, under the
// machine lock the command holds; the runs' files go to the command's
// scratch directory (or --keep DIR).
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cases.h"
#include "tracebench/results.h"
#include "tracebench/runner.h"

namespace tracebench {
class MachineLock;
}

namespace tracebench::crosscheck {

struct SuiteSettings {
  int cpu = -1;
  int repetitions = 6;
  std::string out_base;  // the runs' directory
  bool verbose = false;  // the runs' own output
  // `-o tracer.key=value`: added to (and over) each case's own options.
  std::map<std::string, std::map<std::string, std::string>> options;
  const MachineLock* lock = nullptr;
};

struct SuiteRound {
  double figure_ns = NAN;
  bool verified = false;     // the run's verification passed (none tracer: nothing to verify)
  std::string verification;  // "passed", "not_applicable", or why it failed
  std::string error;         // the benchmark failed: why (no figure)
  // Measured on no one level (the run called it "unsteady": its overhead
  // changed level mid-run, as a busy host's speed does): no figure, and the
  // round is left out as one the machine's speed changed during, not failed.
  bool unsteady = false;
  std::string run_id;
  nlohmann::json facts;  // the benchmark's figures for crosscheck.json
};

// The cases' suite sides as groups that share a run.
std::vector<std::vector<const Case*>> suite_groups(const std::vector<const Case*>& cases);

// The group's suite side as it will run (the case's options with the
// user's over them).
SuiteSide effective_suite(const Case& c, const SuiteSettings& s);

// Plans the group as `run` would; a case whose benchmark is not in the plan
// gets the plan's reason in *unavailable (by case name).  An error is a
// refusal of the request itself (a bad -o): exit 2.
Status plan_group(const std::vector<const Case*>& group, const SuiteSettings& s, Plan* plan,
                  std::map<std::string, std::string>* unavailable);

// One run of a planned group: each case's figure by name.
Status run_group(const std::vector<const Case*>& group, const SuiteSettings& s, const Plan& plan,
                 std::map<std::string, SuiteRound>* out, RunContext* context);

}  // namespace tracebench::crosscheck
