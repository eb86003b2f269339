// `tracebench model suite`: the one command behind the cost model's tables.
// For every tracer asked for (default: every tracer this machine has) it runs
// the measurements its held-out scenarios need (`tracebench run`), fits the
// model on them (`tracebench model fit`), validates each scenario at a paced
// rate (`tracebench model validate`) and writes Table 7.  Each step is
// printed and kept in suite.json with the arguments a user would type, so any
// figure can be reproduced alone; a tracer's failing step is reported in its
// rows and the others go on.  The steps that attach a tracer (run, validate)
// run as children of this binary; the fit, which reads files and attaches
// nothing, runs in this process (spawn_self says why).
#include "suite_command.h"

#include "fit_command.h"
#include "harness/model/model_reporters.h"
#include "suite_estimate.h"
#include "suite_unsteady.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tracebench/handler_count.h"
#include "tracebench/cli_range.h"
#include "tracebench/lock_flags.h"
#include "tracebench/results.h"
#include "tracebench/machine_lock.h"
#include "tracebench/model.h"
#include "tracebench/options.h"
#include "tracebench/system.h"
#include "tracebench/tracer.h"
#include "tracebench/util.h"
#include "tracebench/workload.h"
#include "tracebench/suggest.h"

extern char** environ;

namespace tracebench::model {
namespace {

namespace fs = std::filesystem;

struct SuiteArgs {
  std::vector<std::string> tracers;
  std::string out;
  bool quick = false;
  double seconds = 8;
  int rounds = 1;
  bool plan = false;
  LockFlags lock;
};

int suite_refuse(const std::string& why) {
  std::cerr << "tracebench model suite: " << why << "\n";
  return 2;
}

struct Step {
  std::vector<std::string> args;
  std::string log;
  int exit_code = -1;
  double seconds = 0;
};

// Runs this binary with `args`, stdout and stderr into `log`.  SIGINT and
// SIGTERM stay blocked here and are unblocked in the child, which tears its
// tracer down on them; the caller stops after it.
// A child, not a call, for the steps that attach a tracer (`run`,
// `model validate`), because isolation is their point: a tracer that
// crashes the process (a library's abort, a fault in a BPF loader or in
// liblttng-ctl), hangs in teardown, or leaves process-wide state (libbpf's
// print callback, liblttng-ctl's socket, signal dispositions, a uprobe in
// this binary) costs one step, which its row reports, and never the suite,
// its other tracers' rows or the next step's measurement.  Each child also
// takes the machine lock this process holds for it (hold_for_children).
int spawn_self(const std::string& self, const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(self.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int err = posix_spawn(&pid, self.c_str(), &fa, &at, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (err) return -err;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string host_name() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

bool interrupted() {
  sigset_t pending;
  sigpending(&pending);
  return sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM) || sigismember(&pending, SIGHUP);
}

std::string shell_words(const std::vector<std::string>& args) {
  std::string s = "tracebench";
  for (const auto& a : args) s += " " + a;
  return s;
}

// One tracer's scenarios that the suite runs.
struct Plan {
  std::string tracer;
  ModelDescription description;  // the tracer's own (Tracer::model())
  std::vector<SuiteScenario> scenarios;
};

// Each tracer's scenarios, checked against the tracer and the workloads; a
// row in `rows` for each left out, saying why.  With `here`, also against
// this machine (the tracer's and the workloads' availability); without, the
// plan is what a machine that has them all would run (`--plan`).
std::vector<Plan> plan_tracers(const std::vector<std::string>& names, const SuiteArgs& a, bool here,
                               std::vector<SuiteRow>* rows) {
  std::vector<Plan> plans;
  for (const auto& name : names) {
    std::unique_ptr<Tracer> t = make_tracer(name);
    const ModelDescription description = t->model();
    std::vector<SuiteScenario> all = description.scenarios;
    size_buffers(description, (a.quick ? 2.0 : a.seconds) / 8, &all);
    if (all.empty()) {
      rows->push_back({name, "—", "—", std::nullopt,
                       "no held-out scenarios for this tracer here (the VM lab's tracers: `tracebench vm`)"});
      continue;
    }
    if (Availability av = here ? t->available() : Availability::yes(); !av.ok) {
      rows->push_back({name, "—", "—", std::nullopt, "not available: " + av.reason});
      continue;
    }
    const bool has_ecbs = has_handler_count(t->option_schema());
    Plan p{name, description, {}};
    for (const auto& s : all) {
      const Workload* w = find_workload(s.workload);
      if (!w || !t->supports(w->probe) || !t->supports_action(w->probe, s.action)) {
        rows->push_back({name, s.name, s.workload, std::nullopt,
                         fmt::format("{} does not trace {} with {}", name, s.workload, s.action)});
      } else if (s.handlers > 1 && !has_ecbs) {
        rows->push_back({name, s.name, s.workload, std::nullopt, "no handler-count option (ecbs) in this tracer"});
      } else if (here && w->available && !w->available().ok) {
        rows->push_back({name, s.name, s.workload, std::nullopt, "workload unavailable: " + w->available().reason});
      } else {
        p.scenarios.push_back(s);
      }
    }
    if (!p.scenarios.empty()) plans.push_back(p);
  }
  return plans;
}

// The measurements of every round, each tracer's in turn: `tracebench run`
// argument lists writing into `runs`.
std::vector<std::vector<std::string>> measurement_steps(const std::vector<Plan>& plans, const SuiteArgs& a,
                                                        const std::string& runs) {
  std::vector<std::vector<std::string>> steps;
  for (int round = 1; round <= a.rounds; ++round)
    for (const auto& p : plans)
      for (auto r : suite_runs(p.tracer, p.description, p.scenarios, a.quick)) {
        r.insert(r.end(), {"--out", runs});
        steps.push_back(std::move(r));
      }
  return steps;
}

std::string validation_file(const std::string& out, const Plan& p, const SuiteScenario& s, const SuiteArgs& a,
                            int round) {
  return (fs::path(out) / "validation" /
          (a.rounds > 1 ? fmt::format("{}-{}-r{}.json", p.tracer, s.name, round)
                        : fmt::format("{}-{}.json", p.tracer, s.name)))
      .string();
}

// `tracebench model validate` of one scenario at its paced rate.
std::vector<std::string> validation_step(const Plan& p, const SuiteScenario& s, const SuiteArgs& a,
                                         const std::string& model, const std::string& vout) {
  std::vector<std::string> v = {"model",  "validate", "--model",  model, "-t",
                                p.tracer, "-w",       s.workload, "-a",  s.action};
  if (s.payload_bytes) v.insert(v.end(), {"-p", std::to_string(s.payload_bytes)});
  for (const auto& o : s.option_args(p.tracer)) v.push_back(o);
  v.insert(v.end(), {"--rate", fmt::format("{:.0f}", s.rate_hz)});
  if (a.quick)
    v.push_back("--quick");
  else
    v.insert(v.end(), {"--seconds", fmt::format("{}", a.seconds)});
  v.insert(v.end(), {"--out", vout});
  return v;
}

// `--plan`: the steps, one a line as they would be printed and logged, and
// a `#` line for each scenario left out; nothing runs, nothing is written.
int print_plan(const SuiteArgs& a, const std::vector<std::string>& names) {
  std::vector<SuiteRow> rows;
  const std::vector<Plan> plans = plan_tracers(names, a, false, &rows);
  const std::string out = a.out.empty() ? "OUT" : a.out;
  const std::string runs = (fs::path(out) / "runs").string();
  const std::string model = (fs::path(out) / "model.json").string();
  for (const auto& r : rows) std::cout << fmt::format("# {} {}: {}\n", r.tracer, r.scenario, r.problem);
  const auto steps = measurement_steps(plans, a, runs);
  for (const auto& r : steps) std::cout << shell_words(r) << "\n";
  if (plans.empty()) return 0;
  std::cout << shell_words({"model", "fit", runs, "--out", model}) << "\n";
  std::size_t validations = 0;
  for (int round = 1; round <= a.rounds; ++round)
    for (const auto& p : plans)
      for (const auto& s : p.scenarios) {
        std::cout << shell_words(validation_step(p, s, a, model, validation_file(out, p, s, a, round))) << "\n";
        ++validations;
      }
  const double length = a.quick ? 2.0 : a.seconds;
  std::cout << estimate_line(steps.size(), validations, length, earlier_step_times("results", a.quick, length)) << "\n";
  return 0;
}

// --out checked and claimed (with one mkdir of logs/ that only one process
// can win: another suite that checked the same empty --out a moment ago is
// refused).  Exit status on failure, 0 when `out` is this suite's.
int check_out(const std::string& out) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec))
    return suite_refuse(fmt::format("--out {} exists and is not empty: name a new directory", out));
  if (ec && ec != std::errc::no_such_file_or_directory)
    return suite_refuse(fmt::format("--out {}: {}", out, ec.message()));
  return 0;
}
int claim_out(const std::string& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return suite_refuse(fmt::format("--out {}: {}", out, ec.message()));
  if (mkdir((fs::path(out) / "logs").c_str(), 0755) != 0)
    return suite_refuse(errno == EEXIST ? fmt::format("--out {}: another process has begun writing into it; name a new "
                                                      "directory",
                                                      out)
                                        : fmt::format("--out {}/logs: {}", out, std::strerror(errno)));
  return 0;
}

// The suite's steps, run one after another and logged: a child of this
// binary, or a function called here with the log it writes to.
class StepRunner {
 public:
  StepRunner(std::string self, std::string out) : self_(std::move(self)), out_(std::move(out)) {}
  int run(std::vector<std::string> args, const std::function<int(std::ostream&)>& in_process = nullptr) {
    Step s;
    s.args = std::move(args);
    s.log = (fs::path(out_) / "logs" /
             fmt::format("{:02}-{}.txt", steps_.size() + 1, s.args[0] == "model" ? s.args[1] : s.args[0]))
                .string();
    const auto t0 = std::chrono::steady_clock::now();
    if (in_process) {
      std::ofstream log(s.log, std::ios::trunc);
      s.exit_code = in_process(log);
    } else {
      s.exit_code = spawn_self(self_, s.args, s.log);
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << fmt::format("[{}] {} ({:.1f} s, {})\n", steps_.size() + 1, shell_words(s.args), s.seconds,
                             s.exit_code == 0 ? "ok" : fmt::format("exit {}, log {}", s.exit_code, s.log))
              << std::flush;
    steps_.push_back(s);
    return s.exit_code;
  }
  const std::vector<Step>& steps() const { return steps_; }

 private:
  std::string self_, out_;
  std::vector<Step> steps_;
};

// (tracer, scenario) -> every round's validation, or why a round has none.
using ScenarioKey = std::pair<std::string, std::string>;
struct Validations {
  std::map<ScenarioKey, std::vector<ValidationFile>> done;
  std::map<ScenarioKey, std::string> problems;
};

// One validation step's file read back.  A validation that did not hold its
// scenario exits 1 and keeps its file: its row says what happened instead
// of an error.
void collect_validation(const std::string& vout, int code, const std::string& log, const ScenarioKey& key,
                        Validations* v) {
  std::optional<ValidationFile> j;
  if (std::ifstream in(vout); in && (code == 0 || code == 1)) {
    ValidationFile file;
    Status read = Status::ok();
    try {
      read = validation_from_json(nlohmann::json::parse(in), &file);
    } catch (const std::exception& e) { read = Status::error(e.what()); }
    if (read)
      j = std::move(file);
    else if (code == 0)
      v->problems[key] = fmt::format("{}: {}", vout, read.message());
  }
  if (j && (code == 0 || !validation_held(*j)))
    v->done[key].push_back(std::move(*j));
  else if (!v->problems.count(key))
    v->problems[key] = fmt::format("validate failed: {}", log);
}

// Every round's validations, each round through all tracers, so the rounds
// are spread over the machine's slow and fast minutes alike.  Sets `stopped`
// when interrupted.
Validations run_validations(const std::vector<Plan>& plans, const SuiteArgs& a, const std::string& out,
                            const std::string& model, StepRunner* steps, bool* stopped) {
  Validations v;
  for (int round = 1; round <= a.rounds && !*stopped; ++round) {
    for (const auto& p : plans) {
      for (const auto& s : p.scenarios) {
        if ((*stopped = interrupted())) return v;
        const std::string vout = validation_file(out, p, s, a, round);
        const int code = steps->run(validation_step(p, s, a, model, vout));
        collect_validation(vout, code, steps->steps().back().log, {p.tracer, s.name}, &v);
      }
    }
  }
  return v;
}

// Table 7's rows: each scenario's median round, or why it has none.
void table_rows(const std::vector<Plan>& plans, Validations& v, const std::map<std::string, std::string>& failed,
                bool stopped, std::vector<SuiteRow>* rows) {
  for (const auto& p : plans) {
    for (const auto& s : p.scenarios) {
      SuiteRow row{p.tracer, s.name, s.workload, std::nullopt, "", {}};
      const ScenarioKey key{p.tracer, s.name};
      if (v.done.count(key)) {
        row.validation = median_round(v.done[key], &row.round_errors);
        if (v.problems.count(key)) row.round_errors.clear();  // a round failed: the rounds are not all there
      }
      if (!row.validation)
        row.problem = v.problems.count(key) ? v.problems[key]
                      : stopped             ? "interrupted"
                                            : "the model could not be fitted";
      if (!row.validation && failed.count(p.tracer)) row.problem += "; " + failed.at(p.tracer);
      rows->push_back(row);
    }
  }
}

// table7.md and suite.json in --out; the table printed.
Status write_suite_files(const SuiteArgs& a, const std::string& out, const std::vector<SuiteRow>& rows,
                         const std::vector<Step>& steps, bool stopped) {
  Report table7;
  TB_TRY(suite_reporters().write("markdown", SuiteReport{rows}, &table7));
  const std::string& table = table7.text;
  nlohmann::json steps_j = nlohmann::json::array();
  for (const auto& s : steps)
    steps_j.push_back(
        {{"command", shell_words(s.args)}, {"exit_code", s.exit_code}, {"seconds", s.seconds}, {"log", s.log}});
  nlohmann::json j = {{"date_utc", utc_now_iso8601()},
                      {"quick", a.quick},
                      {"rounds", a.rounds},
                      {"steps", steps_j},
                      {"interrupted", stopped}};
  std::string md = fmt::format(
      "# Table 7 on {} ({})\n\nMade by `tracebench model suite{}{}{}`; the model is `model.json` beside this file, "
      "fitted on the runs in `runs/`; each row is `validation/<tracer>-<scenario>{}.json`. CPU % is of one CPU; the "
      "error is measured minus predicted, in CPU points; the noise is the spread of the untraced segments' cost per "
      "event. The points and the cycles are judged on the range of the segment pairs' figures (a traced segment beside "
      "an untraced one): within ±2 points and ±25% of the prediction when the whole range is, not within when none of "
      "it is, inside the noise when it crosses a bound.{}\n\n",
      host_name(), utc_now_iso8601(), a.quick ? " --quick" : "",
      a.rounds > 1 ? fmt::format(" --rounds {}", a.rounds) : "",
      a.tracers.empty() ? "" : fmt::format(" -t {}", fmt::join(a.tracers, " -t ")), a.rounds > 1 ? "-r<round>" : "",
      a.rounds > 1 ? fmt::format(" Every measurement and validation ran {} times, round after round; a row shows the "
                                 "round whose error is the median, and every round's error in the last column.",
                                 a.rounds)
                   : "");
  for (const auto& [file, text] :
       {std::pair<std::string, std::string>{"table7.md", md + table}, {"suite.json", j.dump(2) + "\n"}})
    TB_TRY(write_file_atomic((fs::path(out) / file).string(), text));
  std::cout << "\n" << table << "\nwrote " << out << "/table7.md, suite.json\n";
  return Status::ok();
}

int run_suite(const SuiteArgs& a) {
  // Everything is checked before anything runs or is written.
  std::vector<std::string> names = a.tracers;
  if (names.empty())
    for (const auto& e : tracer_registry())
      if (e.name != kBaselineTracer) names.push_back(e.name);
  for (const auto& n : a.tracers)
    if (!make_tracer(n)) return suite_refuse(unknown_tracer_message(n));
  if (a.plan) return print_plan(a, names);
  // The default folder is this process's own: two suites started in the
  // same second never share one (and pool each other's runs).
  const std::string out = a.out.empty() ? fmt::format("results/model-{}-{}", utc_now_compact(), getpid()) : a.out;
  if (int rc = check_out(out); rc != 0) return rc;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return suite_refuse("cannot find this binary (/proc/self/exe)");
  self[n] = 0;

  // What each tracer can do here, before any step.
  std::vector<SuiteRow> rows;
  const std::vector<Plan> plans = plan_tracers(names, a, true, &rows);

  // The machine lock, held for the whole suite and handed to its steps
  // (each a child that takes it too): nobody else measures in between.
  MachineLock lock;
  if (Status s = a.lock.hold_for_children(&lock, "tracebench model suite"); !s) {
    std::cerr << s.message() << "\n";  // it names the command
    return 2;
  }
  if (int rc = claim_out(out); rc != 0) return rc;
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, nullptr);

  StepRunner steps(self, out);
  bool stopped = false;
  const std::string runs = (fs::path(out) / "runs").string();
  const std::string model = (fs::path(out) / "model.json").string();
  std::map<std::string, std::string> failed;  // tracer -> why
  // Rounds: every measurement again (all pooled into one fit), then every
  // validation again.
  for (const auto& r : measurement_steps(plans, a, runs)) {
    if ((stopped = interrupted())) break;
    const std::string& tracer = r[2];  // run -t <tracer> ...
    if (measure_until_steady([&] { return steps.run(r); }, runs, kUnsteadyAttempts, std::cout) != 0 &&
        !failed.count(tracer))
      failed[tracer] =
          fmt::format("a measurement failed (step {}: {})", steps.steps().size(), steps.steps().back().log);
  }
  bool fitted = false;
  std::error_code ec;
  // The fit reads the runs' files and writes the model: nothing attached,
  // nothing to isolate, so it is called here (its output in its log).
  if (!stopped && fs::exists(runs, ec))
    fitted = steps.run({"model", "fit", runs, "--out", model}, [&](std::ostream& log) {
      return run_fit(FitArgs{.inputs = {runs}, .out = model}, log, log);
    }) == 0;
  Validations v;
  if (fitted) v = run_validations(plans, a, out, model, &steps, &stopped);
  table_rows(plans, v, failed, stopped, &rows);
  if (Status st = write_suite_files(a, out, rows, steps.steps(), stopped); !st) {
    std::cerr << "tracebench model suite: " << st.message() << "\n";
    return 1;
  }
  if (stopped) {
    std::cerr << "tracebench model suite: interrupted; what ran is in " << out << "\n";
    return 130;
  }
  for (const auto& s : steps.steps())
    if (s.exit_code != 0) return 1;
  return 0;
}

}  // namespace

void install_suite(CLI::App* model, int* exit_status) {
  auto sa = std::make_shared<SuiteArgs>();
  auto* s = model->add_subcommand(
      "suite", "Every tracer here: measure what its Table 7 scenarios need, fit the model, validate each scenario");
  s->add_option("-t,--tracer", sa->tracers, "Tracer (repeatable; default: every tracer)");
  s->add_option("--out", sa->out, "Directory to create (default: results/model-<UTC time>)");
  s->add_flag("--quick", sa->quick, "Quick runs, 2-second validations");
  s->add_option("--seconds", sa->seconds, "Length of each validation (eight segments)")
      ->capture_default_str()
      ->check(finite_range(0.4, 600.0));
  s->add_option("--rounds", sa->rounds,
                "Measure and validate this many times, round after round (a row: the round with the median error)")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  s->add_flag("--plan", sa->plan,
              "Print the steps (runs, fit, validations) every tracer's scenarios call for, and the scenarios left "
              "out; run nothing, check nothing of this machine");
  add_lock_flags(s, &sa->lock);
  s->callback([sa, exit_status] { *exit_status = run_suite(*sa); });
}

}  // namespace tracebench::model
