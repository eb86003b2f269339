// `tracebench crosscheck`: does the suite measure what independent tools
// measure on this host?  For each case (cases.h) the suite side runs with
// `run`'s own machinery in this process (suite_side.h) and the reference
// side runs an independent tool around a plain C loop (reference_round.h);
// the two alternate over rounds, and each case's verdict comes from the
// interval of the rounds' ratios (round_stats.h).  README.md in this folder
// explains the method and the cases.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "crosscheck_run.h"
#include "env.h"
#include "undo.h"
#include "tracebench/command.h"
#include "tracebench/lock_flags.h"
#include "tracebench/run_request.h"

namespace tracebench::crosscheck {
namespace {

// The scratch directory, removed on every way out (the signal path too:
// undo.h) unless it is to be kept.
class Scratch {
 public:
  explicit Scratch(const std::string& keep) {
    std::error_code ec;
    if (!keep.empty()) {
      std::filesystem::create_directories(keep, ec);
      path_ = ec ? "" : keep;
      return;
    }
    char tmpl[] = "/tmp/tracebench-crosscheck-XXXXXX";
    if (!mkdtemp(tmpl)) return;
    path_ = tmpl;
    remove_ = Undo([path = path_] {
      std::error_code e;
      std::filesystem::remove_all(path, e);
    });
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Undo remove_;
};

// Writes DIR/crosscheck.json through a temp file beside it.
Status write_json_file(const std::string& dir, const nlohmann::json& j) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::error("cannot create " + dir + ": " + ec.message());
  const std::string path = dir + "/crosscheck.json", tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << j.dump(2) << "\n";
    if (!f.flush()) return Status::error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::error("cannot rename " + tmp + ": " + ec.message());
  return Status::ok();
}

// Checks what the user typed before anything is locked or run: exit 2 with
// the reason.
Status check_request(const Args& a, std::vector<const Case*>* cases, TracerOptions* options) {
  for (const auto& name : a.cases.empty() ? case_names() : a.cases) {
    const Case* c = find_case(name);
    if (!c) return Status::error("no case `" + name + "`");
    if (std::find(cases->begin(), cases->end(), c) != cases->end())
      return Status::error("--case " + name + " given twice");
    cases->push_back(c);
  }
  TB_TRY(split_option_args(a.raw_options, "", options));
  for (const auto& [tracer, keys] : *options) {
    const bool used =
        std::any_of(cases->begin(), cases->end(), [&](const Case* c) { return c->suite.tracer == tracer; });
    std::string running;
    for (const Case* c : *cases) running += (running.empty() ? "" : ", ") + c->suite.tracer;
    if (!used) return tracer_not_in_run(tracer, keys.begin()->first, running);
  }
  const std::vector<int> online = online_cpus();
  if (a.cpu >= 0 && std::find(online.begin(), online.end(), a.cpu) == online.end())
    return Status::error("--cpu " + std::to_string(a.cpu) + " is not an online CPU");
  if (!a.out.empty() && std::filesystem::exists(a.out) && !std::filesystem::is_directory(a.out))
    return Status::error("--out " + a.out + " is not a directory");
  return Status::ok();
}

int crosscheck(Args a) {
  std::vector<const Case*> cases;
  TracerOptions options;
  LockRequest req;
  if (Status s = check_request(a, &cases, &options); !s || !(s = a.lock.request(&req))) {
    std::cerr << "tracebench crosscheck: " << s.message() << "\n";
    return 2;
  }
  if (a.quick && !a.rounds_given) a.rounds = 3;
  install_signal_watcher();
  MachineLock lock;  // one measuring command per machine, held over every round
  if (Status s = lock.acquire(req, "tracebench crosscheck", &g_stop_requested); !s) {
    std::cerr << s.message() << "\n";
    return g_stop_requested ? 130 : 2;
  }
  Scratch scratch(a.keep);
  if (scratch.path().empty()) {
    std::cerr << "tracebench crosscheck: cannot create the directory for the runs ("
              << (a.keep.empty() ? "/tmp" : a.keep) << ")\n";
    return 1;
  }
  Report report;
  report.cases_named = !a.cases.empty();
  Run run(a, cases, options, &lock, scratch.path());
  if (Status s = run.plan(&report); !s) {
    std::cerr << "tracebench crosscheck: " << s.message() << "\n";
    return 2;
  }
  run.measure(&report);
  if (g_stop_requested) {
    std::cerr << "tracebench crosscheck: interrupted; every tracer, tool and loop it started is stopped\n";
    return 130;
  }
  if (a.json)
    std::cout << to_json(report).dump(2) << "\n";
  else
    print_table(report, std::cout);
  if (!a.out.empty()) {
    if (Status s = write_json_file(a.out, to_json(report)); !s) {
      std::cerr << "tracebench crosscheck: " << s.message() << "\n";
      return 1;
    }
    std::cerr << "crosscheck: wrote " << a.out << "/crosscheck.json\n";
  }
  if (!a.keep.empty()) std::cerr << "crosscheck: the suite's runs are in " << a.keep << "/suite\n";
  return exit_status(report);
}

void install(CLI::App& app, int* exit_status) {
  auto* s = app.add_subcommand(
      "crosscheck",
      "Check the suite against independent tools on this host: tracefs by hand, bpftrace, perf record, the lttng "
      "CLI and perf bench, each around a plain C loop, alternating with the suite's own runs over rounds. Per case: "
      "the ratio suite/independent per round, its median and order-statistic interval over the rounds, and a "
      "verdict: agree when the whole interval lies within ±10%, disagree when it lies wholly outside, cannot tell "
      "when it crosses a bound; not measured when a round failed or a side did not account for every event. "
      "Exit 0 when every case agrees, 1 otherwise, 2 for bad input, 130 interrupted");
  auto a = std::make_shared<Args>();
  s->add_option("--case", a->cases, "A case to run (repeatable; default: every case available here)")
      ->check(CLI::IsMember(case_names()));
  auto* rounds = s->add_option("--rounds", a->rounds, "Rounds (suite and reference alternating; default 5)")
                     ->check(CLI::Range(3, 50));
  s->add_flag("--quick", a->quick, "3 rounds (unless --rounds): the interval then covers 75%");
  s->add_option("--repetitions,-r", a->repetitions, "The suite's repetitions per round (default 6)")
      ->check(CLI::Range(2, 100));
  s->add_option("--redo-budget", a->redo_budget_s,
                "Seconds after which a round the machine's speed changed during is not attempted again but left "
                "out (default 60)")
      ->check(CLI::Range(0.0, 3600.0));
  s->add_option("--cpu", a->cpu, "Measured CPU: the suite's and the loops' (default: the last)")
      ->check(CLI::NonNegativeNumber);
  s->add_option("--option,-o", a->raw_options,
                "<tracer>.<key>=<value> for the suite side of the cases of that tracer, as `run -o` (e.g. "
                "none.inject_cycles=3000 makes the untraced cases disagree)");
  s->add_option("--keep", a->keep, "Keep the suite's runs (every round's result.json) in this directory");
  s->add_option("--out", a->out, "Write crosscheck.json (every round's figures, the host) into this directory");
  s->add_flag("--json", a->json, "Print the JSON instead of the table");
  s->add_flag("--verbose,-v", a->verbose, "Show the suite runs' own output");
  add_lock_flags(s, &a->lock);
  s->callback([a, rounds, exit_status] {
    a->rounds_given = rounds->count() > 0;
    *exit_status = crosscheck(*a);
  });
}

}  // namespace
}  // namespace tracebench::crosscheck

TRACEBENCH_REGISTER_COMMAND(crosscheck, tracebench::Command{"crosscheck", tracebench::crosscheck::install});
