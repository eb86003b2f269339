// `tracebench export bencher RUN [--out FILE]`: a run in another tool's
// format, written by its reporter (report.h).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "tracebench/command.h"
#include "tracebench/report.h"
#include "tracebench/results.h"
#include "tracebench/util.h"

namespace tracebench {
namespace {

struct ExportArgs {
  std::string run, out;
};

int export_bencher(const ExportArgs& a) {
  auto fail = [](const std::string& why) {
    std::cerr << "tracebench export bencher: " << why << "\n";
    return 2;
  };
  std::vector<std::string> files;
  if (Status s = result_files(a.run, &files); !s) return fail(s.message());
  if (files.size() != 1)
    return fail(a.run + " holds " + std::to_string(files.size()) +
                " runs: Bencher takes one run's figures per report (give one run's directory)");
  RunResult r;
  if (Status s = read_run(files[0], &r); !s) return fail(s.message());
  if (!r.context.complete) return fail(files[0] + ": the run did not finish (context.complete is false)");
  const std::string text = bencher_json(r).dump(2) + "\n";
  if (const auto few = intervals_below_95(r); !few.empty()) {
    std::cerr << "tracebench export bencher: note: " << few.size()
              << " overhead interval(s) cover less than 95% (too few repetitions) and are left out, the value alone "
                 "written:";
    for (const auto& f : few) std::cerr << " " << f;
    std::cerr << "\n";
  }
  if (a.out.empty()) {
    std::cout << text;
    return 0;
  }
  if (Status s = check_output_not_input("--out", a.out, files); !s) return fail(s.message());
  if (Status s = write_file_atomic(a.out, text); !s) return fail(s.message());
  return 0;
}

void install(CLI::App& app, int* exit_status) {
  auto* e = app.add_subcommand("export", "Write a run in another tool's format");
  e->require_subcommand(1);
  auto ba = std::make_shared<ExportArgs>();
  auto* b = e->add_subcommand("bencher", "Bencher Metric Format JSON (overhead and per-event cost, 95% intervals)");
  b->add_option("RUN", ba->run, "A run directory or its result.json")->required();
  b->add_option("--out", ba->out, "Write to this file instead of standard output");
  b->callback([ba, exit_status] { *exit_status = export_bencher(*ba); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(export, tracebench::Command{"export", tracebench::install});
