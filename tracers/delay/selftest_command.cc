// `tracebench selftest`: does the suite recover a cost known in advance on
// this host?  The delay tracer adds a calibrated N ns to every traced event
// of a user site and of a syscall (site.h), and `run`'s own machinery (plan,
// clock check, interleaved traced/untraced blocks, floor subtraction, batch,
// TSC conversion, medians over repetitions) measures it.  Each case passes
// when the overhead it reports is within ±3% of N or ±2 floors (the run's
// measured floor, in ns), whichever is larger.
//
// Rounds interleave the three N (one run each, the order rotating), so a
// burst of load lands on a different N each round; a case's figure is the
// median of its rounds.  Past three rounds, one begins only if it should end
// within the time budget (--budget, 45 s), so a busy machine gets fewer.  A case outside its bound is told apart by the noise
// it saw (each run's 95% interval of the median, the spread between rounds):
// off by less than three times that beyond the bound, it cannot be judged
// (a busy machine); by more, the chain is broken.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tracebench/command.h"
#include "tracebench/lock_flags.h"
#include "tracebench/machine_lock.h"
#include "tracebench/results.h"
#include "tracebench/runner.h"

namespace tracebench {
namespace {

constexpr std::uint64_t kNs[] = {20, 200, 2000};
struct Site {
  const char* workload;
  const char* what;
};
constexpr Site kSites[] = {{"delay_site", "user site"}, {"delay_getpid", "syscall"}};
// Rounds run whatever the time budget.
constexpr int kMinRounds = 3;
// Other processes' CPUs above which the machine is called busy.
constexpr double kBusyCpus = 0.5;

struct SelftestArgs {
  int rounds = 5;
  double budget_s = 45;  // no round begins that would end later (beyond the first kMinRounds)
  int repetitions = 6;
  int cpu = -1;
  std::string keep;  // keep the runs' results here
  bool verbose = false;
  LockFlags lock;
};

// What one case (site x N) measured over the rounds.
struct Case {
  std::string workload, what;
  std::uint64_t ns = 0;
  std::vector<double> medians;     // recovered overhead per round, ns per event
  std::vector<double> halfwidths;  // each round's 95% interval of the median, half its width
  std::vector<std::string> errors;
};

// What the runs measured of the machine.
struct RunFacts {
  std::vector<double> floor_ns;
  double busy_cpus = 0;  // the most any run saw other processes keep busy
  int cpus = 0;
  double tsc_ghz = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Sends stdout and stderr to /dev/null while the runs print their progress
// and Google Benchmark's table (unless --verbose).
class Quiet {
 public:
  explicit Quiet(bool on) {
    if (!on) return;
    std::cout.flush();
    std::fflush(nullptr);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0) return;
    saved_out_ = dup(STDOUT_FILENO);
    saved_err_ = dup(STDERR_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    close(null);
  }
  ~Quiet() {
    std::cout.flush();
    std::fflush(nullptr);
    if (saved_out_ >= 0) dup2(saved_out_, STDOUT_FILENO), close(saved_out_);
    if (saved_err_ >= 0) dup2(saved_err_, STDERR_FILENO), close(saved_err_);
  }
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;

 private:
  int saved_out_ = -1, saved_err_ = -1;
};

// Removes the runs' directory on every way out, unless it is to be kept.
class RunsDir {
 public:
  explicit RunsDir(const std::string& keep) : keep_(!keep.empty()) {
    if (keep_) {
      path_ = keep;
      return;
    }
    char tmpl[] = "/tmp/tracebench-selftest-XXXXXX";
    if (mkdtemp(tmpl)) path_ = tmpl;
  }
  ~RunsDir() {
    std::error_code ec;
    if (!keep_ && !path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  bool keep_;
  std::string path_;
};

// One run of `run`'s machinery: both sites at one N.
Status run_one(const SelftestArgs& a, const MachineLock& lock, const std::string& out, std::uint64_t ns,
               RunResult* run) {
  RunOptions opt;
  opt.tracers = {"delay"};
  for (const auto& s : kSites) opt.workloads.push_back(s.workload);
  opt.actions = {"spin"};
  opt.options["delay"]["ns"] = std::to_string(ns);
  opt.repetitions = a.repetitions;
  opt.samples = 1000;
  opt.quick = true;
  opt.measured_cpu = a.cpu;
  opt.out_base = out;
  opt.write_samples = false;
  opt.machine_lock = &lock;
  opt.command_line = {"tracebench", "selftest", fmt::format("(delay.ns={})", ns)};
  Plan plan;
  TB_TRY(make_plan(opt, &plan));
  for (const auto& [what, why] : plan.skipped) return Status::error(fmt::format("{} is unavailable: {}", what, why));
  if (plan.specs.size() != std::size(kSites))
    return Status::error(fmt::format("the plan holds {} benchmarks, not the {} delay sites", plan.specs.size(),
                                     std::size(kSites)));
  std::string dir;
  Quiet quiet(!a.verbose);
  return run_benchmarks(opt, plan, run, &dir);
}

void take(const RunResult& run, std::uint64_t ns, std::vector<Case>* cases, RunFacts* facts) {
  const RunContext& ctx = run.context;
  facts->floor_ns.push_back(ctx.floor_cycles / ctx.tsc_hz * 1e9);
  facts->busy_cpus = std::max(facts->busy_cpus, ctx.foreign_cpu_load);
  facts->cpus = ctx.cpus;
  facts->tsc_ghz = ctx.tsc_hz * 1e-9;
  for (auto& c : *cases) {
    if (c.ns != ns) continue;
    auto b = std::find_if(run.benchmarks.begin(), run.benchmarks.end(),
                          [&](const BenchmarkResult& r) { return r.workload == c.workload; });
    if (b == run.benchmarks.end()) {
      c.errors.push_back("the run has no result for it");
    } else if (b->status != "ok" || !b->overhead_ns) {
      c.errors.push_back(b->error.empty() ? "no overhead figure" : b->error);
    } else {
      c.medians.push_back(b->overhead_ns->median);
      c.halfwidths.push_back(0.5 * (b->overhead_ns->high - b->overhead_ns->low));
    }
  }
}

// The verdict of one case: "pass", "noisy" (outside the bound, but no more
// than the noise explains) or "FAIL"; prints its line.
std::string judge(const Case& c, double floor_ns) {
  const std::string name = fmt::format("{:<9} N = {:>4} ns", c.what, c.ns);
  if (!c.errors.empty() || c.medians.empty()) {
    std::cout << fmt::format("{}  error: {}\n", name, c.errors.empty() ? "nothing measured" : c.errors.front());
    return "FAIL";
  }
  const double n = static_cast<double>(c.ns);
  const double got = median(c.medians);
  const double bound = std::max(0.03 * n, 2.0 * floor_ns);
  const auto [lo, hi] = std::minmax_element(c.medians.begin(), c.medians.end());
  const double noise = std::max(median(c.halfwidths), 0.5 * (*hi - *lo));
  std::string verdict = "pass";
  // Off by more than three times the noise beyond the bound: no load explains that.
  if (std::fabs(got - n) > bound) verdict = std::fabs(got - n) - bound > 3.0 * noise ? "FAIL" : "noisy";
  std::cout << fmt::format("{}  recovered {:8.1f} ns  error {:+7.1f}  bound ±{:5.1f}  noise ±{:5.1f}  {}\n", name, got,
                           got - n, bound, noise,
                           verdict == "pass"    ? "pass"
                           : verdict == "noisy" ? "CANNOT JUDGE: outside the bound, within 3x the noise"
                                                : "FAIL: the chain does not recover the known cost");
  return verdict;
}

int selftest(const SelftestArgs& a) {
  LockRequest req;
  if (Status s = a.lock.request(&req); !s) {
    std::cerr << "tracebench selftest: " << s.message() << "\n";
    return 2;
  }
  install_signal_watcher();
  // One measuring command per machine (tracebench/machine_lock.h), held over
  // every round.
  MachineLock lock;
  if (Status s = lock.acquire(req, "tracebench selftest", &g_stop_requested); !s) {
    std::cerr << s.message() << "\n";
    return g_stop_requested ? 130 : 2;
  }
  const auto start = std::chrono::steady_clock::now();
  RunsDir runs(a.keep);
  if (runs.path().empty()) {
    std::cerr << "tracebench selftest: cannot create a directory under /tmp for the runs\n";
    return 1;
  }
  std::vector<Case> cases;
  for (const auto& s : kSites)
    for (std::uint64_t ns : kNs) cases.push_back(Case{s.workload, s.what, ns, {}, {}, {}});
  RunFacts facts;
  std::cout << fmt::format(
      "tracebench selftest: the delay tracer adds a calibrated N ns to traced events only; `run`'s machinery must "
      "recover N (up to {} rounds x {} runs of {} repetitions, {:.0f} s)\n",
      a.rounds, std::size(kNs), a.repetitions, a.budget_s);
  std::cout.flush();
  int rounds = 0;
  for (int round = 0; round < a.rounds && !g_stop_requested; ++round) {
    // A busy machine slows every run: past the first rounds, the next one is
    // started only if it should end within the time budget.
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (round >= kMinRounds && elapsed + elapsed / round > a.budget_s) break;
    for (std::size_t i = 0; i < std::size(kNs) && !g_stop_requested; ++i) {
      const std::uint64_t ns = kNs[(i + static_cast<std::size_t>(round)) % std::size(kNs)];
      RunResult run;
      if (Status s = run_one(a, lock, runs.path(), ns, &run); !s) {
        std::cerr << "tracebench selftest: the run at N = " << ns << " ns failed: " << s.message() << "\n";
        return 1;
      }
      take(run, ns, &cases, &facts);
    }
    ++rounds;
  }
  if (g_stop_requested) {
    std::cerr << "tracebench selftest: interrupted\n";
    return 130;
  }
  const double floor_ns = median(facts.floor_ns);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format(
      "floor {:.1f} ns (bound: ±3% of N or ±2 floors = ±{:.1f} ns, whichever is larger); TSC {:.3f} GHz; "
      "other processes kept up to {:.2f} of {} CPUs busy; {} rounds in {:.0f} s\n",
      floor_ns, 2 * floor_ns, facts.tsc_ghz, facts.busy_cpus, facts.cpus, rounds, took);
  int failed = 0, noisy = 0;
  for (const auto& c : cases) {
    const std::string v = judge(c, floor_ns);
    failed += v == "FAIL";
    noisy += v == "noisy";
  }
  if (failed == 0 && noisy == 0) {
    std::cout << "selftest: passed: every known cost recovered within its bound\n";
    return 0;
  }
  if (failed > 0)
    std::cout << fmt::format("selftest: FAILED: {} case(s) off by more than the bound and the noise\n", failed);
  if (noisy > 0)
    std::cout << fmt::format(
        "selftest: {} case(s) cannot be judged: outside the bound by less than three times the noise they saw{}; "
        "rerun on a quieter machine\n",
        noisy,
        facts.busy_cpus > kBusyCpus ? fmt::format(" (other processes kept {:.2f} CPUs busy)", facts.busy_cpus) : "");
  if (a.keep.empty()) std::cout << "(--keep DIR keeps the runs' result files)\n";
  return 1;
}

void install(CLI::App& app, int* exit_status) {
  auto* s = app.add_subcommand("selftest",
                               "Check that the suite recovers a known cost on this host (the delay tracer: 20 ns, "
                               "200 ns and 2 us on a user site and a syscall)");
  auto a = std::make_shared<SelftestArgs>();
  s->add_option("--rounds", a->rounds, "Runs per N, interleaved with the other N's")->check(CLI::Range(1, 20));
  s->add_option("--budget", a->budget_s, "Seconds after which no further round begins (after the first 3)")
      ->check(CLI::Range(1.0, 3600.0));
  s->add_option("--repetitions,-r", a->repetitions, "Repetitions per run (pairs of blocks)")->check(CLI::Range(2, 100));
  s->add_option("--cpu", a->cpu, "Measured CPU (default: the last)")->check(CLI::NonNegativeNumber);
  s->add_option("--keep", a->keep, "Keep the runs' results in this directory");
  s->add_flag("--verbose,-v", a->verbose, "Show the runs' own output");
  add_lock_flags(s, &a->lock);
  s->callback([a, exit_status] { *exit_status = selftest(*a); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(selftest, tracebench::Command{"selftest", tracebench::install});
