// `tracebench report RUN_OR_DIR... [--vs RUN_OR_DIR...] [--history DB]
// [--crosscheck FILE] [--out DIR]`: an HTML page with plots (and report.md) from the results
// schema (and the results history) only.  This
// side reads the runs (read_run with their samples, compare_runs for --vs)
// and writes report-input.json: exactly what is to be drawn, nothing
// recomputed by the drawing; scripts/report/report.py draws it with
// matplotlib (inline SVG) and writes index.html and report.md.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "history_db.h"
#include "report_pool.h"
#include "tracebench/command.h"
#include "tracebench/compare.h"
#include "tracebench/model.h"
#include "tracebench/reporter.h"
#include "tracebench/system.h"
#include "tracebench/results.h"
#include "tracebench/setup_area.h"
#include "tracebench/util.h"

namespace tracebench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ReportArgs {
  std::vector<std::string> runs, vs, validations, history_benchmarks;
  std::string out = "report", model, history, history_host, crosscheck;
};

// At most this many series are drawn from a history without named runs or
// benchmarks (the rest are counted, not drawn).
constexpr std::size_t kMaxHistorySeries = 24;

json opt_ci(const std::optional<MedianCI>& c) {
  if (!c) return nullptr;
  return json{{"median", c->median},
              {"low", c->low},
              {"high", c->high},
              {"n", c->n},
              {"confidence", c->confidence},
              {"confidence_label", confidence_label(c->confidence)}};
}

json variant(const VariantResult& v) {
  if (v.ns.n == 0) return nullptr;
  return json{{"ns_p50", v.ns.p50},         {"ns_p10", v.ns.p10},   {"ns_p90", v.ns.p90},
              {"cycles_p50", v.cycles.p50}, {"samples", v.samples}, {"disturbed", v.disturbed}};
}

// The undisturbed samples of one variant in ns per event (at most 2000,
// evenly thinned: a CDF needs no more).
json samples_ns(const BenchmarkResult& b, bool traced, double tsc_hz) {
  std::vector<double> v;
  for (const auto& s : b.samples)
    if (s.traced == traced && !s.excluded) v.push_back(s.cycles_per_event * 1e9 / tsc_hz);
  json out = json::array();
  const std::size_t step = v.size() > 2000 ? v.size() / 2000 + 1 : 1;
  for (std::size_t i = 0; i < v.size(); i += step) out.push_back(v[i]);
  return out;
}

json run_json(const RunResult& r, const std::string& file) {
  const RunContext& c = r.context;
  json benches = json::array();
  for (const auto& b : r.benchmarks) {
    benches.push_back(
        {{"name", b.name},
         {"tracer", b.tracer},
         {"workload", b.workload},
         {"action", b.action},
         {"probe_kind", b.probe_kind},
         {"payload_bytes", b.payload_bytes},
         {"threads", b.threads},
         {"gap_us", b.gap_us},
         {"samples_per_block", b.samples_per_block},
         {"options", b.options},
         {"status", b.status},
         {"error", b.error},
         {"warnings", b.warnings},
         {"overhead_ns", opt_ci(b.overhead_ns)},
         {"overhead_cycles", opt_ci(b.overhead_cycles)},
         {"baseline", variant(b.baseline)},
         {"traced", variant(b.traced)},
         {"events",
          {{"fired", b.events.fired},
           {"recorded", b.events.recorded},
           {"lost", b.events.lost},
           {"payload_source", b.events.payload_source},
           {"payload_verified", b.events.payload_verified},
           {"verification", b.events.verification}}},
         {"samples_ns", {{"baseline", samples_ns(b, false, c.tsc_hz)}, {"traced", samples_ns(b, true, c.tsc_hz)}}}});
  }
  return {{"file", file},
          {"run_id", c.run_id},
          {"date_utc", c.date_utc},
          {"complete", c.complete},
          {"context",
           {{"host", c.host},
            {"cpu_model", c.cpu_model},
            {"cpus", c.cpus},
            {"kernel_release", c.kernel_release},
            {"hypervisor", c.virtualized ? hypervisor_name(c.hypervisor) : std::string("none")},
            {"clocksource", c.clocksource},
            {"execution", c.execution},
            {"emulated", c.emulated},
            {"tsc_ghz", c.tsc_hz / 1e9},
            {"floor_cycles", c.floor_cycles},
            {"git_sha", c.git_sha},
            {"noise_warnings", c.noise_warnings}}},
          {"benchmarks", benches}};
}

Status read_side(const std::vector<std::string>& args, std::vector<RunResult>* runs, std::vector<std::string>* files) {
  for (const auto& a : args) TB_TRY(result_files(a, files));
  if (files->empty()) return Status::error("no runs in " + fmt::format("{}", fmt::join(args, " ")));
  for (const auto& f : *files) {
    runs->emplace_back();
    TB_TRY(read_run(f, &runs->back(), /*with_samples=*/true));
  }
  return Status::ok();
}

// model.json, checked by the model's own reader, passed on as written.
Status read_model(const std::string& path, json* out) {
  TB_TRY(read_json_file(path, out));
  model::Model m;
  if (Status s = model::from_json(*out, &m); !s) return Status::error(path + ": " + s.message());
  return Status::ok();
}

// Validation files (`model validate --out`, a suite's validation/): each a
// tracebench.validation document.
Status read_validations(const std::vector<std::string>& args, json* out) {
  *out = json::array();
  for (const auto& a : args) {
    std::vector<std::string> files;
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      fs::directory_iterator it(a, ec), end;
      for (; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".json") files.push_back(it->path().string());
      if (ec) return Status::error(a + ": " + ec.message());
      std::sort(files.begin(), files.end());
      if (files.empty()) return Status::error(a + ": no validation files (*.json) in it");
    } else {
      files.push_back(a);
    }
    for (const auto& f : files) {
      json j;
      TB_TRY(read_json_file(f, &j));
      if (!j.is_object() || j.value("schema", "") != "tracebench.validation" || !j.contains("measured") ||
          !j.contains("predicted") || !j.contains("scenario"))
        return Status::error(f + ": not a validation file (schema tracebench.validation)");
      model::ValidationFile typed;
      if (Status s = model::validation_from_json(j, &typed); !s) return Status::error(f + ": " + s.message());
      j["file"] = f;
      out->push_back(j);
    }
  }
  return Status::ok();
}

// crosscheck.json (`tracebench crosscheck --out DIR`; the file or DIR),
// passed on as written once its schema and cases are what the drawing reads.
Status read_crosscheck(const std::string& arg, json* out) {
  std::error_code ec;
  const std::string path = fs::is_directory(arg, ec) ? arg + "/crosscheck.json" : arg;
  TB_TRY(read_json_file(path, out));
  if (!out->is_object() || out->value("schema", "") != "tracebench.crosscheck" ||
      out->value("schema_version", 0) != 2 || !out->contains("cases") || !(*out)["cases"].is_array())
    return Status::error(path + ": not a cross-check file (schema tracebench.crosscheck, version 2)");
  for (const auto& c : (*out)["cases"]) {
    for (const char* key : {"name", "independent_tool", "verdict", "reason", "skipped", "ratio"})
      if (!c.contains(key)) return Status::error(path + ": a case without `" + std::string(key) + "`");
  }
  (*out)["file"] = path;
  return Status::ok();
}

// The history's series of the named benchmarks (else those of the runs being
// reported, else every benchmark in it), each with its change points.
Status read_history(const ReportArgs& a, const std::vector<RunResult>& runs, json* out) {
  std::unique_ptr<history::Db> db;
  TB_TRY(history::open_db(a.history, false, &db));
  std::vector<std::string> names = a.history_benchmarks;
  const bool all = names.empty() && runs.empty();
  if (names.empty()) {
    for (const auto& r : runs)
      for (const auto& b : r.benchmarks)
        if (std::find(names.begin(), names.end(), b.name) == names.end()) names.push_back(b.name);
  }
  if (all) TB_TRY(history::benchmark_names(*db, &names));
  json series = json::array();
  std::size_t left_out = 0;
  for (const auto& name : names) {
    std::vector<history::Series> ss;
    TB_TRY(history::series_of(*db, name, a.history_host, ChangePointOptions{}, &ss));
    if (ss.empty() && !a.history_benchmarks.empty())
      return Status::error(fmt::format("{}: no figures of {}{}", db->name(), name,
                                       a.history_host.empty() ? "" : " on " + a.history_host));
    for (const auto& s : ss) {
      if (all && series.size() >= kMaxHistorySeries) {
        ++left_out;
        continue;
      }
      series.push_back(history::to_json(s));
    }
  }
  *out = {{"db", db->name()}, {"series", series}, {"left_out", left_out}};
  return Status::ok();
}

Status find_script(std::string* path) {
  std::vector<std::string> candidates;
  if (const char* env = getenv("TRACEBENCH_SCRIPTS_DIR")) candidates.push_back(std::string(env) + "/report/report.py");
#ifdef TRACEBENCH_SOURCE_DIR
  candidates.push_back(std::string(TRACEBENCH_SOURCE_DIR) + "/scripts/report/report.py");
#endif
  for (const auto& c : candidates)
    if (access(c.c_str(), R_OK) == 0) {
      *path = c;
      return Status::ok();
    }
  return Status::error(
      "cannot find scripts/report/report.py (set TRACEBENCH_SCRIPTS_DIR to the source tree's scripts)");
}

// A directory beside `out` (same file system, so it can be renamed to it).
Status make_staging_dir(const std::string& out, std::string* tmp) {
  const fs::path target = fs::path(out).lexically_normal();
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::error("--out " + out + ": cannot create " + parent.string() + ": " + ec.message());
  std::string name = target.filename().string();
  if (name.empty() || name == "." || name == "..") return Status::error("--out " + out + ": name a directory");
  std::string tmpl = (parent / ("." + name.substr(0, 64) + ".tmp-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) return errno_status("--out " + out + ": create a directory in " + parent.string(), errno);
  *tmp = tmpl;
  return Status::ok();
}

// Removes the staging directory unless it became --out.
struct StagingDir {
  std::string path;
  ~StagingDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// What the report reads: the runs, the reference runs, and the optional
// model, validation files and history.
struct ReportInputs {
  std::vector<RunResult> b, base;
  std::vector<std::string> b_files, base_files;
  json model = nullptr, validations = json::array(), history = nullptr, crosscheck = nullptr;
};

// The arguments that go together, and --out free to be written: checked
// before anything is read.
Status check_report_args(const ReportArgs& a, std::string* script) {
  std::error_code ec;
  // The name itself (a symlink there would be replaced, not followed, by the final rename).
  const fs::file_status out_st = fs::symlink_status(a.out, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) return Status::error("--out " + a.out + ": " + ec.message());
  if (fs::exists(out_st) && !(fs::is_directory(out_st) && fs::is_empty(a.out, ec) && !ec))
    return Status::error("--out " + a.out + " exists and is not an empty directory: nothing is overwritten");
  TB_TRY(find_script(script));
  if (a.runs.empty() && a.history.empty() && a.crosscheck.empty())
    return Status::error("nothing to report: give runs, --history DB or --crosscheck FILE");
  if (a.runs.empty() && !a.vs.empty()) return Status::error("--vs needs runs to compare with");
  if (a.history.empty() && (!a.history_benchmarks.empty() || !a.history_host.empty()))
    return Status::error("--history-benchmark and --history-host go with --history DB");
  return Status::ok();
}

// `what: ` before a failed step's message.
Status prefixed(const char* what, Status s) { return s ? s : Status::error(what + s.message()); }

Status read_inputs(const ReportArgs& a, ReportInputs* in) {
  if (!a.runs.empty()) TB_TRY(read_side(a.runs, &in->b, &in->b_files));
  if (!a.vs.empty()) TB_TRY(prefixed("--vs: ", read_side(a.vs, &in->base, &in->base_files)));
  if (!a.model.empty()) TB_TRY(prefixed("--model: ", read_model(a.model, &in->model)));
  if (!a.validations.empty()) TB_TRY(prefixed("--validation: ", read_validations(a.validations, &in->validations)));
  if (!a.history.empty()) TB_TRY(prefixed("--history: ", read_history(a, in->b, &in->history)));
  if (!a.crosscheck.empty()) TB_TRY(prefixed("--crosscheck: ", read_crosscheck(a.crosscheck, &in->crosscheck)));
  return Status::ok();
}

// The runs against the reference runs (--vs), as compare's JSON document.
Status compare_sides(const ReportInputs& in, json* out) {
  std::vector<const RunResult*> pa, pb;
  for (std::size_t i = 0; i < in.base.size(); ++i) {
    TB_TRY(check_comparable(in.base[i], in.base_files[i]));
    pa.push_back(&in.base[i]);
  }
  for (std::size_t i = 0; i < in.b.size(); ++i) {
    TB_TRY(check_comparable(in.b[i], in.b_files[i]));
    pb.push_back(&in.b[i]);
  }
  CompareResult c;
  TB_TRY(compare_runs(pa, pb, 0.05, 0.05, &c));
  return compare_reporters().document("json", CompareReport{c, pa, pb}, out);
}

// report-input.json: exactly what is to be drawn.
Status report_input(const ReportInputs& in, json* input) {
  *input = {{"schema", "tracebench.report-input"}, {"schema_version", 2},
            {"made_utc", utc_now_iso8601()},       {"model", in.model},
            {"validations", in.validations},       {"history", in.history},
            {"crosscheck", in.crosscheck}};
  (*input)["runs"] = json::array();
  for (std::size_t i = 0; i < in.b.size(); ++i) (*input)["runs"].push_back(run_json(in.b[i], in.b_files[i]));
  // What the charts draw: one point per configuration, repeated runs pooled.
  (*input)["configurations"] = report::pool_configurations(in.b);
  (*input)["compare"] = nullptr;
  if (!in.base.empty()) TB_TRY(compare_sides(in, &(*input)["compare"]));
  return Status::ok();
}

// Draws `input` with the script into a temp directory beside --out, renamed
// to it at the end: a failed report leaves no half-written folder.  Returns
// the command's exit status.
int draw_report(const ReportArgs& a, const std::string& script, const json& input) {
  auto fail = [](const std::string& why) {
    std::cerr << "tracebench report: " << why << "\n";
    return 2;
  };
  std::string tmp;
  if (Status s = make_staging_dir(a.out, &tmp); !s) return fail(s.message());
  StagingDir staging{tmp};
  const std::string in_path = tmp + "/report-input.json";
  if (Status s = write_file_atomic(in_path, input.dump(1) + "\n"); !s) return fail(s.message());
  // The drawing: Debian's python3 with matplotlib.
  pid_t pid = fork();
  if (pid == 0) {
    execl("/usr/bin/python3", "python3", script.c_str(), in_path.c_str(), tmp.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return fail("cannot run /usr/bin/python3");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "tracebench report: drawing failed (" << script << " exited "
              << (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) << "); nothing was written\n";
    return 1;
  }
  // rename() replaces an empty directory, never a full one (checked before, and again by the kernel).
  if (rename(tmp.c_str(), a.out.c_str()) != 0) {
    std::cerr << "tracebench report: " << errno_status("rename " + tmp + " -> " + a.out, errno).message()
              << "; nothing was written\n";
    return 1;
  }
  staging.path.clear();
  std::cout << "report: " << a.out << "/index.html, " << a.out << "/report.md\n";
  return 0;
}

int run_report(const ReportArgs& a) {
  std::string script;
  ReportInputs in;
  json input;
  Status s = check_report_args(a, &script);
  if (s)
    s = require_area("report", "the report's drawing (Debian's python3 with matplotlib: scripts/report/report.py)",
                     {"/usr/bin/python3"});
  if (s) s = read_inputs(a, &in);
  if (s) s = report_input(in, &input);
  if (!s) {
    std::cerr << "tracebench report: " << s.message() << "\n";
    return 2;
  }
  return draw_report(a, script, input);
}

void install(CLI::App& app, int* exit_status) {
  auto a = std::make_shared<ReportArgs>();
  auto* r = app.add_subcommand("report", "An HTML page with plots (and report.md) from runs");
  r->add_option("RUN", a->runs, "Run directories, result.json files, or directories of runs (optional with --history)");
  r->add_option("--vs", a->vs, "The reference runs: B/A per benchmark with p-values and verdicts (pooled)");
  r->add_option("--out", a->out, "Directory to write (must not exist, or be empty)")->capture_default_str();
  r->add_option("--model", a->model, "model.json (`tracebench model fit`): its fits and residuals");
  r->add_option("--validation", a->validations,
                "Validation files or directories of them (`model validate --out`, a suite's validation/): predicted vs "
                "measured CPU");
  r->add_option("--history", a->history,
                "A results history (`tracebench history add`): the series of the runs' benchmarks over time, kernel "
                "and commit, with their change points");
  r->add_option("--history-benchmark", a->history_benchmarks, "Only these benchmarks' series (with --history)");
  r->add_option("--history-host", a->history_host, "Only this machine's series (name or fingerprint; with --history)");
  r->add_option("--crosscheck", a->crosscheck,
                "crosscheck.json (`tracebench crosscheck --out DIR`; the file or DIR): each case's ratio "
                "suite/independent with its interval against the ±10% band, and its verdict");
  r->callback([a, exit_status] { *exit_status = run_report(*a); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(report, tracebench::Command{"report", tracebench::install});
