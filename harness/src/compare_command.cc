// `tracebench compare A B`: two sides of runs compared benchmark by
// benchmark (compare.h), shown as text or JSON, with JUnit XML on request.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "builtin_commands.h"
#include "tracebench/cli_range.h"
#include "tracebench/compare.h"
#include "tracebench/pairs.h"
#include "tracebench/report.h"
#include "tracebench/reporter.h"
#include "tracebench/results.h"
#include "tracebench/run_identity.h"
#include "tracebench/util.h"

namespace tracebench::builtin {

namespace {

// The two sides' runs, read and checked, each run counted once however many
// paths lead to it (run_identity.h): on a pooled side a copy is dropped and
// named; the runs of pairs must all be distinct.
struct Sides {
  std::vector<RunResult> runs[2];
  std::vector<std::string> inputs;
  PairIds pair_ids;
  bool paired[2] = {false, false};
};

Status read_sides(const CompareArgs& c, Sides* sd) {
  std::vector<RunIdentity> paired_runs;
  for (int side = 0; side < 2; ++side) {
    std::vector<std::string> files;
    // A side laid out as pairs (pairs.h), else any result.json or directory of runs.
    TB_TRY(paired_result_files(side == 0 ? c.a : c.b, &files, side == 0 ? &sd->pair_ids.a : &sd->pair_ids.b,
                               &sd->paired[side]));
    if (!sd->paired[side]) TB_TRY(result_files(side == 0 ? c.a : c.b, &files));
    sd->inputs.insert(sd->inputs.end(), files.begin(), files.end());
    for (const auto& file : files) {
      sd->runs[side].emplace_back();
      TB_TRY(read_run(file, &sd->runs[side].back()));
      TB_TRY(check_comparable(sd->runs[side].back(), file));
    }
    if (sd->paired[side]) {
      for (std::size_t i = 0; i < files.size(); ++i) paired_runs.push_back(identify_run(files[i], sd->runs[side][i]));
      TB_TRY(check_distinct_runs(paired_runs, "the runs of the pairs, on both sides,"));
    } else {
      std::vector<std::string> dropped;
      TB_TRY(count_each_run_once(&files, &sd->runs[side], &dropped));
      for (const auto& d : dropped) std::cerr << "tracebench compare: note: " << d << "\n";
    }
  }
  return Status::ok();
}

}  // namespace

int cmd_compare(const CompareArgs& c) {
  Sides sd;
  if (Status s = read_sides(c, &sd); !s) {
    std::cerr << "tracebench compare: " << s.message() << "\n";
    return 2;
  }
  auto& runs = sd.runs;
  const std::vector<std::string>& inputs = sd.inputs;
  PairIds& pair_ids = sd.pair_ids;
  const bool* paired = sd.paired;
  if (!c.junit.empty()) {
    if (Status s = check_output_not_input("--junit", c.junit, run_files(inputs)); !s) {
      std::cerr << "tracebench compare: " << s.message() << "\n";
      return 2;
    }
  }
  std::vector<const RunResult*> a, b;
  for (const auto& r : runs[0]) a.push_back(&r);
  for (const auto& r : runs[1]) b.push_back(&r);
  CompareResult res;
  if (c.sequential && !paired[0]) {
    std::cerr
        << "tracebench compare: --sequential needs both sides laid out as pairs (pair-NNNN/<run>/, as `tracebench "
           "ab` writes DIR/A and DIR/B)\n";
    return 2;
  }
  pair_ids.sequential = c.sequential;
  if (paired[0] != paired[1]) {
    std::cerr << "tracebench compare: " << (paired[0] ? c.a : c.b) << " is laid out as pairs (pair-NNNN/) and "
              << (paired[0] ? c.b : c.a)
              << " is not: give both sides of the pairs (DIR/A and DIR/B of `tracebench ab`)\n";
    return 2;
  }
  if (Status s = compare_runs(a, b, c.threshold, c.alpha, &res, paired[0] ? &pair_ids : nullptr); !s) {
    std::cerr << "tracebench compare: " << s.message() << "\n";
    return 2;
  }
  std::string why;
  bool failing = fails_check(res, &why, c.fail_on_inconclusive);
  const CompareReport in{res, a, b, c.threshold, c.alpha};
  if (!c.junit.empty()) {
    Report junit;
    Status s = compare_reporters().write("junit", in, &junit);
    if (s) s = write_file_atomic(c.junit, junit.text);
    if (!s) {
      std::cerr << "tracebench compare: --junit: " << s.message() << "\n";
      return 2;
    }
  }
  Report shown;
  if (Status s = compare_reporters().write(c.json ? "json" : "text", in, &shown); !s) {
    std::cerr << "tracebench compare: " << s.message() << "\n";
    return 1;
  }
  std::cout << shown.text;
  if ((c.fail_on_regression || c.fail_on_inconclusive) && failing) {
    std::cerr << "tracebench compare: failing ("
              << (c.fail_on_inconclusive ? "--fail-on-inconclusive" : "--fail-on-regression") << "):\n"
              << why << "\n";
    return 1;
  }
  return 0;
}

CLI::App* add_compare_command(CLI::App& app, CompareArgs* ca) {
  auto* compare = app.add_subcommand(
      "compare", "Compare two sides of runs benchmark by benchmark, each verdict with its minimum detectable effect");
  compare
      ->add_option("A", ca->a,
                   "The reference: a run directory, a result.json, a directory of run directories (pooled), or a "
                   "directory of pair-NNNN/ run directories (paired with B's: `tracebench ab`'s DIR/A)")
      ->required();
  compare->add_option("B", ca->b, "The candidate: the same forms as A")->required();
  compare
      ->add_option("--threshold", ca->threshold,
                   "Relative change below which a difference is 'same'; a benchmark with no significant change whose "
                   "MDE at 80% power is above it is 'inconclusive'")
      ->capture_default_str()
      ->check(finite_range(0.0, 10.0));
  compare->add_option("--alpha", ca->alpha, "Significance level")->capture_default_str()->check(finite_range(0.0, 1.0));
  compare->add_flag("--json", ca->json, "Print JSON");
  compare->add_option("--junit", ca->junit,
                      "Also write JUnit XML to FILE (one test case per benchmark; a regression, or a benchmark of A "
                      "missing or failed in B, is a failure)");
  compare->add_flag("--fail-on-regression", ca->fail_on_regression,
                    "Exit 1 when a benchmark regressed, or one of A is missing or failed in B, or B has none (an "
                    "inconclusive benchmark does not fail it)");
  compare->add_flag("--sequential", ca->sequential,
                    "Sides laid out as pairs: decide with the always-valid sequential test (`tracebench ab`'s) on the "
                    "pairs in order, valid however often more pairs are added and compare re-run; a benchmark it has "
                    "not decided is 'undecided'");
  compare->add_flag("--fail-on-inconclusive", ca->fail_on_inconclusive,
                    "Also exit 1 when a benchmark is inconclusive (not significant, and its MDE at 80% power above "
                    "--threshold) or undecided (--sequential); implies --fail-on-regression");
  return compare;
}

}  // namespace tracebench::builtin
