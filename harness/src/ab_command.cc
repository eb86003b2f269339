// `tracebench ab A-SPEC B-SPEC [options] -- RUN-ARGS`: a sequential A/B test.
//
// Runs `run RUN-ARGS` for side A and side B alternately, one pair at a time in
// ABBA order (A first in even pairs, B first in odd ones, so a drift of the
// host that is linear over two pairs cancels), and after each pair asks the
// always-valid mixture SPRT of sequential.h whether B differs from A, per
// benchmark, on the log ratio of the pair's run figures (what compare tests:
// each run's median overhead, or baseline for tracer none).  It stops when
// every benchmark is decided or the budget (pairs, seconds) is spent; the
// test stays valid at any stopping time, so the budget may be cut short.
// Several benchmarks share alpha by Bonferroni (alpha / K each).
//
// A spec is [BINARY][:RUN-ARGS]: the tracebench binary of that side ("" or
// "." for this one) and arguments added to RUN-ARGS for that side only
// (split at spaces), e.g. `. :-o none.inject_cycles=30` or
// `/opt/old/tracebench build/bench/tracebench`.
//
// The runs are kept as DIR/A/pair-NNNN/<run id>/ and DIR/B/pair-NNNN/<run id>/
// (pairs.h), so `tracebench compare DIR/A DIR/B` re-reads them as pairs;
// DIR/ab.json holds every pair's figures and the verdicts.
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ab_session_dir.h"
#include "tracebench/command.h"
#include "tracebench/compare.h"
#include "tracebench/lock_flags.h"
#include "tracebench/machine_lock.h"
#include "tracebench/power.h"
#include "tracebench/results.h"
#include "tracebench/run_identity.h"
#include "tracebench/sequential.h"
#include "tracebench/util.h"

extern char** environ;

namespace tracebench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct AbArgs {
  std::string a_spec, b_spec, out;
  std::vector<std::string> run_args;
  double threshold = 0.05, alpha = 0.05;
  int max_pairs = 30, min_pairs = 3;
  double max_seconds = 1800;
  bool json = false, fail_on_regression = false;
  LockFlags lock;
};

struct Spec {
  std::string text, binary;
  std::vector<std::string> args;
};

// Per benchmark: the pairs' log ratios and the test's state after them.
struct Track {
  std::string what;
  std::vector<double> a_ns, b_ns, d;
  SequentialState state;
};

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

Status parse_spec(const std::string& text, Spec* s) {
  s->text = text;
  const auto colon = text.find(':');
  std::string bin = text.substr(0, colon);
  if (bin.empty() || bin == ".") {
    std::error_code ec;
    bin = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) return Status::error("cannot resolve /proc/self/exe: " + ec.message());
  } else if (access(bin.c_str(), X_OK) != 0 || !fs::is_regular_file(bin)) {
    return Status::error(
        fmt::format("spec '{}': '{}' is not an executable file (a spec is [BINARY][:RUN-ARGS], "
                    "\".\" for this tracebench)",
                    text, bin));
  }
  s->binary = bin;
  if (colon != std::string::npos) {
    std::istringstream words(text.substr(colon + 1));
    for (std::string w; words >> w;) s->args.push_back(w);
  }
  for (const auto& w : s->args) {
    if (w == "--out" || w.rfind("--out=", 0) == 0 || w == "--plan")
      return Status::error(fmt::format("spec '{}': {} is ab's to set", text, w));
  }
  return Status::ok();
}

double wall_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// A side's run is one its binary made in this pair, not one it copied or
// linked there: its id dates it from after the spawn (ids of older builds
// are to the second, hence the second's slack), and it is a run no earlier
// pair of the session had (run_identity.h).
Status check_made_here(const Spec& spec, const std::string& file, const RunResult& run, double spawned,
                       std::vector<RunIdentity>* seen) {
  const auto began = run_id_time(run.context.run_id);
  if (!began || *began < std::floor(spawned) - 1 || *began > wall_now() + 1)
    return Status::error(
        fmt::format("the run {} that spec '{}' left is not one it made in this pair: its id {} {}; the session "
                    "decides only on runs its sides made in it",
                    file, spec.text, run.context.run_id,
                    began ? fmt::format("dates it {:.0f} s before the run was started", spawned - *began)
                          : std::string("does not begin with a time")));
  seen->push_back(identify_run(file, run));
  return check_distinct_runs(*seen, "the runs of one session");
}

// Runs `binary run RUN-ARGS SPEC-ARGS --no-samples --out dir`, its output in
// dir/run.log; the result.json it wrote in `file`.
Status run_side(const Spec& spec, const std::vector<std::string>& run_args, const fs::path& dir, std::string* file,
                double* spawned) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::error(fmt::format("{}: {}", dir.string(), ec.message()));
  std::vector<std::string> argv = {spec.binary, "run"};
  argv.insert(argv.end(), run_args.begin(), run_args.end());
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  argv.insert(argv.end(), {"--no-samples", "--out", dir.string()});
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const std::string log = (dir / "run.log").string();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  *spawned = wall_now();
  const int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return Status::error(fmt::format("spawn {}: {}", spec.binary, std::strerror(rc)));
  int ws = 0;
  pid_t w;
  do { w = waitpid(pid, &ws, 0); } while (w < 0 && errno == EINTR);
  if (w < 0) return Status::error(fmt::format("waitpid: {}", std::strerror(errno)));
  const int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  std::vector<std::string> files;
  if (code != 0 || !result_files(dir.string(), &files) || files.size() != 1)
    return Status::error(fmt::format("`{} run` of spec '{}' exited {} without one result.json; its output: {}",
                                     spec.binary, spec.text, code, log));
  *file = files[0];
  return Status::ok();
}

// One pair: both runs in ABBA order, their figures added to the tracks.
Status run_pair(const AbArgs& a, const Spec specs[2], int index, const fs::path& out,
                std::map<std::string, Track>* tracks, std::vector<std::string>* order, json* record,
                std::vector<RunIdentity>* seen) {
  const std::string pair = fmt::format("pair-{:04d}", index + 1);
  const int first = index % 2;  // 0: A then B; 1: B then A
  RunResult runs[2];
  for (int k = 0; k < 2; ++k) {
    const int side = k == 0 ? first : 1 - first;
    std::string file;
    double spawned = 0;
    TB_TRY(run_side(specs[side], a.run_args, out / (side == 0 ? "A" : "B") / pair, &file, &spawned));
    TB_TRY(read_run(file, &runs[side]));
    TB_TRY(check_comparable(runs[side], file));
    TB_TRY(check_made_here(specs[side], file, runs[side], spawned, seen));
  }
  json figures = json::object();
  for (const auto& ba : runs[0].benchmarks) {
    for (const auto& bb : runs[1].benchmarks) {
      if (ba.name != bb.name) continue;
      std::string what;
      auto fa = run_figure_ns(ba, runs[0].context.tsc_hz, &what);
      auto fb = run_figure_ns(bb, runs[1].context.tsc_hz, &what);
      if (!fa || !fb || *fa <= 0 || *fb <= 0) {
        figures[ba.name] = {{"skipped", "no positive figure on a side (failed, or overhead not above zero)"}};
        continue;
      }
      if (!tracks->count(ba.name)) order->push_back(ba.name);
      Track& t = (*tracks)[ba.name];
      t.what = what;
      t.a_ns.push_back(*fa);
      t.b_ns.push_back(*fb);
      t.d.push_back(std::log(*fb / *fa));
      figures[ba.name] = {{"a_ns", *fa}, {"b_ns", *fb}, {"log_ratio", t.d.back()}};
    }
  }
  *record = {{"pair", pair},
             {"order", first == 0 ? "AB" : "BA"},
             {"a_run", runs[0].context.run_id},
             {"b_run", runs[1].context.run_id},
             {"figures", figures}};
  return Status::ok();
}

// What a session of pairs has found so far.
struct Session {
  std::map<std::string, Track> tracks;
  std::vector<std::string> order;  // benchmarks as first seen
  std::size_t benchmarks = 0;      // named in the first pair: alpha is split over them
  json pairs = json::array();
  std::vector<RunIdentity> runs;  // every run of the session, each once
  std::string stopped = "budget: --max-pairs";
  Status run_status = Status::ok();
  double seconds = 0;
};

double alpha_each(const AbArgs& a, const Session& s) {
  return a.alpha / static_cast<double>(std::max<std::size_t>(1, s.benchmarks));
}

bool all_decided(const Session& s) {
  if (s.tracks.empty()) return false;
  for (const auto& [name, t] : s.tracks)
    if (t.state.verdict.empty()) return false;
  return true;
}

std::string percent(double log_value) {
  if (!std::isfinite(log_value)) return log_value > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", 100 * std::expm1(log_value));
}

// The verdicts, final: an undecided benchmark is inconclusive, with the MDE
// (80% power, fixed-sample paired t at its alpha) its pairs reached.
json verdicts(const AbArgs& a, const Session& s, std::string* table) {
  const double al = alpha_each(a, s);
  json rows = json::array();
  *table = fmt::format("{:<52} {:>5} {:>8} {:>20} {:>8}  {}\n", "benchmark", "pairs", "B/A", "interval of B/A-1",
                       "MDE80", "verdict");
  for (const auto& name : s.order) {
    const Track& t = s.tracks.at(name);
    const std::string verdict = t.state.verdict.empty() ? "inconclusive" : t.state.verdict;
    const double mde = std::expm1(mde_paired(t.state.sd, t.state.n, al, 0.8));
    auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    rows.push_back({{"benchmark", name},
                    {"what", t.what},
                    {"pairs", t.state.n},
                    {"ratio", std::exp(t.state.mean)},
                    {"change_low", num(std::expm1(t.state.low))},
                    {"change_high", num(std::expm1(t.state.high))},
                    {"bayes_factor", t.state.bayes_factor},
                    {"mde_80", num(mde)},
                    {"verdict", verdict}});
    *table += fmt::format("{:<52} {:>5} {:>8.3f} {:>20} {:>8}  {}\n", name, t.state.n, std::exp(t.state.mean),
                          fmt::format("[{}, {}]", percent(t.state.low), percent(t.state.high)),
                          std::isfinite(mde) ? fmt::format("{:.1f}%", 100 * mde) : "inf", verdict);
  }
  return rows;
}

Status check_args(const AbArgs& a) {
  if (!(a.threshold > 0 && a.threshold < 1)) return Status::error("--threshold is a relative change in (0, 1)");
  if (!(a.alpha > 0 && a.alpha < 0.5)) return Status::error("--alpha is in (0, 0.5)");
  if (a.min_pairs < 2 || a.max_pairs < a.min_pairs)
    return Status::error("--min-pairs is at least 2 and --max-pairs at least --min-pairs");
  if (!(a.max_seconds > 0)) return Status::error("--max-seconds is positive");
  for (const auto& w : a.run_args) {
    if (w == "--out" || w.rfind("--out=", 0) == 0 || w == "--plan")
      return Status::error(fmt::format("run argument {} is ab's to set", w));
  }
  return Status::ok();
}

// After a pair: each undecided benchmark's test on its pairs so far (a
// decided one keeps the verdict, and the pairs, it was decided on), and the
// progress line.
void update_tests(const AbArgs& a, Session* s, const json& record) {
  if (s->pairs.size() == 1) s->benchmarks = record["figures"].size();
  std::string line;
  for (auto& [name, t] : s->tracks) {
    if (t.state.verdict.empty()) {
      t.state = sequential_test(t.d, alpha_each(a, *s), a.threshold);
      if (static_cast<int>(t.d.size()) < a.min_pairs) t.state.verdict.clear();
    }
    line += fmt::format(" {} {:.3f} [{}, {}] {}", name, std::exp(t.state.mean), percent(t.state.low),
                        percent(t.state.high), t.state.verdict.empty() ? "undecided" : t.state.verdict);
  }
  std::cerr << fmt::format("pair {} ({}, {:.0f} s):{}\n", s->pairs.size(), record["order"].get<std::string>(),
                           s->seconds, line);
}

// Pairs until every benchmark is decided, the budget is spent, a run fails
// or a signal comes.
void run_until_decided(const AbArgs& a, const Spec specs[2], Session* s) {
  struct sigaction act {
  }, old_int{}, old_term{};
  act.sa_handler = on_signal;
  sigemptyset(&act.sa_mask);
  sigaction(SIGINT, &act, &old_int);
  sigaction(SIGTERM, &act, &old_term);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  for (int i = 0; i < a.max_pairs; ++i) {
    // A pair takes about as long as the last ones did: do not start one the
    // time budget cannot hold.
    if (i > 0 && elapsed() * (i + 1) / i > a.max_seconds) {
      s->stopped = "budget: --max-seconds";
      break;
    }
    json record;
    s->run_status = run_pair(a, specs, i, a.out, &s->tracks, &s->order, &record, &s->runs);
    s->seconds = elapsed();
    if (!s->run_status && g_stop) {
      // The run was interrupted with us: the pair under way is dropped.
      s->run_status = Status::ok();
      s->stopped = "interrupted";
      break;
    }
    if (!s->run_status) break;
    s->pairs.push_back(record);
    update_tests(a, s, record);
    if (g_stop) {
      s->stopped = "interrupted";
      break;
    }
    if (all_decided(*s)) {
      s->stopped = "decided";
      break;
    }
  }
  s->seconds = elapsed();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

// ab.json, the table, and the exit status.
int finish(const AbArgs& a, const Spec specs[2], const Session& s) {
  std::string table;
  json rows = verdicts(a, s, &table);
  const std::string stopped = s.run_status ? s.stopped : "failed: " + s.run_status.message();
  json doc = {{"a", {{"spec", a.a_spec}, {"binary", specs[0].binary}, {"args", specs[0].args}}},
              {"b", {{"spec", a.b_spec}, {"binary", specs[1].binary}, {"args", specs[1].args}}},
              {"run_args", a.run_args},
              {"test",
               "always-valid mixture SPRT on log(B/A) of each pair's run figures (t mixture, tau 1, "
               "right-Haar prior on the sd); alpha split over the benchmarks"},
              {"alpha", a.alpha},
              {"alpha_per_benchmark", alpha_each(a, s)},
              {"threshold", a.threshold},
              {"max_pairs", a.max_pairs},
              {"max_seconds", a.max_seconds},
              {"stopped", stopped},
              {"seconds", s.seconds},
              {"pairs", s.pairs},
              {"rows", rows}};
  if (Status w = write_file_atomic((fs::path(a.out) / "ab.json").string(), doc.dump(1) + "\n"); !w) {
    std::cerr << "tracebench ab: " << w.message() << "\n";
    return 1;
  }
  if (a.json) {
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << fmt::format("A: {}\nB: {}\n{} pairs in {:.0f} s, stopped: {}\n\n", a.a_spec, a.b_spec, s.pairs.size(),
                             s.seconds, s.run_status ? s.stopped : "a run failed");
    std::cout << table;
    std::cout << fmt::format(
        "test: always-valid mixture SPRT on the pairs' log(B/A), alpha {:.3g} ({:.3g} a benchmark), threshold "
        "{:.3g}; the interval holds at every pair at once; inconclusive = budget spent undecided (MDE80: the change "
        "its pairs would find with 80% power)\nthe runs: tracebench compare {}/A {}/B\n",
        a.alpha, alpha_each(a, s), a.threshold, a.out, a.out);
  }
  if (!s.run_status) {
    std::cerr << "tracebench ab: " << s.run_status.message() << "\n";
    return 1;
  }
  if (s.tracks.empty()) {
    std::cerr << "tracebench ab: no benchmark has a figure on both sides\n";
    return 1;
  }
  if (s.stopped == "interrupted") return 130;
  for (const auto& r : rows) {
    if (a.fail_on_regression && r["verdict"] == "regression") {
      std::cerr << "tracebench ab: failing (--fail-on-regression): " << r["benchmark"].get<std::string>()
                << " regressed\n";
      return 1;
    }
  }
  return 0;
}

int run_ab(AbArgs a) {
  auto refuse = [](const std::string& why) {
    std::cerr << "tracebench ab: " << why << "\n";
    return 2;
  };
  Spec specs[2];
  if (Status s = check_args(a); !s) return refuse(s.message());
  if (Status s = parse_spec(a.a_spec, &specs[0]); !s) return refuse(s.message());
  if (Status s = parse_spec(a.b_spec, &specs[1]); !s) return refuse(s.message());
  // The session's directory, claimed before anything runs (ab_session_dir.h).
  bool made = false;
  if (Status s = a.out.empty() ? claim_default_session_dir(&a.out, &made) : claim_session_dir(a.out, &made); !s)
    return refuse(s.message());
  // The machine lock, held for the whole session and handed to each run (a
  // child that takes it too): nobody else measures between the pairs.
  MachineLock lock;
  if (Status s = a.lock.hold_for_children(&lock, "tracebench ab"); !s) {
    release_session_dir(a.out, made);  // refused: nothing changed
    std::cerr << s.message() << "\n";  // it names the command
    return 2;
  }
  Session session;
  run_until_decided(a, specs, &session);
  return finish(a, specs, session);
}

void install(CLI::App& app, int* exit_status) {
  auto args = std::make_shared<AbArgs>();
  auto* sub = app.add_subcommand(
      "ab", "Sequential A/B test: interleaved pairs of runs (ABBA) until B is decided against A, or a budget is spent");
  sub->add_option("A", args->a_spec,
                  "Side A: [BINARY][:RUN-ARGS], the tracebench binary (\".\" for this one) and run arguments for "
                  "this side only, e.g. \".\" or \"/opt/old/tracebench\" or \".:-o ebpf.wakeup=no_wakeup\"")
      ->required();
  sub->add_option("B", args->b_spec, "Side B: the same form, e.g. \":-o none.inject_cycles=30\"")->required();
  sub->add_option("--out", args->out, "A new directory for the runs and ab.json (default results/ab-<UTC time>)");
  sub->add_option("--threshold", args->threshold,
                  "Relative change: regression/improvement at least this, same when the interval excludes it")
      ->capture_default_str();
  sub->add_option("--alpha", args->alpha, "Error rate of each verdict, shared by the benchmarks")
      ->capture_default_str();
  sub->add_option("--max-pairs", args->max_pairs, "Budget: pairs of runs")->capture_default_str();
  sub->add_option("--min-pairs", args->min_pairs, "Pairs before any verdict")->capture_default_str();
  sub->add_option("--max-seconds", args->max_seconds, "Budget: no pair is started that would end after this")
      ->capture_default_str();
  sub->add_flag("--json", args->json, "Print ab.json instead of the table");
  add_lock_flags(sub, &args->lock);
  sub->add_flag("--fail-on-regression", args->fail_on_regression, "Exit 1 when a benchmark regressed");
  sub->add_option("run-args", args->run_args, "Arguments of `tracebench run` for both sides, after --")->required();
  sub->footer(
      "Example: tracebench ab . \":-o none.inject_cycles=30\" -- -t none -w getpid --quick\n"
      "Exit: 0 done, 1 a run failed (or --fail-on-regression and a regression), 2 refused input, 130 interrupted.");
  sub->callback([args, exit_status] { *exit_status = run_ab(*args); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(ab, tracebench::Command{"ab", tracebench::install});
