// Plans benchmarks from the registries and filters, drives them through
// Google Benchmark, and collects one RunResult.
//
// One Google Benchmark repetition = one interleaved pair of blocks (baseline
// with the tracer disabled, traced with it enabled; the order alternates so
// drift cancels).  Within a block each sample is a serialized-TSC timing of
// `batch` events minus the calibrated floor.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tracebench/options.h"
#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench {

struct RunOptions {
  std::vector<std::string> tracers;    // empty: every available tracer
  std::vector<std::string> workloads;  // empty: every workload the tracer supports
  std::vector<std::string> actions;    // empty: each tracer's default action
  std::vector<std::size_t> payloads;   // empty: the default sweep
  std::vector<int> threads = {1};
  // Tracer options by tracer name ("ebpf" -> {"wakeup": "no_wakeup"}); from
  // `--option ebpf.wakeup=no_wakeup`.  Each tracer sees only its own.
  std::map<std::string, std::map<std::string, std::string>> options;
  int repetitions = 10;  // the cap: repetitions stop earlier once the interval is tight (adaptive.h)
  // The interval's target as a share of the figure (adaptive.h); 0: every
  // repetition runs.
  double ci_target = 0.02;
  // Before its repetitions, each benchmark runs traced blocks until the last
  // three agree (tracebench/steady_state.h), for at most this long; 0: no
  // warm-up (`run --warmup`).
  double warmup_seconds = 1.0;
  std::uint64_t samples = 2000;  // per block
  std::uint64_t batch = 0;       // events per sample; 0 = automatic
  // µs the firing thread sleeps before each timed sample (0: none): every
  // sample is then of events after an idle gap (`run --gap-us`).
  std::uint64_t gap_us = 0;
  // Share of the events a tracer may lose and still pass verification
  // (kDefaultMaxLostShare, verification.h; `run --max-lost-percent`).
  double max_lost_share = 0.05;
  bool quick = false;
  // Bound on one block's traced time, seconds (quick: 0.01); the samples
  // per block and the batch cap follow from it (bench_run.h).
  double block_seconds = 0.05;
  int measured_cpu = -1;  // -1: the last CPU
  std::string out_base = "results";
  bool write_samples = true;
  std::vector<std::string> gbench_args;  // forwarded to benchmark::Initialize
  bool gbench_console = false;           // Google Benchmark's per-repetition display (`--gbench-console`)
  std::vector<std::string> command_line;
  // "" = detect; the VM lab passes qemu-tcg/qemu-kvm, checked against CPUID.
  std::string execution;
  // The machine lock the command took (null: none, e.g. in tests): the run
  // context says whether it measured beside another command.
  const class MachineLock* machine_lock = nullptr;
  // Planning for another kernel (`tracebench vm` checks its guest's run on
  // the host before it builds and boots): names, numbers, option schemas and
  // the benchmark filter only; nothing of this kernel (tracer and workload
  // availability, the tracers' validate(), payload limits) is asked.
  bool plan_for_guest = false;
  // Availability (the tracers' and the workloads') is the caller's to
  // report: `dvm --kernel` compiles, lists and resolves probes before it
  // asks the module, and says so in its own words when the module is
  // missing; `model fit` names commands for runs made elsewhere (the VM
  // lab).  All else is planned: options, payloads, the tracers' validate().
  bool availability_by_caller = false;
};

// One planned benchmark.
struct BenchSpec {
  std::string tracer, workload, action;
  std::size_t payload_bytes = 0;
  int threads = 1;
  std::uint64_t gap_us = 0;  // RunOptions::gap_us; in the name when set
  // The tracer's options as the plan parsed them (null: none given).
  std::shared_ptr<const OptionValues> options;
  std::string name() const;
};

// Which (tracer, workload, action, payload, threads) combinations a run
// would measure, and the tracers left out with their reasons.
struct Plan {
  std::vector<BenchSpec> specs;
  std::vector<std::pair<std::string, std::string>> skipped;  // tracer or workload, reason
};
Status make_plan(const RunOptions& opt, Plan* plan);

// Runs the plan; writes <out_base>/<run-id>/ and fills `run` and `dir`.
// Returns an error only for problems of the run as a whole; a failing
// benchmark is recorded in its result with status "error".
Status run_benchmarks(const RunOptions& opt, const Plan& plan, RunResult* run, std::string* dir);

// Set by the signal watcher on SIGINT/SIGTERM; the runner stops between
// blocks, tears down and returns.
extern std::atomic<bool> g_stop_requested;

// Blocks SIGINT/SIGTERM/SIGHUP in every thread and starts a watcher thread:
// the first signal asks the run to stop; a second one (or 5 s without
// progress) tears the active tracers down from the watcher, releases what
// adapters keep until exit and exits 130.  Also installs a terminate handler:
// an uncaught exception does the same and exits 70.
void install_signal_watcher();

// What the run has on disk, for the messages of a run that stops early:
// the journal notes each successful write (`benchmarks` in DIR/result.json)
// and a directory that vanished; kept_results_text() says which, e.g. "the
// results of 3 finished benchmark(s) are kept in DIR/result.json" or "no
// result file was written".
void note_results_kept(const std::string& dir, std::size_t benchmarks);
void note_results_lost();
std::string kept_results_text();

// Tears down every tracer attached right now; returns how many.
std::size_t teardown_active_tracers();

// Runs every keep_until_exit() release (tracer.h), last kept first; returns
// how many.  The emergency paths call it after teardown_active_tracers(); a
// normal exit calls it through atexit.
std::size_t release_kept_until_exit();

// Tracers that are attached right now, for the emergency teardown path.
class ActiveTracer {
 public:
  explicit ActiveTracer(class Tracer* t);
  ~ActiveTracer();
  ActiveTracer(const ActiveTracer&) = delete;
  ActiveTracer& operator=(const ActiveTracer&) = delete;

 private:
  class Tracer* tracer_;
};

}  // namespace tracebench
