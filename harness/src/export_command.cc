// `tracebench export bencher|kcidb RUN [--out FILE]`: a run in another
// tool's format, written by its reporter (report.h).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "tracebench/command.h"
#include "tracebench/reporter.h"
#include "tracebench/results.h"
#include "tracebench/util.h"

namespace tracebench {
namespace {

struct ExportArgs {
  std::string run, out;
  KcidbSource kcidb;
};

int refuse(const char* format, const std::string& why) {
  std::cerr << "tracebench export " << format << ": " << why << "\n";
  return 2;
}

// The one finished run `a.run` names, and its result.json's path.
Status one_run(const ExportArgs& a, const char* format, RunResult* r, std::string* file) {
  std::vector<std::string> files;
  TB_TRY(result_files(a.run, &files));
  if (files.size() != 1)
    return Status::error(a.run + " holds " + std::to_string(files.size()) + " runs: " + format +
                         " takes one run's figures per report (give one run's directory)");
  TB_TRY(read_run(files[0], r));
  if (!r->context.complete) return Status::error(files[0] + ": the run did not finish (context.complete is false)");
  *file = files[0];
  return Status::ok();
}

// `text` to standard output, or to --out (never over the run's own file).
int write_out(const ExportArgs& a, const char* format, const std::string& file, const std::string& text) {
  if (a.out.empty()) {
    std::cout << text;
    return 0;
  }
  // Nor over any file of the run (its summary.csv, samples.csv).
  if (Status s = check_output_not_input("--out", a.out, run_files({file})); !s) return refuse(format, s.message());
  if (Status s = write_file_atomic(a.out, text); !s) return refuse(format, s.message());
  return 0;
}

int export_bencher(const ExportArgs& a) {
  auto fail = [](const std::string& why) { return refuse("bencher", why); };
  RunResult r;
  std::string file;
  if (Status s = one_run(a, "Bencher", &r, &file); !s) return fail(s.message());
  Report out;
  if (Status s = run_reporters().write("bencher", RunReport{r}, &out); !s) return fail(s.message());
  if (!out.notes.empty()) std::cerr << "tracebench export bencher: " << out.notes << "\n";
  return write_out(a, "bencher", file, out.text);
}

// What KCIDB's schema requires of the values given on the command line.
Status check_kcidb_source(const KcidbSource& k) {
  // Character classes checked character by character: std::regex recurses
  // per character and overflows the stack on a long argument.
  auto only = [](const std::string& v, const char* set) {
    return !v.empty() && v.find_first_not_of(set) == std::string::npos;
  };
  auto shown = [](const std::string& v) { return v.size() > 80 ? v.substr(0, 80) + "..." : v; };
  if (!only(k.origin, "abcdefghijklmnopqrstuvwxyz0123456789_"))
    return Status::error("--origin " + shown(k.origin) +
                         ": KCIDB takes [a-z0-9_]+ (the CI system's name, e.g. tracebench_lab1)");
  if (!k.kernel_commit.empty() && (k.kernel_commit.size() != 40 || !only(k.kernel_commit, "0123456789abcdef")))
    return Status::error("--kernel-commit " + shown(k.kernel_commit) +
                         ": KCIDB takes the full 40-hex-digit commit hash");
  if (!k.kernel_repo.empty() && k.kernel_repo.rfind("https://", 0) != 0)
    return Status::error("--kernel-repo " + k.kernel_repo + ": KCIDB takes an https:// URL");
  if (!k.log_url.empty() && k.log_url.rfind("https://", 0) != 0 && k.log_url.rfind("http://", 0) != 0)
    return Status::error("--log-url " + shown(k.log_url) + ": KCIDB takes an http(s):// URL");
  return Status::ok();
}

// The LAVA job a run came back from: `lava fetch` writes DIR/lava.json
// beside the run's files, so it is looked for in the run's folder and the
// two above it.  Its job_url, or "" (no record, or one rebuilt from a log
// alone, whose server fields are null).
std::string lava_job_url(const std::string& result_file, std::string* record) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(result_file).parent_path();
  for (int up = 0; up < 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    const fs::path p = dir / "lava.json";
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) continue;
    std::ifstream in(p);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return "";
    *record = p.string();
    const auto it = j.find("job_url");
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
  }
  return "";
}

int export_kcidb(const ExportArgs& a) {
  auto fail = [](const std::string& why) { return refuse("kcidb", why); };
  if (Status s = check_kcidb_source(a.kcidb); !s) return fail(s.message());
  RunResult r;
  std::string file;
  if (Status s = one_run(a, "KCIDB", &r, &file); !s) return fail(s.message());
  KcidbSource src = a.kcidb;
  if (src.log_url.empty()) {
    std::string record;
    KcidbSource with = src;
    with.log_url = lava_job_url(file, &record);
    if (!with.log_url.empty() && check_kcidb_source(with)) {  // never a record's URL KCIDB would refuse
      src.log_url = with.log_url;
      std::cerr << "tracebench export kcidb: log_url " << src.log_url << " (the LAVA job, " << record << ")\n";
    }
  }
  src.run_hash = sha256_file(file, false).substr(0, 12);
  if (src.run_hash.size() != 12) return fail(file + ": could not be read again to hash it (check it is still there)");
  Report out;
  if (Status s = run_reporters().write("kcidb", RunReport{r, false, nullptr, src}, &out); !s) return fail(s.message());
  return write_out(a, "kcidb", file, out.text);
}

void install(CLI::App& app, int* exit_status) {
  auto* e = app.add_subcommand("export", "Write a run in another tool's format");
  e->require_subcommand(1);
  auto ba = std::make_shared<ExportArgs>();
  auto* b = e->add_subcommand("bencher", "Bencher Metric Format JSON (overhead and per-event cost, 95% intervals)");
  b->add_option("RUN", ba->run, "A run directory or its result.json")->required();
  b->add_option("--out", ba->out, "Write to this file instead of standard output");
  b->callback([ba, exit_status] { *exit_status = export_bencher(*ba); });
  auto ka = std::make_shared<ExportArgs>();
  auto* k = e->add_subcommand("kcidb",
                              "A KernelCI KCIDB submission (schema v5.3): the kernel, its build, a test per "
                              "benchmark with its status and figure in ns");
  k->add_option("RUN", ka->run, "A run directory or its result.json")->required();
  k->add_option("--origin", ka->kcidb.origin,
                "The CI system's name in KCIDB ([a-z0-9_]+): every id starts with it; a CI that submits to KernelCI "
                "gives the origin it was granted")
      ->default_val(std::string(kDefaultKcidbOrigin));
  k->add_option("--kernel-commit", ka->kcidb.kernel_commit, "The measured kernel's full git commit hash, when known");
  k->add_option("--kernel-repo", ka->kcidb.kernel_repo, "The measured kernel's https:// git repository, when known");
  k->add_option("--log-url", ka->kcidb.log_url,
                "The run's log as a URL (each test's log_url); default: the LAVA job's page when the run came back "
                "from `lava fetch` (its lava.json)");
  k->add_option("-o,--out", ka->out, "Write to this file instead of standard output");
  k->callback([ka, exit_status] { *exit_status = export_kcidb(*ka); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(export, tracebench::Command{"export", tracebench::install});
