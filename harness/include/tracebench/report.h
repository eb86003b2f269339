// The reporters.  Each turns the one in-memory result (results.h, and
// compare.h for a comparison) into one format, in a file of its own; none
// reads another's output, and none computes a figure the result lacks.
// Commands reach them by format name through reporter.h's tables.
//
//   console   report_console.cc   the summary table at the end of a run
//   JSON      report_json.cc      result.json (to_json/from_json, results.h)
//   CSV       report_csv.cc       summary.csv, samples.csv (written, and read back)
//   compare   report_compare.cc   `tracebench compare`: text table or JSON
//   JUnit     report_junit.cc     `tracebench compare --junit FILE`: for CI systems
//   Bencher   report_bencher.cc   `tracebench export bencher RUN`: Bencher Metric Format
//   KCIDB     report_kcidb.cc     `tracebench export kcidb RUN`: a KernelCI KCIDB submission
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/compare.h"
#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench {

// ---- console
// Warnings always; information notes (notes.h) with `verbose`.
std::string summary_table(const RunResult& run, bool verbose = false);

// ---- JSON
std::string result_json_text(const RunResult& run);  // result.json's content
Status read_result_json(const std::string& path, RunResult* run);

// ---- CSV
// One line per benchmark: the figures a spreadsheet wants (empty fields
// where the result has no figure, never 0).
std::string summary_csv(const RunResult& run);
inline constexpr const char* kSamplesCsvHeader =
    "benchmark,variant,repetition,sample,cycles_per_event,batch,disturbed,migrated\n";
// The samples.csv lines of one benchmark (its samples, in the order taken).
std::string samples_csv_rows(const BenchmarkResult& b);
// Reads samples.csv back into the benchmarks of `run`, matched by name; an
// unreadable line is an error naming the file and line.
Status read_samples_csv(const std::string& path, RunResult* run);

// ---- compare
// Two sides of one or more runs each, as `compare_runs` compared them.
std::string compare_text(const CompareResult& c, const std::vector<const RunResult*>& a,
                         const std::vector<const RunResult*>& b);
std::string compare_table(const CompareResult& c);  // the rows and warnings
nlohmann::json compare_json(const CompareResult& c, const std::vector<const RunResult*>& a,
                            const std::vector<const RunResult*>& b);

// ---- JUnit XML
// One testcase per benchmark; a <failure> where --fail-on-regression fails.
std::string compare_junit(const CompareResult& c, const std::vector<const RunResult*>& a,
                          const std::vector<const RunResult*>& b, double threshold, double alpha);

// ---- Bencher Metric Format
// {benchmark: {measure: {value, lower_value, upper_value}}}: overhead-ns and
// overhead-cycles (median, 95% interval: bounds only where the interval
// covers 95%), traced-ns and baseline-ns (median, p10..p90); only figures
// the run has.
nlohmann::json bencher_json(const RunResult& run);
// The benchmarks whose overhead interval covers less than 95% (few
// repetitions), with what it covers: Bencher gets their value alone.
std::vector<std::string> intervals_below_95(const RunResult& run);

// ---- KCIDB (KernelCI), schema v5.3 of kernelci/kcidb-io
inline constexpr int kKcidbMajor = 5, kKcidbMinor = 3;
// The origin a submission names when none is given: this tool's own.
inline constexpr const char* kDefaultKcidbOrigin = "tracebench";
// Where the submission comes from and what the run cannot know itself.
struct KcidbSource {
  std::string origin;         // the CI system's name, [a-z0-9_]+: every id is "origin:..."
  std::string kernel_commit;  // the kernel's full git commit hash, when known
  std::string kernel_repo;    // its https:// repository, when known
  std::string run_hash;       // 12 hex digits of result.json's sha256: test ids are
                              // "origin:RUN_ID~RUN_HASH/BENCHMARK", as older run ids repeat
  std::string log_url;        // the run's log (a LAVA job's page), when known: each test's log_url
};
// One checkout (the kernel), one build (its configuration), one test per
// benchmark: path, status from the verification (PASS, FAIL, DONE for the
// none tracer, ERROR, SKIP), the figure as its numeric output in ns.
nlohmann::json kcidb_json(const RunResult& run, const KcidbSource& src);

}  // namespace tracebench
