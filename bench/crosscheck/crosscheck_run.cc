#include "crosscheck_run.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "machine_state.h"
#include "reference_round.h"

namespace tracebench::crosscheck {
namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void pin_this_thread(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  sched_setaffinity(0, sizeof set, &set);
}

// What a round saw of the machine's speed, per case: the probes, the loop's
// getpid after each of its runs, and where a traced getpid is compared the
// untraced getpid figures of both sides (the median of the reference's
// untraced runs, as its figure takes them; the suite's untraced median).
// The untraced cases' own figures never count.
std::vector<double> speed_seen(const Case& c, const RoundRecord& r) {
  std::vector<double> seen = r.probes_ns;
  if (c.suite.figure == SuiteFigure::kUntraced) return seen;
  seen.insert(seen.end(), r.reference.getpid_ns.begin(), r.reference.getpid_ns.end());
  if (c.loop.mode == "getpid" && !r.reference.untraced_runs.empty()) {
    std::vector<double> u = r.reference.untraced_runs;
    std::nth_element(u.begin(), u.begin() + u.size() / 2, u.end());
    seen.push_back(u[u.size() / 2]);
  }
  const auto base = r.suite.facts.find("baseline_ns_p50");
  if (c.suite.workload == "getpid" && base != r.suite.facts.end() && base->is_number())
    seen.push_back(base->get<double>());
  return seen;
}

// An untraced figure counts at the machine's fastest speed only; an
// overhead in any one state the round stayed in (machine_state.h).
bool round_steady(const Case& c, const RoundRecord& r, double fastest_probe_ns) {
  const std::vector<double> seen = speed_seen(c, r);
  return c.suite.figure == SuiteFigure::kUntraced ? steady(seen, fastest_probe_ns) : one_state(seen);
}

}  // namespace

std::vector<std::string> command_line(const Args& a) {
  std::vector<std::string> v = {"tracebench", "crosscheck"};
  for (const auto& c : a.cases) v.insert(v.end(), {"--case", c});
  v.insert(v.end(), {"--rounds", std::to_string(a.rounds), "-r", std::to_string(a.repetitions)});
  if (a.cpu >= 0) v.insert(v.end(), {"--cpu", std::to_string(a.cpu)});
  for (const auto& o : a.raw_options) v.insert(v.end(), {"-o", o});
  return v;
}

Run::Run(const Args& a, std::vector<const Case*> cases, const TracerOptions& options, const MachineLock* lock,
         const std::string& scratch)
    : args_(a) {
  env_.cpu = a.cpu >= 0 ? a.cpu : last_online_cpu();
  env_.others = cpus_besides(env_.cpu);
  env_.work = scratch + "/reference";
  env_.loop_dir = find_loop_dir();
  suite_.cpu = env_.cpu;
  suite_.repetitions = a.repetitions;
  suite_.out_base = scratch + "/suite";
  suite_.verbose = a.verbose;
  suite_.options = options;
  suite_.lock = lock;
  for (const Case* c : cases) {
    owned_.push_back(*c);
    owned_.back().suite = effective_suite(*c, suite_);
    cases_.push_back(&owned_.back());
  }
}

CaseOutcome& Run::outcome(Report* report, const Case* c) {
  for (auto& o : report->cases) {
    if (o.c == c) return o;
  }
  report->cases.push_back(CaseOutcome{});
  report->cases.back().c = c;
  return report->cases.back();
}

RoundRecord& Run::record(Report* report, const Case* c, int round) {
  CaseOutcome& o = outcome(report, c);
  while (static_cast<int>(o.rounds.size()) <= round) {
    o.rounds.push_back(RoundRecord{});
    o.rounds.back().round = static_cast<int>(o.rounds.size()) - 1;
  }
  return o.rounds[round];
}

Status Run::plan(Report* report) {
  std::error_code ec;
  std::filesystem::create_directories(env_.work, ec);
  if (ec) return Status::error("cannot create " + env_.work + ": " + ec.message());
  report->rounds = args_.rounds;
  report->command_line = command_line(args_);
  report->measured_cpu = env_.cpu;
  report->date_utc = utc_now();
  std::vector<const Case*> runnable;
  for (const Case* c : cases_) {
    CaseOutcome& o = outcome(report, c);
    o.suite = c->suite;
    tools_[c] = make_tool(c->kind);
    o.skipped = reference_missing(*c, tools_[c].get(), env_);
    if (o.skipped.empty()) {
      o.tool_version = tools_[c]                         ? tools_[c]->version()
                       : c->kind == ToolKind::kPerfBench ? version_line({"perf", "--version"})
                                                         : "";
      runnable.push_back(c);
    }
  }
  for (auto& cases : suite_groups(runnable)) {
    Group g;
    std::map<std::string, std::string> unavailable;
    TB_TRY(plan_group(cases, suite_, &g.plan, &unavailable));
    for (const Case* c : cases) {
      if (unavailable.count(c->name))
        outcome(report, c).skipped = "the suite side: " + unavailable[c->name];
      else
        g.cases.push_back(c);
    }
    if (!g.cases.empty()) groups_.push_back(std::move(g));
  }
  return Status::ok();
}

void Run::suite_turn(const Group& g, int round, Report* report) {
  std::map<std::string, SuiteRound> figures;
  RunContext ctx;
  Status s = run_group(g.cases, suite_, g.plan, &figures, &ctx);
  if (s && ctx.concurrent) report->concurrent = true;
  if (s && !have_context_) {
    report->context = ctx;
    report->have_context = have_context_ = true;
  }
  for (const Case* c : g.cases) {
    RoundRecord& r = record(report, c, round);
    if (!s)
      r.suite.error = s.message();
    else
      r.suite = figures[c->name];
  }
}

void Run::reference_case(const Case* c, int round, Report* report) {
  pin_this_thread(env_.others);  // off the loop's CPU while it runs
  RoundRecord& r = record(report, c, round);
  Status s = reference_round(*c, tools_[c].get(), env_, &r.reference);
  if (!s && !g_stop_requested) {  // once more: a tool may fail to start now and then
    std::cerr << fmt::format("crosscheck: {} round {}: {}; trying once more\n", c->name, round + 1, s.message());
    s = reference_round(*c, tools_[c].get(), env_, &r.reference);
  }
  if (!s) r.reference_error = s.message();
}

void Run::print_round(const Group& g, int round, Report* report) {
  for (const Case* c : g.cases) {
    const RoundRecord& r = record(report, c, round);
    const std::string problem = round_problem(r);
    std::cerr << fmt::format(
        "round {}/{}  {:<17} suite {:>8.1f} ns  {} {:>8.1f} ns  {}{}\n", round + 1, args_.rounds, c->name,
        r.suite.figure_ns, c->tool, r.reference.figure_ns,
        problem.empty() ? fmt::format("ratio {:.3f}", r.suite.figure_ns / r.reference.figure_ns) : problem,
        r.steady ? "" : "  (the machine's speed changed during it: left out)");
  }
}

// One attempt at a round of a group: the two sides in the round's order,
// the machine's speed probed around the suite's run and around each case's
// reference, so a case is judged by the probes of its own stretch of time.
void Run::attempt(const Group& g, int round, Report* report) {
  const bool suite_first = round % 2 == 0;
  const auto probe = [this] { return probe_speed_ns(env_.cpu, env_.others); };
  std::vector<double> suite_window, marks;  // around the suite's run; before and after each reference
  if (suite_first) {
    suite_window.push_back(probe());
    suite_turn(g, round, report);
  }
  marks.push_back(probe());
  for (const Case* c : g.cases) {
    if (g_stop_requested) break;
    reference_case(c, round, report);
    marks.push_back(probe());
  }
  if (suite_first) {
    suite_window.push_back(marks.front());
  } else if (!g_stop_requested) {
    suite_window.push_back(marks.back());
    suite_turn(g, round, report);
    suite_window.push_back(probe());
  }
  for (double p : suite_window) fastest_probe_ns_ = std::min(fastest_probe_ns_, p);
  for (double p : marks) fastest_probe_ns_ = std::min(fastest_probe_ns_, p);
  for (std::size_t i = 0; i < g.cases.size() && i + 1 < marks.size(); ++i) {
    RoundRecord& r = record(report, g.cases[i], round);
    r.suite_first = suite_first;
    r.probes_ns = suite_window;
    r.probes_ns.insert(r.probes_ns.end(), {marks[i], marks[i + 1]});
    r.steady = !r.suite.unsteady && round_steady(*g.cases[i], r, fastest_probe_ns_);
  }
}

// At the end, against the fastest probe of the whole command: a round
// judged steady before a faster probe was seen is left out too.
void Run::settle_steadiness(Report* report) const {
  report->fastest_probe_ns = fastest_probe_ns_;
  for (auto& o : report->cases) {
    for (auto& r : o.rounds) {
      if (r.steady) r.steady = round_steady(*o.c, r, fastest_probe_ns_);
    }
  }
}

// A round of a group, attempted again (up to kRoundAttempts, and not past
// --redo-budget) while the machine's speed changed during it; the dropped
// attempts are kept apart.
void Run::group_round(const Group& g, int round, Report* report) {
  for (int n = 1; n <= kRoundAttempts && !g_stop_requested; ++n) {
    attempt(g, round, report);
    for (const Case* c : g.cases) record(report, c, round).attempt = n;
    const bool all_steady =
        std::all_of(g.cases.begin(), g.cases.end(), [&](const Case* c) { return record(report, c, round).steady; });
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (all_steady || n == kRoundAttempts || elapsed > args_.redo_budget_s) return;
    for (const Case* c : g.cases) {
      RoundRecord& r = record(report, c, round);
      outcome(report, c).redone.push_back(r);
      r = RoundRecord{};
      r.round = round;
    }
  }
}

void Run::measure(Report* report) {
  const auto start = start_ = std::chrono::steady_clock::now();
  std::size_t n = 0;
  for (const auto& g : groups_) n += g.cases.size();
  std::cerr << fmt::format(
      "tracebench crosscheck: {} case(s) x {} rounds on CPU {} (suite: {} repetitions of the quick suite per round; "
      "reference: its tool around a C loop)\n",
      n, args_.rounds, env_.cpu, args_.repetitions);
  for (const auto& o : report->cases) {
    if (!o.skipped.empty()) std::cerr << fmt::format("skipped {}: {}\n", o.c->name, o.skipped);
  }
  for (int round = 0; round < args_.rounds && !g_stop_requested; ++round) {
    for (const auto& g : groups_) {
      group_round(g, round, report);
      if (g_stop_requested) break;
      print_round(g, round, report);
    }
  }
  settle_steadiness(report);
  for (auto& o : report->cases) decide_case(&o);
  report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tracebench::crosscheck
