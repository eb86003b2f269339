// The run: probes the machine and the clock, writes the run context, then
// drives each planned benchmark (bench_run.h) through Google Benchmark's
// repetitions and commits it to the journal (journal.h) as it finishes.
// Planning is plan.cc, signals and emergency teardown teardown.cc, helper
// threads contenders.h, the console table report_console.cc.
#include "tracebench/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench_run.h"
#include "journal.h"
#include "simulated_steal.h"
#include "run_state.h"
#include "tracebench/adaptive.h"
#include "tracebench/clock.h"
#include "tracebench/clock_check.h"
#include "tracebench/counters.h"
#include "tracebench/gbench.h"
#include "tracebench/host_simulation.h"
#include "tracebench/machine_lock.h"
#include "tracebench/progress.h"
#include "tracebench/steady_state.h"
#include "tracebench/system.h"
#include "tracebench/util.h"
#include "tracebench/version.h"

namespace tracebench {

namespace {

// Above this many CPUs of other processes' load, a run is flagged: a
// neighbour busy on another CPU (a compile, say) shares the caches, the
// memory bandwidth and, on a VM, the host's cores with the measured thread,
// and moves even a syscall's baseline while it runs.
constexpr double kBusyNeighbourCpus = 0.25;

// Another command measured or attached while this run did (the machine
// lock, tracebench/machine_lock.h): said in the context and its warnings.
void mark_concurrent(RunContext* ctx, const std::string& beside) {
  ctx->concurrent = true;
  ctx->noise_warnings.push_back(fmt::format(
      "measured concurrently with {}: each run's probes and load may be in the other's figures (a uprobe traps in "
      "every process that maps its file); `compare` warns and `model fit` refuses such runs",
      beside));
}

// A call Google Benchmark makes after the benchmark's repetitions stopped:
// its one iteration returns at once, with no time, and is not counted.
void skip_stopped_repetition(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(0);
}

// After repetition `rep`: whether the benchmark's repetitions stop now
// (adaptive.h), counting those kept since the last level shift (a leading
// level left out: bench_run.h settle_levels); `limit` repetitions in all end
// them whatever.  When they stop, the result says which rule stopped them.
bool stop_repetitions(BenchRun* raw, int rep, StopRule rule, int limit, double tsc_hz) {
  if (raw->failed() || !raw->book()) return false;
  raw->settle_levels();
  rule.floor_cycles_per_event /= static_cast<double>(std::max<std::uint64_t>(1, raw->result().batch));
  const int kept = static_cast<int>(raw->book()->repetitions_kept());
  RepetitionStop stop;
  const bool stop_now = should_stop(raw->book()->overheads(), kept, rule, &stop);
  if (!stop_now && rep + 1 < limit) return false;
  // A last repetition apart from the rest may begin a new level: one more tells.
  if (stop_now && rep + 1 < limit && last_apart(raw->book()->overheads(), raw->steady_rule())) {
    raw->result().warnings.push_back(fmt::format(
        "repetitions went on after {}: the last stood apart from the rest (a new level, or an outlier)", rep + 1));
    return false;
  }
  if (stop.rule.empty()) stop.rule = rule.target_rel > 0 ? "cap" : "fixed";  // the limit, after level shifts
  stop.limit = limit;
  BenchmarkResult& r = raw->result();
  r.repetitions = rep + 1;
  r.repetitions_stop = stop;
  const double ns = 1e9 / tsc_hz;
  if (stop.rule == "interval")
    r.warnings.push_back(
        fmt::format("repetitions stopped after {} of at most {}: the 95% interval is within "
                    "+-{:.2f} ns of the median (target +-{:.2f} ns)",
                    rep + 1, rule.cap, stop.half_width_cycles * ns, stop.target_cycles * ns));
  else if (stop.rule == "cap" && stop.target_cycles > 0)
    r.warnings.push_back(
        fmt::format("repetitions stopped at the cap ({}): the 95% interval is +-{:.2f} ns of the "
                    "median, wider than the target +-{:.2f} ns; more repetitions (-r) tighten it",
                    rule.cap, stop.half_width_cycles * ns, stop.target_cycles * ns));
  return true;
}

// Repetitions a benchmark may take in all: the cap, and twice as many again
// when level shifts leave leading repetitions out (steady_state.h).  On a
// host whose speed jumps every few seconds a second shift can come after
// the cap, and with only as many again the last level was short of the six
// an interval needs: the benchmark unsteady, with no figure.
int repetition_limit(int cap) { return 3 * cap; }

}  // namespace

// ---------------------------------------------------------------------------
// The run's steps, in the order run_benchmarks takes them.

namespace {

// Keeps the measured CPU busy for a while first, so the first benchmark does
// not pay for a CPU (or vCPU) that was idle and clocked down.
void warm_up(bool quick) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(quick ? 300 : 1000);
  while (std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 1000; ++i) asm volatile("" ::: "memory");
  }
}

// The clock self-check: how regions end, how migrations are detected, the
// TSC's rate and step, the floor.  A failed check stops the run here, before
// anything is attached or written.
Status check_clock(int cpu, ClockFacts* facts, Machine* m) {
  *facts = observe_clock(cpu);
  m->clock = decide_clock(*facts);
  if (!m->clock.ok()) return Status::error("clock self-check failed (see `tracebench env`):\n" + m->clock.failures());
  return Status::ok();
}

// The machine, kernel and clock as the run context records them.
Status describe_machine(const RunOptions& opt, const SystemInfo& sys, const ClockFacts& facts, const Machine& m,
                        const Counters& counters, RunContext* ctx) {
  ctx->date_utc = utc_now_iso8601();
  ctx->host = sys.hostname;
  ctx->cpu_model = sys.cpu_model;
  ctx->cpus = sys.cpus;
  ctx->measured_cpu = m.measured_cpu;
  ctx->kernel_release = sys.kernel_release;
  ctx->kernel_version = sys.kernel_version;
  ctx->kernel_config_hash = sys.kernel_config_hash;
  ctx->kernel_config_source = sys.kernel_config_source;
  ctx->clocksource = sys.clocksource;
  ctx->virtualized = sys.virtualized;
  ctx->hypervisor = sys.hypervisor;
  TB_TRY(check_execution(opt.execution, sys.hypervisor, &ctx->execution));
  ctx->emulated = execution_emulated(ctx->execution);
  ctx->tsc_hz = m.clock.tsc_hz;
  ctx->tsc_calibrated_hz = facts.calibrated_hz;
  ctx->tsc_source = m.clock.tsc_source;
  ctx->tsc_invariant = (facts.flag_constant_tsc && facts.flag_nonstop_tsc) || facts.cpuid_invariant_tsc;
  ctx->floor_cycles = m.clock.floor_cycles;
  ctx->floor_mad_cycles = m.clock.floor_mad_cycles;
  ctx->clock = clock_json(facts, m.clock);
  ctx->counter_read_cycles = counters.read_cost_cycles();
  for (const auto& c : counters.info()) ctx->counters.push_back({c.name, c.source, c.live, c.unavailable_reason});
  ctx->noise_warnings = sys.noise_warnings;
  if (ctx->execution == kExecutionIcount)
    ctx->noise_warnings.push_back(
        "execution qemu-tcg-icount: the guest's clock counts instructions (QEMU -icount shift=0), so every figure "
        "is guest instructions per event (cycles and ns alike): the same on every boot, but no cache, pipeline or "
        "trap cost is in it; compare it only with runs of the same execution");
  if (const HostSimulation& sim = host_simulation(); sim.active()) {
    ctx->simulated_host = sim.spec;
    ctx->noise_warnings.push_back(fmt::format(
        "SIMULATED host ({}={}): the figures are of this machine made slower and noisier on purpose, for tests; "
        "never compare them with a real host's",
        kHostSimulationEnv, sim.spec));
  }
  for (const auto& c : m.clock.checks) {
    if (c.verdict == "warn") ctx->noise_warnings.push_back(fmt::format("clock {}: {} ({})", c.name, c.reason, c.value));
  }
  return Status::ok();
}

// What built the run and with what: versions, the tracers' libraries, the
// command line, a concurrent holder of the machine lock.
void describe_build(const RunOptions& opt, const Plan& plan, const Counters& counters, RunContext* ctx) {
  ctx->tracebench_version = kVersion;
  ctx->git_sha = kGitSha;
  ctx->build_type = kBuildType;
  ctx->compiler = kCompiler;
  ctx->library_versions = library_versions();
  ctx->library_versions["papi"] = counters.papi_version();
  std::set<std::string> tracer_names;
  for (const auto& spec : plan.specs) tracer_names.insert(spec.tracer);
  for (const auto& name : tracer_names) {
    if (auto t = make_tracer(name)) {
      for (const auto& [k, v] : t->versions()) ctx->library_versions[k] = v;
    }
  }
  ctx->command_line = opt.command_line;
  if (opt.machine_lock && opt.machine_lock->concurrent()) mark_concurrent(ctx, opt.machine_lock->concurrent_with());
}

// Progress: the time since the first benchmark began, and how many finished.
struct Progress {
  std::chrono::steady_clock::time_point start;
  bool started = false;
  std::size_t finished = 0;
};

// One benchmark as Google Benchmark calls it, once per repetition.  Google
// Benchmark calls each benchmark once per repetition, all repetitions of one
// benchmark before the next (no flag that changes that is accepted:
// gbench.h).  The calls are still checked: a call for another benchmark
// while one is open, or more calls than repetitions, fails the benchmark
// instead of mixing its blocks.
class BenchCall {
 public:
  BenchCall(BenchRun* raw, std::shared_ptr<BenchRun*> open, std::shared_ptr<Progress> progress, Journal* journal,
            StopRule rule, int reps, std::size_t index, std::size_t total, double tsc_hz)
      : raw_(raw),
        open_(std::move(open)),
        progress_(std::move(progress)),
        journal_(journal),
        rule_(rule),
        reps_(reps),
        index_(index),
        total_(total),
        tsc_hz_(tsc_hz) {}

  void operator()(benchmark::State& state) {
    const int rep = (*calls_)++;
    if (*done_) {
      skip_stopped_repetition(state);
      return;
    }
    check_call(rep);
    if (rep == 0 && !g_stop_requested && !raw_->failed()) begin();
    if (g_stop_requested && !raw_->failed()) raw_->fail("interrupted");
    measure(state, rep);
    if (stop_repetitions(raw_, rep, rule_, reps_, tsc_hz_) || rep == reps_ - 1) finish();
  }

 private:
  // A call out of order, one too many, or after the run's files failed
  // fails the benchmark.
  void check_call(int rep) {
    if (*open_ != nullptr && *open_ != raw_) {
      (*open_)->fail("Google Benchmark called another benchmark before this one's repetitions were done");
      *open_ = nullptr;
    }
    if (rep >= reps_ && !raw_->failed())
      raw_->fail("Google Benchmark called this benchmark more often than its repetitions");
    // A run whose files can no longer be written measures nothing more.
    if (!journal_->ok() && !raw_->failed())
      raw_->fail("not run: the run stopped when its files could not be written (" + journal_->error().message() + ")");
  }
  // The first call: the progress line, then the benchmark's setup.
  void begin() {
    const auto now = std::chrono::steady_clock::now();
    if (!progress_->started) {
      progress_->start = now;
      progress_->started = true;
    }
    const double elapsed = std::chrono::duration<double>(now - progress_->start).count();
    // Benchmarks a --benchmark_filter left out are never begun: the
    // estimate counts from this one's index on.
    const std::size_t to_go = total_ - index_ + 1;  // this one and those after it
    const auto left = time_left_s(elapsed, progress_->finished, progress_->finished + to_go);
    std::fprintf(stderr, "%s\n", progress_line(index_, total_, elapsed, left, raw_->result().name).c_str());
    *open_ = raw_;
    if (Status s = raw_->setup(); !s) raw_->fail(s.message());
  }
  // Every repetition runs its one iteration, even a failed one: Google
  // Benchmark requires equal iteration counts across repetitions.
  void measure(benchmark::State& state, int rep) {
    double base = 0, traced = 0;
    bool counted = false;
    for (auto _ : state) {
      if (raw_->failed()) {
        state.SkipWithError(raw_->result().error.c_str());
        break;
      }
      if (Status s = raw_->repetition(rep); !s) {
        raw_->fail(s.message());
        state.SkipWithError(raw_->result().error.c_str());
        break;
      }
      // Google Benchmark's time column: traced cost per event (0 for a
      // repetition whose blocks lost too many samples; the result file
      // and summary never show such a figure).
      counted = raw_->book()->last(&base, &traced);
      state.SetIterationTime(counted ? std::max(traced, 0.0) / tsc_hz_ : 0.0);
    }
    if (!raw_->failed() && counted) {
      state.counters["base_cyc"] = base;
      state.counters["traced_cyc"] = traced;
      state.counters["overhead_cyc"] = traced - base;
      state.counters["batch"] = static_cast<double>(raw_->result().batch);
      // Every firing thread's traced events per second (result.json: the
      // median over repetitions), as Google Benchmark's rate counters show.
      state.counters["traced_events_per_s"] = raw_->book()->last_traced_events_per_second();
    }
  }
  // Its repetitions stopped: torn down, checked, committed to the journal.
  void finish() {
    *done_ = true;
    raw_->finish();
    raw_->teardown();
    raw_->check_site_after();
    if (*open_ == raw_) *open_ = nullptr;
    journal_->add(raw_->take_result());
    progress_->finished++;
  }

  BenchRun* raw_;
  std::shared_ptr<BenchRun*> open_;
  std::shared_ptr<Progress> progress_;
  Journal* journal_;
  StopRule rule_;
  int reps_;
  std::size_t index_, total_;
  double tsc_hz_;
  // Google Benchmark copies the callable: the call count and the stop are shared.
  std::shared_ptr<int> calls_ = std::make_shared<int>(0);
  std::shared_ptr<bool> done_ = std::make_shared<bool>(false);  // its repetitions stopped (adaptive.h)
};

// Each planned benchmark registered with Google Benchmark; `runs` owns them.
void register_benchmarks(const RunOptions& opt, const Plan& plan, const Machine& m, Journal* journal,
                         std::vector<std::unique_ptr<BenchRun>>* runs) {
  auto open = std::make_shared<BenchRun*>(nullptr);
  auto progress = std::make_shared<Progress>();
  std::size_t index = 0;
  for (const auto& spec : plan.specs) {
    auto br = std::make_unique<BenchRun>(spec, opt, m);
    BenchRun* raw = br.get();
    runs->push_back(std::move(br));
    const int reps = repetition_limit(opt.repetitions);
    const StopRule rule{opt.repetitions, opt.ci_target, m.clock.floor_cycles};
    benchmark::RegisterBenchmark(spec.name().c_str(), BenchCall(raw, open, progress, journal, rule, reps, ++index,
                                                                plan.specs.size(), m.clock.tsc_hz))
        ->Iterations(1)
        ->Repetitions(reps)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
  }
}

// Google Benchmark runs what was registered (with the flags after `--`);
// `matched` is how many benchmarks it ran.  Other processes' CPU load
// meanwhile goes into the context.
Status run_registered(const RunOptions& opt, RunContext* ctx, std::size_t* matched) {
  std::vector<std::string> args_storage = {"tracebench"};
  for (const auto& a : opt.gbench_args) args_storage.push_back(a);
  std::vector<char*> argv;
  for (auto& a : args_storage) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data())) {
    benchmark::ClearRegisteredBenchmarks();
    return Status::error("unrecognized Google Benchmark arguments");
  }
  const CpuTimeSnapshot before = cpu_time_snapshot();
  auto display = make_display_reporter(opt.gbench_args, opt.gbench_console);
  // The plan refused a filter that selects nothing; should the library
  // still find none, the run is not complete.
  *matched = benchmark::RunSpecifiedBenchmarks(display.get());
  benchmark::ClearRegisteredBenchmarks();
  if (const CpuTimeSnapshot after = cpu_time_snapshot(); before.ok && after.ok) {
    ctx->foreign_cpu_load = foreign_cpu_load(before, after);
    if (ctx->foreign_cpu_load > kBusyNeighbourCpus)
      ctx->noise_warnings.push_back(
          fmt::format("other processes kept {:.2f} of {} CPUs busy while this run measured (tracer daemons included): "
                      "they slow the measured CPU too; compare runs made on a quiet machine",
                      ctx->foreign_cpu_load, ctx->cpus));
  }
  return Status::ok();
}

// What Google Benchmark did not finish: torn down, and committed as failed
// (interrupted) unless a filter left it out.
void settle_unfinished(std::vector<std::unique_ptr<BenchRun>>* runs, Journal* journal) {
  for (auto& br : *runs) {
    br->teardown();  // filtered out by --benchmark_filter, or interrupted
    BenchmarkResult& r = br->result();
    if (!br->started() && r.status == "ok") continue;             // filtered out by --benchmark_filter
    if (br->started() && r.status == "ok" && !r.overhead_cycles)  // interrupted between calls
      br->fail("interrupted before its repetitions were done");
    if (!journal->has(r.name)) journal->add(br->take_result());
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// The run.

Status run_benchmarks(const RunOptions& opt, const Plan& plan, RunResult* run, std::string* dir) {
  RunContext& ctx = run->context;
  int cpu = opt.measured_cpu >= 0 ? opt.measured_cpu : default_measured_cpu();
  TB_TRY(host_simulation_status());
  TB_TRY(pin_current_thread(cpu));
  SimulatedSteal steal;  // a simulated host that takes the CPU away: in its windows, to the end
  TB_TRY(steal.start(host_simulation()));
  std::string tracefs;
  if (Status s = ensure_tracefs(&tracefs); !s) {
    std::fprintf(stderr, "tracebench: warning: %s\n", s.message().c_str());
  }
  warm_up(opt.quick);
  SystemInfo sys = probe_system(cpu);
  ClockFacts facts;
  Machine m;
  {
    const StealWindow stolen_from;  // a simulated host's steal: its floor and checks see it
    TB_TRY(check_clock(cpu, &facts, &m));
  }
  Counters counters;
  counters.open();
  m.measured_cpu = cpu;
  m.counters = &counters;
  m.interrupt_gap_cycles = 1e-6 * m.clock.tsc_hz;  // an interrupt costs at least ~1 us
  // What the host takes from the measured CPU, before anything is attached.
  {
    const StealWindow stolen_from;  // a simulated host's steal is what the survey is for
    ctx.cpu_gaps = survey_cpu_gaps(opt.quick ? 0.05 : 0.1, m.clock.tsc_hz);
  }
  m.sample_cap_cycles = sample_cap_cycles(*ctx.cpu_gaps, m.clock.tsc_hz, m.clock.min_sample_cycles);
  m.host_share = ctx.cpu_gaps->short_share;
  ctx.sample_cap_cycles = m.sample_cap_cycles;
  TB_TRY(describe_machine(opt, sys, facts, m, counters, &ctx));
  describe_build(opt, plan, counters, &ctx);

  // The run's directory exists from the start and result.json is rewritten
  // (atomically) as each benchmark finishes, marked incomplete until the
  // end: a killed or failed run keeps what it measured and says so.
  // Its id is unique across folders and processes (make_run_dir).
  const std::string base = opt.out_base.empty() ? "results" : opt.out_base;
  TB_TRY(make_run_dir(base, &ctx, dir));
  ctx.complete = false;
  TB_TRY(write_run(*dir, *run));
  Journal journal(*dir, opt.write_samples, run);

  std::vector<std::unique_ptr<BenchRun>> runs;
  register_benchmarks(opt, plan, m, &journal, &runs);
  std::size_t matched = 0;
  TB_TRY(run_registered(opt, &ctx, &matched));
  settle_unfinished(&runs, &journal);
  counters.close();
  if (opt.machine_lock && !ctx.concurrent && opt.machine_lock->others_ran_beside())
    mark_concurrent(&ctx, "a command run with --allow-concurrent");
  ctx.complete = !g_stop_requested && matched > 0;
  TB_TRY(journal.close());
  if (g_stop_requested) return Status::error("interrupted");
  if (matched == 0) return Status::error("Google Benchmark ran no benchmark (its filter selected none)");
  return Status::ok();
}

}  // namespace tracebench
