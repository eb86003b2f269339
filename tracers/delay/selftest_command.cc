// `tracebench selftest`: does the suite recover a cost known in advance on
// this host?  The delay tracer adds a calibrated N ns to every traced event
// of a user site and of a syscall (site.h), and `run`'s own machinery (plan,
// clock check, interleaved traced/untraced blocks, floor subtraction, batch,
// TSC conversion, medians over repetitions) measures it.  The N are 20 ns,
// 200 ns and 2 us where the host can show them: the smallest is raised to
// five times the handler's own shortest call (measured here: on a host whose
// rdtsc is slow, 20 ns is less than the handler itself), and an N below that
// is left out with the reason, not failed.  Each case passes
// when the overhead it reports is within ±3% of its known cost or ±2 floors
// (the run's measured floor, in ns), whichever is larger.  The known cost is
// N, except at the syscall: there a spin that waits on the TSC can overlap
// what the syscall before it left pending, so the spin adds less than N on
// some hosts, and the known cost is what a plain loop of the site sees the
// same spin add (plain_loop.h), measured after each run on its CPU.
//
// Rounds interleave the three N (one run each, the order rotating), so a
// burst of load lands on a different N each round; a case's figure is the
// median of its rounds.  Past three rounds, one begins only if it should end
// within the time budget (--budget, 45 s), so a busy machine gets fewer.  A case outside its bound is told apart by the noise
// it saw (each run's 95% interval of the median, the spread between rounds):
// off by less than three times that beyond the bound, it cannot be judged
// (a busy machine); by more, the chain is broken.  While a case cannot be
// judged and none failed, rounds go on past those asked for (up to
// kRoundsWhileUndecided, within the budget): on a host whose syscalls vary
// by tens of ns between rounds, five rounds' medians can straddle a bound
// that more rounds' settle inside.
//
// The kernel half does the same on the companion module's tracepoint
// (workload delay_kmod: kmod_fixed in shorter samples, bench/kmod.cc),
// where the module's own probe spins N ns calibrated in the kernel
// (kernel_probe.h): in the VM lab, or on a host that loads the module.
// Where the module is missing it says why and checks the user half only.
// An N below the probe's shortest firing on that kernel (under TCG
// 20 ns can be) is left out with the figure.  The module also reports the
// time its firings spent in all and in the shortest one: what its spins ran
// long in the traced blocks beyond its calibration is cost it really added,
// and a case is judged against N to N plus that (selftest_verdict.h).
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
#include "tracebench/quiet_output.h"
#include "tracebench/results.h"
#include "tracebench/runner.h"
#include "calibration.h"
#include "kernel_probe.h"
#include "plain_loop.h"
#include "selftest_verdict.h"

namespace tracebench {
namespace {

// The costs asked for, where the host can show them: a cost is shown apart
// from the handler that adds it only when it is several times that
// handler's own shortest call (kHandlerMultiple), so the smallest case is
// raised to that on a host whose handler is slow, and a case below it is
// left out with the reason.
constexpr std::uint64_t kNs[] = {20, 200, 2000};
constexpr double kHandlerMultiple = 5;
// A site whose known cost is what a plain loop sees its spin add
// (plain_loop.h), not N: a syscall after a spin can cost less than one
// after another syscall.
struct Site {
  const char* workload;
  const char* what;
  bool kernel;
  bool plain_reference;
};
constexpr Site kSites[] = {{"delay_site", "user site", false, false},
                           {"delay_getpid", "syscall", false, true},
                           {"delay_kmod", "kernel tp", true, false}};
// Rounds run whatever the time budget.
constexpr int kMinRounds = 3;
// Other processes' CPUs above which the machine is called busy.
constexpr double kBusyCpus = 0.5;

struct SelftestArgs {
  int rounds = 5;
  double budget_s = 45;  // no round begins that would end later (beyond the first kMinRounds)
  int repetitions = 6;
  int cpu = -1;
  std::string only;  // "user" or "kernel": that half alone
  std::string keep;  // keep the runs' results here
  bool verbose = false;
  LockFlags lock;
};

// One case (site x N): what it is and what it measured over the rounds.
struct Case {
  std::string workload, what;
  std::uint64_t ns = 0;
  bool plain_reference = false;
  tbdelay::CaseFigures fig;
  std::vector<std::string> errors;
  nlohmann::json probe;          // the kernel probe's own figures (the last round's tracer details)
  std::vector<double> overruns;  // per round: mean ns per firing beyond the shortest firing's
};

// Which case runs at which N: the halves asked for and available.
struct Selection {
  bool user = true, kernel = true;
  std::vector<std::uint64_t> user_ns;    // the N the user sites' handler can show
  std::vector<std::uint64_t> kernel_ns;  // the N the module's probe can serve
  bool runs(const Site& s, std::uint64_t ns) const {
    const auto& list = s.kernel ? kernel_ns : user_ns;
    return (s.kernel ? kernel : user) && std::find(list.begin(), list.end(), ns) != list.end();
  }
};

// The N a handler whose shortest call takes `least_ns` can show: kNs, the
// smallest raised to kHandlerMultiple x least_ns (rounded up to 10 ns), those
// below that left out with the reason in `left_out`.
std::vector<std::uint64_t> shown_ns(double least_ns, const char* handler, std::vector<std::string>* left_out) {
  const double floor_ns = kHandlerMultiple * least_ns;
  const auto smallest = static_cast<std::uint64_t>(std::max<double>(kNs[0], std::ceil(floor_ns / 10) * 10));
  std::vector<std::uint64_t> shown;
  for (std::uint64_t ns : kNs) {
    const std::uint64_t n = ns == kNs[0] ? smallest : ns;
    if (static_cast<double>(n) >= floor_ns && (shown.empty() || n > shown.back())) {
      if (n != ns)
        left_out->push_back(
            fmt::format("N = {} ns raised to {} ns: {} takes {:.1f} ns itself here, and a cost "
                        "under {:.0f}x that is not shown apart from it",
                        ns, n, handler, least_ns, kHandlerMultiple));
      shown.push_back(n);
    } else {
      left_out->push_back(
          fmt::format("N = {} ns left out: {} takes {:.1f} ns itself here, and a cost under {:.0f}x "
                      "that is not shown apart from it",
                      ns, handler, least_ns, kHandlerMultiple));
    }
  }
  return shown;
}

// What the runs measured of the machine.
struct RunFacts {
  std::vector<double> floor_ns;
  double busy_cpus = 0;  // the most any run saw other processes keep busy
  int cpus = 0;
  double tsc_ghz = 0;
  bool emulated = false;
  std::vector<double> gaps_per_second, gap_ns, sample_cap_us;  // per run (cpu_gaps.h)
  std::string simulated_host;
};

double detail(const nlohmann::json& d, const char* key) {
  const auto it = d.find(key);
  return it != d.end() && it->is_number() ? it->get<double>() : NAN;
}

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

// One run of `run`'s machinery: the sites of one half at one N.
Status run_one(const SelftestArgs& a, const Selection& sel, bool kernel, const MachineLock& lock,
               const std::string& out, std::uint64_t ns, RunResult* run) {
  RunOptions opt;
  opt.tracers = {"delay"};
  for (const auto& s : kSites)
    if (s.kernel == kernel && sel.runs(s, ns)) opt.workloads.push_back(s.workload);
  if (opt.workloads.empty()) return Status::ok();
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
  if (plan.specs.size() != opt.workloads.size())
    return Status::error(
        fmt::format("the plan holds {} benchmarks, not the {} delay sites", plan.specs.size(), opt.workloads.size()));
  std::string dir;
  QuietOutput quiet(!a.verbose);
  return run_benchmarks(opt, plan, run, &dir);
}

void take(const RunResult& run, std::uint64_t ns, std::vector<Case>* cases, RunFacts* facts) {
  const RunContext& ctx = run.context;
  facts->floor_ns.push_back(ctx.floor_cycles / ctx.tsc_hz * 1e9);
  facts->busy_cpus = std::max(facts->busy_cpus, ctx.foreign_cpu_load);
  facts->cpus = ctx.cpus;
  facts->tsc_ghz = ctx.tsc_hz * 1e-9;
  facts->emulated = facts->emulated || ctx.emulated;
  facts->simulated_host = ctx.simulated_host;
  if (ctx.cpu_gaps) {
    facts->gaps_per_second.push_back(ctx.cpu_gaps->per_second);
    facts->gap_ns.push_back(ctx.cpu_gaps->median_ns);
    facts->sample_cap_us.push_back(ctx.sample_cap_cycles / ctx.tsc_hz * 1e6);
  }
  for (auto& c : *cases) {
    if (c.ns != ns) continue;
    auto b = std::find_if(run.benchmarks.begin(), run.benchmarks.end(),
                          [&](const BenchmarkResult& r) { return r.workload == c.workload; });
    if (b == run.benchmarks.end()) {
      c.errors.push_back("the run has no result for it");
    } else if (b->status == "unsteady") {
      c.fig.unsteady.push_back(b->error);
    } else if (b->status != "ok" || !b->overhead_ns) {
      c.errors.push_back(b->error.empty() ? "no overhead figure" : b->error);
    } else {
      c.fig.medians.push_back(b->overhead_ns->median);
      c.fig.halfwidths.push_back(0.5 * (b->overhead_ns->high - b->overhead_ns->low));
      c.fig.floor_per_event_ns =
          ctx.floor_cycles / ctx.tsc_hz * 1e9 / static_cast<double>(std::max<std::uint64_t>(1, b->batch));
      if (c.fig.kernel) {
        c.probe = b->tracer_details;
        c.fig.uncertainties.push_back(tbdelay::calibration_uncertainty(c.probe, c.fig.ns));
        c.fig.excesses.push_back(tbdelay::spin_excess(c.probe));
        c.fig.clock_ratio = detail(c.probe, "enabled_clock_ratio");
        const double spent = detail(c.probe, "spent_ns_per_firing"), least = detail(c.probe, "min_spent_ns");
        if (!std::isnan(spent) && !std::isnan(least)) c.overruns.push_back(std::max(0.0, spent - least));
      }
    }
  }
}

// The plain loop's figure for the cases of `ns` that are judged by it, at
// the spin the run's tracer chose, on the run's CPU.
Status take_plain(const RunResult& run, std::uint64_t ns, std::vector<Case>* cases) {
  for (auto& c : *cases) {
    if (c.ns != ns || !c.plain_reference) continue;
    auto b = std::find_if(run.benchmarks.begin(), run.benchmarks.end(),
                          [&](const BenchmarkResult& r) { return r.workload == c.workload; });
    if (b == run.benchmarks.end()) continue;
    const double spin = detail(b->tracer_details, "spin_cycles"), hz = detail(b->tracer_details, "tsc_hz");
    if (std::isnan(spin) || std::isnan(hz)) continue;
    tbdelay::PlainFigure f;
    TB_TRY(tbdelay::plain_added_ns(c.workload.c_str(), static_cast<std::uint64_t>(spin), hz, run.context.measured_cpu,
                                   &f));
    c.fig.references.push_back(f.added_ns);
    c.fig.reference_halfwidths.push_back(f.halfwidth_ns);
  }
  return Status::ok();
}

// A kernel case's line under its verdict: what the module measured of its
// own probe, by its own clock.
void print_probe(const Case& c, const tbdelay::Judgement& j) {
  const auto num = [&](const char* k) { return detail(c.probe, k); };
  std::cout << fmt::format(
      "          the module: a firing {:.1f} ns at calibration (IQR {:.1f}; the shortest {:.1f}); its spin {:.1f} ns, "
      "the shortest firing spun {:.1f}, the mean overran that by {:.1f}, {:.1f} more than at calibration (median "
      "of the rounds): it added N to N + {:.1f} ns; its clock {:.4f} GHz against ktime (the kernel's tsc_khz says "
      "{:.4f}), {:.4f}x that over the traced blocks\n",
      num("firing_ns"), num("firing_iqr_ns"), num("least_firing_ns"), num("spin_ns"), num("min_spent_ns"),
      c.overruns.empty() ? NAN : tbdelay::median(c.overruns), j.excess, j.excess, num("clock_hz") * 1e-9,
      num("kernel_tsc_khz") * 1e-6, c.fig.clock_ratio);
}

// A syscall case's line under its verdict: the known cost the plain loop
// saw, and how far it is from N when farther than the bound.
void print_plain(const Case& c, const tbdelay::Judgement& j) {
  const double off = j.known - static_cast<double>(c.ns);
  std::cout << fmt::format(
      "          known cost {:.1f} ns: what a plain loop of the site sees the spin add (median of {} rounds){}\n",
      j.known, c.fig.references.size(),
      std::fabs(off) <= j.bound ? std::string()
                                : fmt::format(", not N: here a syscall after the spin costs {:.1f} ns {} than one "
                                              "after a syscall",
                                              std::fabs(off), off < 0 ? "less" : "more"));
}

// Each case's verdict on the rounds so far, unprinted (a case with an error
// has failed).
std::vector<tbdelay::Verdict> verdicts_so_far(const std::vector<Case>& cases, const RunFacts& facts) {
  const double floor_ns = tbdelay::median(facts.floor_ns);
  std::vector<tbdelay::Verdict> verdicts;
  for (const auto& c : cases)
    verdicts.push_back(c.errors.empty() ? tbdelay::judge_case(c.fig, floor_ns).verdict : tbdelay::Verdict::kFail);
  return verdicts;
}

// The verdict of one case (selftest_verdict.h), printed with its figures.
tbdelay::Verdict judge(const Case& c, double floor_ns) {
  using tbdelay::Verdict;
  const std::string name = fmt::format("{:<9} N = {:>4} ns", c.what, c.ns);
  if (!c.errors.empty()) {
    std::cout << fmt::format("{}  error: {}\n", name, c.errors.front());
    return Verdict::kFail;
  }
  const tbdelay::Judgement j = tbdelay::judge_case(c.fig, floor_ns);
  if (c.fig.medians.empty()) {
    std::cout << fmt::format("{}  {}\n", name,
                             j.verdict == Verdict::kCannotJudge
                                 ? "CANNOT JUDGE: the host changed speed in every round: " + c.fig.unsteady.front()
                                 : std::string("error: nothing measured"));
    return j.verdict;
  }
  std::cout << fmt::format("{}  recovered {:8.1f} ns  error {:+7.1f}  bound ±{:5.1f}  noise ±{:5.1f}  {}\n", name,
                           j.recovered, j.error, j.bound, j.noise,
                           j.clock_moved                 ? "CANNOT JUDGE: the module's clock left its calibrated rate"
                           : j.verdict == Verdict::kPass ? "pass"
                           : j.verdict == Verdict::kCannotJudge ? "CANNOT JUDGE: outside the bound, within 3x the noise"
                                                                : "FAIL: the chain does not recover the known cost");
  if (!c.fig.references.empty()) print_plain(c, j);
  if (!c.fig.unsteady.empty())
    std::cout << fmt::format("          {} of {} rounds left out: the host changed speed during the run ({})\n",
                             c.fig.unsteady.size(), c.fig.unsteady.size() + c.fig.medians.size(),
                             c.fig.unsteady.front());
  if (c.fig.kernel) print_probe(c, j);
  return j.verdict;
}

// Which N the module's probe can serve here: each is calibrated once (the
// module refuses an N below its shortest firing); the others are left out,
// with the reason printed.  Empty, with the reason, when the module is
// missing.
std::vector<std::uint64_t> kernel_ns_served(std::vector<std::string>* left_out) {
  std::vector<std::uint64_t> served;
  tbdelay::KernelProbe probe;
  if (Status s = probe.open(); !s) {
    left_out->push_back(s.message());
    return served;
  }
  // The probe's shortest firing, from a calibration every kernel serves.
  tbdelay::KernelCalibration largest;
  if (Status s = probe.calibrate(static_cast<std::uint32_t>(kNs[std::size(kNs) - 1]), &largest); !s) {
    left_out->push_back(s.message());
    return served;
  }
  for (std::uint64_t ns : shown_ns(largest.least_ns(), "the module's probe", left_out)) {
    tbdelay::KernelCalibration cal;
    if (Status s = probe.calibrate(static_cast<std::uint32_t>(ns), &cal); s)
      served.push_back(ns);
    else
      left_out->push_back(fmt::format("N = {} ns left out: {}", ns, s.message()));
  }
  return served;
}

// Which halves run, and at which N: each half's N are those its handler can
// show here (the others are said with their reason); false when nothing can
// be checked.
bool select_halves(const SelftestArgs& a, Selection* sel) {
  sel->user = a.only != "kernel";
  sel->kernel = a.only != "user";
  if (sel->user) {
    std::vector<std::string> notes;
    sel->user_ns = shown_ns(tbdelay::least_handler_ns(), "the user sites' handler", &notes);
    for (const auto& why : notes) std::cout << "user half: " << why << "\n";
    sel->user = !sel->user_ns.empty();
  }
  if (sel->kernel) {
    std::vector<std::string> left_out;
    sel->kernel_ns = kernel_ns_served(&left_out);
    if (sel->kernel_ns.empty()) {
      std::cout << "kernel half (the module's probe on tracebench:tracebench_fixed): not available here: "
                << left_out.front() << "\n";
      if (!sel->user) return false;
      std::cout << "checking the user half only\n";
      sel->kernel = false;
    } else {
      for (const auto& why : left_out) std::cout << "kernel half: " << why << "\n";
    }
  }
  return sel->user || sel->kernel;
}

// The command (~105 lines): lock, the known costs to recover, a run per
// cost, the table, the verdict, in the order they are printed.
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
  Selection sel;
  if (!select_halves(a, &sel)) return 1;
  std::vector<Case> cases;
  for (const auto& s : kSites)
    for (std::uint64_t ns : s.kernel ? sel.kernel_ns : sel.user_ns)
      if (sel.runs(s, ns)) {
        Case c{s.workload, s.what, ns, s.plain_reference, {}, {}, {}, {}};
        c.fig.ns = static_cast<double>(ns);
        c.fig.kernel = s.kernel;
        cases.push_back(std::move(c));
      }
  // The N some case runs at, each once.
  std::vector<std::uint64_t> ns_run;
  for (const auto& c : cases)
    if (std::find(ns_run.begin(), ns_run.end(), c.ns) == ns_run.end()) ns_run.push_back(c.ns);
  std::sort(ns_run.begin(), ns_run.end());
  RunFacts facts;
  std::cout << fmt::format(
      "tracebench selftest: the delay tracer adds a calibrated N ns to traced events only; `run`'s machinery must "
      "recover N (up to {} rounds x {} runs of {} repetitions, {:.0f} s; up to {} rounds while a case cannot be "
      "judged)\n",
      a.rounds, ns_run.size(), a.repetitions, a.budget_s, std::max(a.rounds, tbdelay::kRoundsWhileUndecided));
  std::cout.flush();
  int rounds = 0;
  while (!g_stop_requested && tbdelay::another_round(rounds, a.rounds, verdicts_so_far(cases, facts))) {
    // A busy machine slows every run: past the first rounds, the next one is
    // started only if it should end within the time budget.
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rounds >= kMinRounds && elapsed + elapsed / rounds > a.budget_s) break;
    for (std::size_t i = 0; i < ns_run.size() && !g_stop_requested; ++i) {
      const std::uint64_t ns = ns_run[(i + static_cast<std::size_t>(rounds)) % ns_run.size()];
      for (bool kernel : {false, true}) {
        RunResult run;
        if (Status s = run_one(a, sel, kernel, lock, runs.path(), ns, &run); !s) {
          std::cerr << "tracebench selftest: the run at N = " << ns << " ns failed: " << s.message() << "\n";
          return 1;
        }
        if (run.benchmarks.empty()) continue;
        take(run, ns, &cases, &facts);
        if (Status s = take_plain(run, ns, &cases); !s) {
          std::cerr << "tracebench selftest: the plain loop at N = " << ns << " ns failed: " << s.message() << "\n";
          return 1;
        }
      }
    }
    ++rounds;
  }
  if (g_stop_requested) {
    std::cerr << "tracebench selftest: interrupted\n";
    return 130;
  }
  const double floor_ns = tbdelay::median(facts.floor_ns);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format(
      "floor {:.1f} ns (bound: ±3% of N or ±2 floors = ±{:.1f} ns, whichever is larger); TSC {:.3f} GHz; "
      "other processes kept up to {:.2f} of {} CPUs busy; {} rounds in {:.0f} s{}\n",
      floor_ns, 2 * floor_ns, facts.tsc_ghz, facts.busy_cpus, facts.cpus, rounds, took,
      rounds > a.rounds
          ? fmt::format(" ({} more than asked: a case could not be judged after {})", rounds - a.rounds, a.rounds)
          : std::string());
  if (!facts.gaps_per_second.empty())
    std::cout << fmt::format(
        "the host took the measured CPU away {:.0f} times a second for ~{:.1f} us (median of the runs){}{}\n",
        tbdelay::median(facts.gaps_per_second), tbdelay::median(facts.gap_ns) * 1e-3,
        tbdelay::median(facts.sample_cap_us) > 0
            ? fmt::format(": a traced sample spans at most {:.0f} us, so most samples miss it",
                          tbdelay::median(facts.sample_cap_us))
            : std::string(),
        facts.simulated_host.empty() ? "" : fmt::format(" (a SIMULATED host: {})", facts.simulated_host));
  if (sel.kernel)
    std::cout << fmt::format(
        "kernel tp: the module's own probe on tracebench:tracebench_fixed, fired by its in-kernel loop{}; bound: ±3% "
        "of N or ±2 floors per event (the floor over a sample's events), whichever is larger, plus the module's "
        "calibration uncertainty (|firing - N| + IQR/2), from the cost it added: N to N + what its spins ran long "
        "beyond its calibration\n",
        facts.emulated ? " (emulated)" : "");
  int failed = 0, noisy = 0;
  for (const auto& c : cases) {
    const tbdelay::Verdict v = judge(c, floor_ns);
    failed += v == tbdelay::Verdict::kFail;
    noisy += v == tbdelay::Verdict::kCannotJudge;
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
                               "200 ns and 2 us on a user site, a syscall and, where the module is, its tracepoint)");
  auto a = std::make_shared<SelftestArgs>();
  s->add_option("--rounds", a->rounds,
                fmt::format("Runs per N, interleaved with the other N's (more, up to {} in all, while a case "
                            "cannot be judged yet and the budget allows)",
                            tbdelay::kRoundsWhileUndecided))
      ->check(CLI::Range(1, 20));
  s->add_option("--budget", a->budget_s, "Seconds after which no further round begins (after the first 3)")
      ->check(CLI::Range(1.0, 3600.0));
  s->add_option("--repetitions,-r", a->repetitions, "Repetitions per run (pairs of blocks)")->check(CLI::Range(2, 100));
  s->add_option("--cpu", a->cpu, "Measured CPU (default: the last)")->check(CLI::NonNegativeNumber);
  s->add_option("--only", a->only,
                "Check one half: user (a user site and a syscall) or kernel (the module's "
                "tracepoint; needs the module: `tracebench vm -- selftest --only kernel`)")
      ->check(CLI::IsMember({"user", "kernel"}));
  s->add_option("--keep", a->keep, "Keep the runs' results in this directory");
  s->add_flag("--verbose,-v", a->verbose, "Show the runs' own output");
  add_lock_flags(s, &a->lock);
  s->callback([a, exit_status] { *exit_status = selftest(*a); });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(selftest, tracebench::Command{"selftest", tracebench::install});
