// The `tracebench` command line: run and cleanup, the built-in commands of
// builtin_commands.h (list, env, compare) in their fixed order, every
// subcommand registered with TRACEBENCH_REGISTER_COMMAND, and what every
// command shares (the leftovers warning, standard output checked at exit).
#include "tracebench/cli.h"
#include "tracebench/cli_range.h"

#include "builtin_commands.h"
#include "tracebench/options.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <new>
#include <stdexcept>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tracebench/workload.h"
#include "tracebench/command.h"
#include "tracebench/util.h"
#include "tracebench/gbench.h"
#include "tracebench/lock_flags.h"
#include "tracebench/machine_lock.h"
#include "tracebench/report.h"
#include "tracebench/reporter.h"
#include "tracebench/run_request.h"
#include "tracebench/runner.h"
#include "tracebench/system.h"
#include "tracebench/tracer.h"
#include "tracebench/verification.h"
#include "tracebench/version.h"

namespace tracebench {
namespace {

using builtin::CompareArgs;
using builtin::ListArgs;

// Removes only while it holds the machine lock: a run that holds it, or one
// beside it, is alive in some pid namespace, and its objects are not
// leftovers however their pids look from here.
int cmd_cleanup() {
  MachineLock lock;
  if (Status s = lock.acquire_for_cleanup(); !s) {
    std::cerr << "tracebench cleanup: " << s.message() << "\n";
    return 1;
  }
  // Objects are named by their owner's pid in the owner's pid namespace;
  // only from the machine's first namespace (PROC_PID_INIT_INO) is every
  // process visible, so that a pid not found here is a dead owner (a test
  // or a tool that takes no lock may still own one).
  const LockHolder me = this_process();
  if (me.pid_ns != "pid:[4026531836]") {
    std::cerr << fmt::format(
        "tracebench cleanup: this process runs in pid namespace {}, not the machine's initial "
        "one: the pids in the objects' names may be of processes it cannot see, so nothing "
        "is removed; run `tracebench cleanup` from the initial pid namespace\n",
        me.pid_ns.empty() ? std::string("unknown") : me.pid_ns);
    return 1;
  }
  std::size_t n = 0;
  for (const auto& [name, fn] : cleanup_registry()) {
    for (const auto& what : fn(true)) {
      std::cout << fmt::format("{}: removed {}\n", name, what);
      ++n;
    }
  }
  std::cout << fmt::format("cleanup: removed {} object(s) left by earlier runs\n", n);
  return 0;
}

// Every command but `cleanup` first says what dead tracebench processes left
// in the kernel or on disk (and removes nothing).
void warn_leftovers() {
  std::vector<std::string> found;
  for (const auto& [name, fn] : cleanup_registry()) {
    for (const auto& what : fn(false)) found.push_back(fmt::format("{}: {}", name, what));
  }
  if (found.empty()) return;
  std::cerr << fmt::format(
      "tracebench: warning: {} object(s) left by tracebench processes that are gone "
      "(`tracebench cleanup` removes them):\n",
      found.size());
  for (const auto& f : found) std::cerr << "  " << f << "\n";
}

struct RunArgs {
  RunOptions opt;
  std::vector<std::string> raw_options;
  // Numbers as the user typed them (signed, so "-5" is refused, never
  // wrapped into a huge unsigned value), checked by check_run_args().
  std::vector<long long> payloads, threads;
  long long repetitions = 0, samples = 0, batch = 0, cpu = 0, gap_us = 0;
  double max_lost_percent = 100 * kDefaultMaxLostShare;
  // `--check-for-guest CPUS` (hidden; `tracebench vm` runs it before it
  // boots): check the arguments for a guest with CPUS CPUs, run nothing.
  long long guest_cpus = 0;
  double ci_target = 0.02;
  CLI::Option* o_ci_target = nullptr;
  double warmup_seconds = 0;
  CLI::Option* o_warmup = nullptr;
  CLI::Option *o_repetitions = nullptr, *o_samples = nullptr, *o_batch = nullptr, *o_cpu = nullptr, *o_out = nullptr,
              *o_gap = nullptr;
  bool plan_only = false;
  bool verbose = false;
  LockFlags lock;
};

template <typename T>
Status no_duplicates(const char* flag, const std::vector<T>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (std::size_t k = i + 1; k < v.size(); ++k) {
      if (v[i] == v[k]) return Status::error(fmt::format("{} {} is given twice", flag, v[i]));
    }
  }
  return Status::ok();
}

// Whether `out` can hold result directories, without creating anything.
Status check_out_dir(const std::string& out) {
  namespace fs = std::filesystem;
  if (out.empty()) return Status::error("--out is empty: give a directory for the results");
  std::error_code ec;
  fs::path p = fs::absolute(out, ec);
  if (ec) return Status::error(fmt::format("--out {}: {}", out, ec.message()));
  fs::path probe = p;
  while (!fs::exists(probe, ec)) {
    // Missing is fine (it is created); a name too long or a symlink loop is not.
    if (ec) return Status::error(fmt::format("--out {}: {}: {}", out, probe.string(), ec.message()));
    if (!probe.has_parent_path() || probe.parent_path() == probe)
      return Status::error(fmt::format("--out {}: no existing parent directory", out));
    probe = probe.parent_path();
  }
  if (!fs::is_directory(probe, ec))
    return Status::error(fmt::format("--out {}: {} is not a directory", out, probe.string()));
  // Write-test where the results will go, and leave nothing behind.
  std::string tmpl = (probe / ".tracebench-write-test-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  if (!made)
    return Status::error(
        fmt::format("--out {}: cannot create anything in {}: {}", out, probe.string(), std::strerror(errno)));
  rmdir(made);
  return Status::ok();
}

Status in_range(const char* flag, long long v, long long lo, long long hi, const char* why) {
  return v < lo || v > hi ? Status::error(fmt::format("{} {} is outside {}..{} ({})", flag, v, lo, hi, why))
                          : Status::ok();
}

// How long each benchmark runs: the quick suite's sizes, then the
// repetitions, their interval target and the warm-up as given.
Status check_duration_args(RunArgs& a) {
  RunOptions& opt = a.opt;
  if (opt.quick) {
    opt.repetitions = 6;
    opt.samples = 1000;
    opt.block_seconds = 0.01;
    opt.warmup_seconds = 0.5;
  }
  const auto range = in_range;
  if (a.o_repetitions && a.o_repetitions->count()) {
    TB_TRY(range("--repetitions", a.repetitions, 2, 100000, "baseline and traced alternate, so at least 2"));
    opt.repetitions = static_cast<int>(a.repetitions);
  }
  if (a.o_ci_target && a.o_ci_target->count()) {
    if (!(a.ci_target >= 0 && a.ci_target <= 1))
      return Status::error(
          fmt::format("--ci-target {} is outside 0..1 (a share of the figure; 0: every repetition "
                      "runs)",
                      a.ci_target));
  }
  opt.ci_target = a.ci_target;
  if (a.o_warmup && a.o_warmup->count()) {
    if (!(a.warmup_seconds >= 0 && a.warmup_seconds <= 600))
      return Status::error(fmt::format(
          "--warmup {} is outside 0..600 (seconds of traced blocks at most before the repetitions; 0: none)",
          a.warmup_seconds));
    opt.warmup_seconds = a.warmup_seconds;
  }
  return Status::ok();
}

// Every number and flag of `run`, checked before anything is probed,
// attached or written.  Nothing out of range is replaced by a default.
Status check_run_args(RunArgs& a) {
  RunOptions& opt = a.opt;
  TB_TRY(check_duration_args(a));
  const auto range = in_range;
  if (a.o_samples && a.o_samples->count()) {
    TB_TRY(range("--samples", a.samples, 10, 10000000, "samples per block"));
    opt.samples = static_cast<std::uint64_t>(a.samples);
  }
  if (a.o_batch && a.o_batch->count()) {
    TB_TRY(range("--batch", a.batch, 1, 10000000, "events per timed sample; leave it out for automatic"));
    opt.batch = static_cast<std::uint64_t>(a.batch);
  }
  const int cpus = a.guest_cpus > 0 ? static_cast<int>(a.guest_cpus) : static_cast<int>(online_cpus().size());
  if (a.o_cpu && a.o_cpu->count()) {
    TB_TRY(range("--cpu", a.cpu, 0, cpus - 1, "online CPUs"));
    opt.measured_cpu = static_cast<int>(a.cpu);
  }
  if (!a.guest_cpus) TB_TRY(check_out_dir(opt.out_base));  // a guest's lands in its /results
  opt.payloads.clear();
  for (long long p : a.payloads) {
    TB_TRY(check_payload_arg(p));
    opt.payloads.push_back(static_cast<std::size_t>(p));
  }
  if (!a.threads.empty()) opt.threads.clear();
  for (long long t : a.threads) {
    TB_TRY(range("--threads", t, 1, cpus, "online CPUs"));
    opt.threads.push_back(static_cast<int>(t));
  }
  TB_TRY(no_duplicates("--tracer", opt.tracers));
  TB_TRY(no_duplicates("--workload", opt.workloads));
  TB_TRY(no_duplicates("--action", opt.actions));
  TB_TRY(no_duplicates("--payload", opt.payloads));
  TB_TRY(no_duplicates("--threads", opt.threads));
  if (a.o_gap && a.o_gap->count()) {
    TB_TRY(
        range("--gap-us", a.gap_us, 1, 100000, "µs of idle before each timed sample; a block is at least 20 samples"));
    opt.gap_us = static_cast<std::uint64_t>(a.gap_us);
    if (std::any_of(opt.threads.begin(), opt.threads.end(), [](int t) { return t > 1; }))
      return Status::error(
          "--gap-us idles the CPUs before each sample; threads firing meanwhile would keep them "
          "busy: use it with one thread (-j 1)");
  }
  if (!(a.max_lost_percent >= 0 && a.max_lost_percent <= 100))
    return Status::error(
        fmt::format("--max-lost-percent {} is outside 0..100 (share of the events a tracer may lose "
                    "and still pass verification)",
                    a.max_lost_percent));
  opt.max_lost_share = a.max_lost_percent / 100;
  TB_TRY(check_gbench_args(opt.gbench_args));
  TB_TRY(split_option_args(a.raw_options, "", &opt.options));
  if (a.guest_cpus) return Status::ok();  // the guest checks --execution against its CPUID
  std::string execution;
  TB_TRY(check_execution(opt.execution, hypervisor_vendor(), &execution));
  return Status::ok();
}

int cmd_run(RunArgs& a, const std::vector<std::string>& argv) {
  // First thing: planning already probes tracers in the kernel, and a signal
  // must not kill the process halfway through such a probe.
  install_signal_watcher();
  RunOptions& opt = a.opt;
  if (Status s = check_run_args(a); !s) {
    std::cerr << "tracebench run: " << s.message() << "\n";
    return 2;
  }
  opt.command_line = argv;
  opt.plan_for_guest = a.guest_cpus > 0;
  Plan plan;
  if (Status s = make_plan(opt, &plan); !s) {
    std::cerr << "tracebench run: " << s.message() << "\n";
    return 2;
  }
  for (const auto& [t, why] : plan.skipped) std::cerr << fmt::format("tracebench: skipping {}: {}\n", t, why);
  if (g_stop_requested) return 130;
  if (opt.plan_for_guest) return 0;
  if (a.plan_only) {
    std::cerr << fmt::format("tracebench: plan: {} benchmark(s) to run (stdout), {} skipped (above)\n",
                             plan.specs.size(), plan.skipped.size());
    for (const auto& s : plan.specs) std::cout << s.name() << "\n";
    return 0;
  }
  if (geteuid() != 0) {
    std::cerr << "tracebench: warning: not root; most tracers need CAP_SYS_ADMIN/CAP_PERFMON and will fail\n";
  }
  // One measuring run per machine: taken after the plan (bad input is
  // refused first) and before anything is attached or written.
  MachineLock lock;
  LockRequest req;
  if (Status s = a.lock.request(&req); !s) {
    std::cerr << "tracebench run: " << s.message() << "\n";
    return 2;
  }
  if (Status s = lock.acquire(req, "tracebench run", &g_stop_requested); !s) {
    std::cerr << s.message() << "\n";
    return g_stop_requested ? 130 : 2;
  }
  opt.machine_lock = &lock;
  RunResult run;
  std::string dir;
  Status s = run_benchmarks(opt, plan, &run, &dir);
  // Keep stdout machine-readable when Google Benchmark prints JSON or CSV there.
  bool gb_console = true;
  for (const auto& g : opt.gbench_args) {
    if (g.rfind("--benchmark_format=", 0) == 0 && g != "--benchmark_format=console") gb_console = false;
  }
  std::ostream& table = gb_console ? std::cout : std::cerr;
  Report summary;
  if (Status rs = run_reporters().write("console", RunReport{run, a.verbose}, &summary); !rs)
    std::cerr << "tracebench run: " << rs.message() << "\n";
  table << "\n" << summary.text;
  // Named only while it is there (a run whose directory vanished says so below).
  if (!dir.empty() && check_input_file(dir + "/result.json", kMaxInputBytes))
    table << fmt::format("\nresults{}: {}/result.json\n",
                         run.context.complete ? "" : " (partial: the run did not finish; the benchmarks that finished)",
                         dir);
  for (const auto& w : run.context.noise_warnings) std::cerr << "warning: " << w << "\n";
  if (!s) {
    std::cerr << "tracebench run: " << s.message() << "\n";
    return g_stop_requested ? 130 : 1;
  }
  for (const auto& b : run.benchmarks) {
    if (b.status == "error") return 1;
  }
  return 0;
}

// fds 0-2 closed by whoever started us: each is held by a stand-in, so a
// file this process opens never lands on fd 1 and receives its output.  A
// closed stdout gets /dev/full (every write to it fails and is reported).
bool hold_standard_fds() {
  bool stdout_closed = false;
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int got = open(fd == 1 ? "/dev/full" : "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got >= 0 && got != fd) {
      dup2(got, fd);
      close(got);
    }
    stdout_closed |= fd == 1;
  }
  return stdout_closed;
}

// Whatever a command printed reached standard output: flushed and checked
// at exit, so /dev/full, a closed stdout or a reader gone (EPIPE) is an
// error with a message, never a silent exit 0 with output lost.
int check_stdout(int rc, bool stdout_closed) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return rc;
  // A write that failed earlier may have left nothing to flush, and errno
  // long gone: a pipe whose reader left reports POLLERR.
  pollfd p{1, POLLOUT, 0};
  const bool reader_gone = poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
  const std::string why = stdout_closed ? std::string("standard output is closed")
                          : err != 0    ? std::string(std::strerror(err))
                          : reader_gone ? std::string(std::strerror(EPIPE)) + ": the reader is gone"
                                        : std::string("a write failed");
  std::fprintf(stderr, "tracebench: writing standard output failed (%s): the output is incomplete\n", why.c_str());
  return rc != 0 ? rc : 1;
}

int cli_dispatch(int argc, char** argv);

}  // namespace

int cli_main(int argc, char** argv) {
  const bool stdout_closed = hold_standard_fds();
  // A reader that went away is EPIPE from write(), reported below, rather
  // than a SIGPIPE that ends the process without a word.
  std::signal(SIGPIPE, SIG_IGN);
  int rc = 0;
  // The last resort: every command turns its own failures into messages and
  // exit codes; what still escapes is said here, never an abort.
  try {
    rc = cli_dispatch(argc, argv);
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "tracebench: %s\n", e.what());
    rc = 2;
  } catch (const std::length_error& e) {
    std::fprintf(stderr, "tracebench: an input is larger than this command handles (%s)\n", e.what());
    rc = 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tracebench: out of memory; %s\n", kept_results_text().c_str());
    rc = 1;
  } catch (const std::exception& e) {
    // A bug of ours or a library's: EX_SOFTWARE, as the README says.
    std::fprintf(stderr, "tracebench: internal error (%s); please report it\n", e.what());
    rc = 70;
  }
  if (const std::size_t n = teardown_active_tracers(); n > 0)
    std::fprintf(stderr, "tracebench: tore down %zu tracer(s) left attached\n", n);
  return check_stdout(rc, stdout_closed);
}

namespace {

// `run`'s counts and sizes, and where its results go.
void add_run_sizes(CLI::App* run, RunArgs* ra) {
  run->add_option("-p,--payload", ra->payloads, "Payload sizes in bytes, 0..1048576 (default sweep 0..4096)");
  run->add_option("-j,--threads", ra->threads, "Firing threads (1..nproc); several values sweep");
  ra->o_repetitions = run->add_option(
      "-r,--repetitions", ra->repetitions,
      "Interleaved baseline/traced repetitions at most, 2..100000 (default 10, quick 6); see --ci-target");
  ra->o_ci_target = run->add_option(
      "--ci-target", ra->ci_target,
      "Stop a benchmark's repetitions once its overhead's 95% interval is within this share of the figure (or two "
      "clock floors per event, whichever is larger), after at least 6; 0..1, 0 runs every repetition (default 0.02)");
  ra->o_warmup = run->add_option(
      "--warmup", ra->warmup_seconds,
      "Before its repetitions, run each benchmark's traced blocks until their last three chunks agree within 10% "
      "(after the first events a tracer says cost more), for at most this many seconds; 0..600, 0: no warm-up "
      "(default 1, quick 0.5)");
  ra->o_samples =
      run->add_option("-n,--samples", ra->samples, "Samples per block, 10..10000000 (default 2000, quick 1000)");
  ra->o_batch = run->add_option("-b,--batch", ra->batch, "Events per timed sample, 1..10000000 (default: automatic)");
  ra->o_gap = run->add_option("--gap-us", ra->gap_us,
                              "Sleep this many µs (1..100000) before each timed sample: the figure is then of events "
                              "after an idle gap (a consumer asleep, caches cold); a sample is the workload's "
                              "smallest batch unless --batch");
  run->add_option("-o,--option", ra->raw_options, "Tracer option <tracer>.<key>=<value>");
  run->add_option("--max-lost-percent", ra->max_lost_percent,
                  "Events a tracer may lose (% of those it saw) and still pass verification; above, it is partial")
      ->capture_default_str();
  ra->o_cpu = run->add_option("--cpu", ra->cpu, "CPU of the measured thread (default: the last)");
  ra->o_out =
      run->add_option("--out", ra->opt.out_base, "Base directory for result directories")->capture_default_str();
}

// `run`'s switches: where it runs, what it prints, what it writes.
void add_run_switches(CLI::App* run, RunArgs* ra) {
  run->add_option(
      "--execution", ra->opt.execution,
      "Where this runs (host, qemu-tcg, qemu-tcg-icount, qemu-kvm; default: detected); set by the VM lab, checked "
      "against CPUID");
  run->add_flag("--quick", ra->opt.quick, "Quick suite: fewer repetitions, samples and payload sizes");
  run->add_flag("--plan", ra->plan_only, "Print the benchmarks that would run, and exit");
  run->add_option("--check-for-guest", ra->guest_cpus, "(tracebench vm) check the arguments for a guest of N CPUs")
      ->check(CLI::Range(1, 4096))
      ->group("");
  run->add_flag("!--no-samples", ra->opt.write_samples, "Do not write samples.csv");
  add_lock_flags(run, &ra->lock);
  run->add_flag("-v,--verbose", ra->verbose,
                "Also print the information notes under the summary (result.json has them all)");
  run->add_flag("--gbench-console", ra->opt.gbench_console,
                "Also print Google Benchmark's own per-repetition lines (a --benchmark_format/_color/_counters_tabular "
                "flag after -- does too)");
  // Documented here; split_gbench_args() splits them off before parsing.
  run->footer("Google Benchmark flags go after --, e.g. -- --benchmark_filter=getpid (see README)");
}

CLI::App* add_run_command(CLI::App& app, RunArgs* ra) {
  auto* run = app.add_subcommand("run", "Run benchmarks; writes <out>/<run-id>/result.json");
  run->add_option("-t,--tracer", ra->opt.tracers, "Tracers to run (default: every available one)");
  run->add_option("-w,--workload", ra->opt.workloads, "Workloads to run (default: all the tracer supports)");
  run->add_option("-a,--action", ra->opt.actions, "Tracer actions (default: each tracer's first)");
  add_run_sizes(run, ra);
  add_run_switches(run, ra);
  return run;
}

// `run ... -- <Google Benchmark flags>`: everything after the first "--"
// is the library's, split off here (CLI11 would take a "--" right after a
// repeated option such as `-w getpid` as that option's end and then parse
// the flags as its own).  Returns the count of arguments left for CLI11.
int split_gbench_args(int argc, char** argv, std::vector<std::string>* gbench_args) {
  if (argc > 1 && std::string(argv[1]) == "run") {
    for (int i = 2; i < argc; ++i) {
      if (std::string(argv[i]) == "--") {
        gbench_args->assign(argv + i + 1, argv + argc);
        return i;
      }
    }
  }
  return argc;
}

int cli_dispatch(int argc, char** argv) {
  CLI::App app{"tracebench: what does a Linux tracer cost per event?", "tracebench"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       fmt::format("tracebench {} (git {}, {} build, {})", kVersion, kGitSha, kBuildType, kCompiler));
  std::vector<std::string> args(argv, argv + argc);

  ListArgs la;
  auto* list = builtin::add_list_command(app, &la);
  bool env_json = false;
  auto* env = app.add_subcommand("env", "Per tracer: available on this kernel, or the exact reason not");
  env->add_flag("--json", env_json, "Print JSON");
  auto* cleanup = app.add_subcommand("cleanup", "Remove tracer state that a killed run left behind (ours only)");
  RunArgs ra;
  auto* run = add_run_command(app, &ra);
  CompareArgs ca;
  auto* compare = builtin::add_compare_command(app, &ca);
  std::vector<int> command_status(command_registry().size(), 0);
  for (std::size_t i = 0; i < command_registry().size(); ++i) {
    command_registry()[i].install(app, &command_status[i]);
  }
  refuse_non_finite_reals(&app);

  const int parse_argc = split_gbench_args(argc, argv, &ra.opt.gbench_args);
  try {
    app.parse(parse_argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and is 0; every refused argument is 2, as every other
    // refusal of bad input (CLI11's own codes are its internals).
    return app.exit(e) == 0 ? 0 : 2;
  }
  // `completion` only prints the command line's shape (the build runs it);
  // `run --check-for-guest` checks a guest's arguments: this host's leftovers
  // are not its business.
  if (!cleanup->parsed() && !app.got_subcommand("completion") && !(run->parsed() && ra.guest_cpus)) warn_leftovers();
  if (list->parsed()) return builtin::cmd_list_parsed(la);
  if (env->parsed()) return builtin::cmd_env(env_json);
  if (cleanup->parsed()) return cmd_cleanup();
  if (run->parsed()) return cmd_run(ra, args);
  if (compare->parsed()) return builtin::cmd_compare(ca);
  for (std::size_t i = 0; i < command_registry().size(); ++i) {
    if (app.got_subcommand(command_registry()[i].name)) return command_status[i];
  }
  return 0;
}

}  // namespace
}  // namespace tracebench
