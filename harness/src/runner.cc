#include "tracebench/runner.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/workload.h"
#include "tracebench/clock.h"
#include "tracebench/counters.h"
#include "tracebench/stats.h"
#include "tracebench/system.h"
#include "tracebench/util.h"
#include "tracebench/verification.h"
#include "tracebench/version.h"
#include "tracers/tracer.h"

namespace tracebench {

std::atomic<bool> g_stop_requested{false};

// ---------------------------------------------------------------------------
// Emergency teardown: the tracers attached right now.

namespace {
std::mutex g_active_mu;
std::set<Tracer*>& active_tracers() {
  static std::set<Tracer*> s;
  return s;
}
std::atomic<std::uint64_t> g_progress{0};
}  // namespace

ActiveTracer::ActiveTracer(Tracer* t) : tracer_(t) {
  std::lock_guard<std::mutex> lock(g_active_mu);
  active_tracers().insert(t);
}

ActiveTracer::~ActiveTracer() {
  std::lock_guard<std::mutex> lock(g_active_mu);
  active_tracers().erase(tracer_);
}

void install_signal_watcher() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    sigwait(&set, &sig);
    g_stop_requested = true;
    std::fprintf(stderr, "\ntracebench: %s received, stopping after the current block\n", strsignal(sig));
    // Wait for the run to unwind; if it does not progress, tear down here.
    std::uint64_t seen = g_progress.load();
    for (int i = 0; i < 50; ++i) {
      timespec ts{0, 100 * 1000 * 1000};
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM)) break;  // second signal
      nanosleep(&ts, nullptr);
      if (i == 49 && g_progress.load() != seen) {
        seen = g_progress.load();
        i = 0;
      }
    }
    std::lock_guard<std::mutex> lock(g_active_mu);
    for (Tracer* t : active_tracers()) t->teardown();
    std::fprintf(stderr, "tracebench: tore down %zu tracer(s), exiting\n", active_tracers().size());
    _exit(130);
  }).detach();
}

// ---------------------------------------------------------------------------
// Floor.

void calibrate_floor(double* median, double* mad) {
  constexpr int kSamples = 20000;
  std::vector<double> v;
  v.reserve(kSamples);
  unsigned aux;
  for (int i = 0; i < kSamples; ++i) {
    std::uint64_t t0 = tsc_begin();
    std::uint64_t t1 = tsc_end(&aux);
    v.push_back(static_cast<double>(t1 - t0));
  }
  Summary s = summarize(std::move(v));
  *median = s.p50;
  *mad = s.mad;
}

// ---------------------------------------------------------------------------
// Planning.

std::string BenchSpec::name() const {
  return fmt::format("{}/{}/{}/payload:{}/threads:{}", tracer, workload, action, payload_bytes, threads);
}

namespace {

bool selected(const std::vector<std::string>& filter, const std::string& name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

}  // namespace

Status make_plan(const RunOptions& opt, Plan* plan) {
  plan->specs.clear();
  plan->skipped.clear();
  for (const auto& name : opt.tracers) {
    if (!make_tracer(name)) return Status::error(fmt::format("unknown tracer '{}' (see `tracebench list`)", name));
  }
  for (const auto& name : opt.workloads) {
    if (!find_workload(name)) return Status::error(fmt::format("unknown workload '{}' (see `tracebench list`)", name));
  }
  std::vector<std::size_t> sweep = opt.payloads;
  if (sweep.empty()) {
    sweep = opt.quick ? std::vector<std::size_t>{0, 64, 1024} : std::vector<std::size_t>{0, 8, 64, 256, 1024, 4096};
  }
  std::set<std::string> unavailable_workloads;
  for (const auto& w : workload_registry()) {
    if (!selected(opt.workloads, w.name) || !w.available) continue;
    if (Availability a = w.available(); !a.ok) {
      unavailable_workloads.insert(w.name);
      plan->skipped.emplace_back("workload " + w.name, a.reason);
    }
  }
  for (const auto& entry : tracer_registry()) {
    if (!selected(opt.tracers, entry.name)) continue;
    auto tracer = entry.make();
    Availability av = tracer->available();
    if (!av.ok) {
      plan->skipped.emplace_back(entry.name, av.reason);
      continue;
    }
    std::vector<std::string> actions = opt.actions;
    std::vector<std::string> supported = tracer->actions();
    if (actions.empty()) {
      actions = {supported.front()};
    } else {
      std::vector<std::string> keep;
      for (const auto& a : actions) {
        if (std::find(supported.begin(), supported.end(), a) != supported.end()) keep.push_back(a);
      }
      if (keep.empty()) {
        plan->skipped.emplace_back(entry.name, fmt::format("none of the requested actions is supported (has: {})",
                                                           fmt::join(supported, ", ")));
        continue;
      }
      actions = keep;
    }
    for (const auto& w : workload_registry()) {
      if (!selected(opt.workloads, w.name) || unavailable_workloads.count(w.name)) continue;
      if (!tracer->supports(w.probe)) continue;
      std::vector<std::size_t> payloads = w.takes_payload ? sweep : std::vector<std::size_t>{0};
      for (const auto& action : actions) {
        if (!tracer->supports_action(w.probe, action)) continue;
        for (std::size_t p : payloads) {
          for (int t : opt.threads) {
            plan->specs.push_back(BenchSpec{entry.name, w.name, action, p, t});
          }
        }
      }
    }
  }
  if (plan->specs.empty()) {
    std::string why = "nothing to run: no available tracer supports the selected workloads";
    for (const auto& [t, reason] : plan->skipped) why += fmt::format("\n  {}: {}", t, reason);
    return Status::error(why);
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------
// Running one benchmark.

namespace {

// Above this many CPUs of other processes' load, a run is flagged: measured
// here, getpid's baseline moves from ~113 to ~137 ns while a compile runs on
// the other vCPU, and back when it stops.
constexpr double kBusyNeighbourCpus = 0.25;

struct Machine {
  double tsc_hz = 0;
  double floor = 0;
  double interrupt_gap_cycles = 0;  // a sample this much above the median was hit
  int measured_cpu = 0;
  Counters* counters = nullptr;
};

// Helper threads that fire the same workload on other CPUs while a block
// runs, for thread scaling.  They only fire between start() and stop().
class Contenders {
 public:
  Status start_threads(const Workload& w, const WorkloadParams& base, int count, int measured_cpu) {
    int ncpu = online_cpus();
    for (int i = 0; i < count; ++i) {
      auto slot = std::make_unique<Slot>();
      Slot* s = slot.get();
      slots_.push_back(std::move(slot));
      int cpu = ncpu > 1 ? (measured_cpu + 1 + i) % ncpu : 0;
      if (cpu == measured_cpu && ncpu > 1) cpu = (cpu + 1) % ncpu;
      WorkloadParams p = base;
      p.thread_index = i + 1;
      s->thread = std::thread([this, s, &w, p, cpu] { body(s, w, p, cpu); });
      std::unique_lock<std::mutex> lock(s->mu);
      s->cv.wait(lock, [s] { return s->ready; });
      if (!s->setup_status) return s->setup_status;
    }
    return Status::ok();
  }
  void run(bool on) {
    for (auto& s : slots_) {
      s->go.store(on);
      s->go.notify_one();
    }
    if (!on) {
      for (auto& s : slots_) {
        while (s->running.load()) std::this_thread::yield();
      }
    }
  }
  std::uint64_t take_fired() {
    std::uint64_t n = 0;
    for (auto& s : slots_) n += s->fired.exchange(0);
    return n;
  }
  void stop_threads() {
    for (auto& s : slots_) {
      s->quit.store(true);
      s->go.store(true);
      s->go.notify_one();
    }
    for (auto& s : slots_) {
      if (s->thread.joinable()) s->thread.join();
    }
    slots_.clear();
  }
  ~Contenders() { stop_threads(); }

 private:
  struct Slot {
    std::thread thread;
    std::mutex mu;
    std::condition_variable cv;
    bool ready = false;
    Status setup_status = Status::ok();
    std::atomic<bool> go{false}, quit{false}, running{false};
    std::atomic<std::uint64_t> fired{0};
  };
  static void body(Slot* s, const Workload& w, WorkloadParams p, int cpu) {
    std::unique_ptr<WorkloadState> st;
    Status status = pin_current_thread(cpu);
    if (status) status = w.setup(p, &st);
    {
      std::lock_guard<std::mutex> lock(s->mu);
      s->setup_status = status;
      s->ready = true;
    }
    s->cv.notify_one();
    if (!status) return;
    for (;;) {
      s->go.wait(false);
      if (s->quit.load()) break;
      s->running.store(true);
      while (s->go.load(std::memory_order_relaxed)) {
        st->fire(16);
        s->fired.fetch_add(16, std::memory_order_relaxed);
      }
      s->running.store(false);
    }
  }
  std::vector<std::unique_ptr<Slot>> slots_;
};

struct Block {
  std::vector<double> per_event;  // floor-subtracted cycles / batch
  std::vector<bool> migrated;
  std::vector<std::int64_t> counter_delta;
  std::uint64_t events = 0;
};

class BenchRun {
 public:
  BenchRun(const BenchSpec& spec, const RunOptions& opt, const Machine& m) : spec_(spec), opt_(opt), m_(m) {
    r_.name = spec.name();
    r_.tracer = spec.tracer;
    r_.workload = spec.workload;
    r_.action = spec.action;
    r_.payload_bytes = spec.payload_bytes;
    r_.threads = spec.threads;
    if (auto it = opt.options.find(spec.tracer); it != opt.options.end()) r_.options = it->second;
    r_.repetitions = opt.repetitions;
  }
  ~BenchRun() { teardown(); }

  Status setup() {
    workload_ = find_workload(spec_.workload);
    tracer_ = make_tracer(spec_.tracer);
    if (!workload_ || !tracer_) return Status::error("unknown tracer or workload");
    r_.probe = workload_->probe.name;
    r_.probe_kind = std::string(to_string(workload_->probe.kind));
    active_ = std::make_unique<ActiveTracer>(tracer_.get());
    AttachSpec as;
    as.probe = workload_->probe;
    as.action = spec_.action;
    as.payload_bytes = spec_.payload_bytes;
    as.options = r_.options;
    as.pid = getpid();
    attached_ = true;  // teardown() is safe after a failed attach
    if (Status s = tracer_->attach(as); !s) return Status::error(fmt::format("attach: {}", s.message()));
    WorkloadParams wp;
    wp.payload_bytes = spec_.payload_bytes;
    wp.marker_file = tracer_->marker_file();
    if (Status s = workload_->setup(wp, &state_); !s) return Status::error(fmt::format("workload setup: {}", s.message()));
    if (spec_.threads > 1) TB_TRY(contenders_.start_threads(*workload_, wp, spec_.threads - 1, m_.measured_cpu));
    return pilot();
  }

  // One repetition: a baseline block and a traced block, order alternating.
  Status repetition(int rep) {
    bool traced_first = rep % 2 == 1;
    for (int k = 0; k < 2; ++k) {
      bool traced = (k == 0) == traced_first;
      if (g_stop_requested) return Status::error("interrupted");
      Block b;
      TB_TRY(run_block(traced, &b));
      absorb(traced, rep, b);
      ++g_progress;
    }
    double base = rep_median(false);
    double tr = rep_median(true);
    r_.baseline.repetition_medians.push_back(base);
    r_.traced.repetition_medians.push_back(tr);
    overhead_.push_back(tr - base);
    return Status::ok();
  }

  void finish(std::vector<std::string>* samples_csv) {
    if (failed_) return;
    if (Status s = tracer_->drain(); !s) {
      fail(fmt::format("drain: {}", s.message()));
      return;
    }
    EventCounts c = tracer_->counts();
    r_.events.fired = fired_;
    r_.events.recorded = c.recorded;
    r_.events.lost = c.lost;
    r_.events.exact = c.exact;
    r_.events.payload_verified = c.payload_verified;
    r_.tracer_details = tracer_->details();
    summarize_variant(false);
    summarize_variant(true);
    if (Verification v = verify_events(c, fired_, spec_.payload_bytes, workload_->takes_payload, &r_.events);
        v.failed()) {
      fail(v.reason);
      return;
    }
    MedianCI oc = median_ci(overhead_);
    r_.overhead_cycles = oc;
    MedianCI on = oc;
    double k = 1e9 / m_.tsc_hz;
    on.median *= k;
    on.low *= k;
    on.high *= k;
    r_.overhead_ns = on;
    if (samples_csv) {
      for (auto& line : csv_) samples_csv->push_back(std::move(line));
    }
  }

  void fail(const std::string& msg) {
    if (!failed_) {
      failed_ = true;
      r_.status = workload_ ? "error" : "skipped";  // never set up: it did not run
      r_.error = msg;
      r_.overhead_cycles.reset();
      r_.overhead_ns.reset();
    }
    teardown();
  }

  void teardown() {
    contenders_.run(false);
    contenders_.stop_threads();
    state_.reset();
    if (tracer_ && attached_) {
      if (enabled_) (void)tracer_->disable();
      tracer_->teardown();
      attached_ = false;
    }
    active_.reset();
  }

  bool failed() const { return failed_; }
  BenchmarkResult& result() { return r_; }
  double last_overhead() const { return overhead_.empty() ? 0 : overhead_.back(); }
  double last_traced() const { return r_.traced.repetition_medians.empty() ? 0 : r_.traced.repetition_medians.back(); }
  double last_baseline() const { return r_.baseline.repetition_medians.empty() ? 0 : r_.baseline.repetition_medians.back(); }

 private:
  // Times single events with and without the tracer to pick the batch size,
  // and records the first (cold) event of each variant apart.
  Status pilot() {
    constexpr int kPilot = 64;
    const std::uint64_t unit = std::max<std::uint64_t>(1, workload_->min_batch);
    double cost[2] = {0, 0};
    for (int traced = 0; traced < 2; ++traced) {
      if (traced) TB_TRY(enable());
      std::vector<double> v;
      unsigned aux;
      for (int i = 0; i < kPilot; ++i) {
        std::uint64_t t0 = tsc_begin();
        state_->fire(unit);
        std::uint64_t t1 = tsc_end(&aux);
        v.push_back(std::max(0.0, static_cast<double>(t1 - t0) - m_.floor) / static_cast<double>(unit));
      }
      if (traced) {
        fired_ += kPilot * unit;
        TB_TRY(disable());
        r_.traced.cold_first_event_cycles = v.front();
      } else {
        r_.baseline.cold_first_event_cycles = v.front();
      }
      cost[traced] = summarize(v).p50;
    }
    // Batch so that one sample is well above the floor's own jitter.
    std::uint64_t batch = opt_.batch;
    if (batch == 0) {
      double target = std::max(20.0 * m_.floor, 400.0);
      double per_event = std::max(cost[0], 0.5);
      batch = per_event >= target ? 1 : static_cast<std::uint64_t>(std::ceil(target / per_event));
      batch = std::min<std::uint64_t>(batch, 100000);
      batch = std::max(batch, unit);
    }
    r_.batch = batch;
    // Bound one block to about 50 ms of traced time.
    double block_cycles = 0.05 * m_.tsc_hz;
    double per_sample = std::max(1.0, std::max(cost[0], cost[1]) * static_cast<double>(batch));
    std::uint64_t cap = static_cast<std::uint64_t>(block_cycles / per_sample);
    samples_ = std::max<std::uint64_t>(50, std::min<std::uint64_t>(opt_.samples, cap));
    r_.samples_per_block = samples_;
    return Status::ok();
  }

  Status enable() {
    if (Status s = tracer_->enable(); !s) return Status::error(fmt::format("enable: {}", s.message()));
    enabled_ = true;
    return Status::ok();
  }
  Status disable() {
    enabled_ = false;
    if (Status s = tracer_->disable(); !s) return Status::error(fmt::format("disable: {}", s.message()));
    return Status::ok();
  }

  Status run_block(bool traced, Block* b) {
    b->per_event.resize(samples_);
    b->migrated.resize(samples_);
    std::vector<std::int64_t> c0, c1;
    // Counters are read outside the enabled window: a read(2) of them is an
    // event for tracers of the read syscall.
    m_.counters->read(&c0);
    if (traced) TB_TRY(enable());
    contenders_.run(true);
    const std::uint64_t batch = r_.batch;
    const unsigned cpu = static_cast<unsigned>(m_.measured_cpu);
    WorkloadState* st = state_.get();
    for (std::uint64_t i = 0; i < samples_; ++i) {
      unsigned aux;
      std::uint64_t t0 = tsc_begin();
      st->fire(batch);
      std::uint64_t t1 = tsc_end(&aux);
      b->per_event[i] = static_cast<double>(t1 - t0);
      b->migrated[i] = (aux & 0xfff) != cpu;  // Linux keeps the CPU number in TSC_AUX[11:0]
    }
    contenders_.run(false);
    std::uint64_t helper_events = contenders_.take_fired();
    if (traced) {
      TB_TRY(disable());
      fired_ += samples_ * batch + helper_events;
    }
    m_.counters->read(&c1);
    b->events = samples_ * batch;
    for (double& x : b->per_event) x = (x - m_.floor) / static_cast<double>(batch);
    b->counter_delta.resize(c0.size());
    for (std::size_t k = 0; k < c0.size(); ++k) b->counter_delta[k] = c1[k] - c0[k];
    return Status::ok();
  }

  void absorb(bool traced, int rep, const Block& b) {
    Acc& a = acc_[traced];
    double gap = m_.interrupt_gap_cycles / static_cast<double>(r_.batch);
    std::vector<bool> outlier = flag_disturbed(b.per_event, gap);
    a.rep_values.clear();
    for (std::size_t i = 0; i < b.per_event.size(); ++i) {
      bool bad = outlier[i] || b.migrated[i];
      a.samples++;
      if (bad) {
        a.disturbed++;
        if (b.migrated[i]) a.migrated++;
      } else {
        a.values.push_back(b.per_event[i]);
        a.rep_values.push_back(b.per_event[i]);
      }
      if (opt_.write_samples) {
        csv_.push_back(fmt::format("{},{},{},{},{:.3f},{},{},{}", r_.name, traced ? "traced" : "baseline", rep, i,
                                   b.per_event[i], r_.batch, bad ? 1 : 0, b.migrated[i] ? 1 : 0));
      }
    }
    const auto& empty = m_.counters->empty_block_delta();
    a.counter_sum.resize(b.counter_delta.size(), 0);
    for (std::size_t k = 0; k < b.counter_delta.size(); ++k) {
      a.counter_sum[k] += static_cast<double>(b.counter_delta[k]) - (k < empty.size() ? empty[k] : 0);
    }
    a.events += b.events;
  }

  double rep_median(bool traced) {
    auto v = acc_[traced].rep_values;
    return summarize(std::move(v)).p50;
  }

  void summarize_variant(bool traced) {
    Acc& a = acc_[traced];
    VariantResult& v = traced ? r_.traced : r_.baseline;
    v.samples = a.samples;
    v.disturbed = a.disturbed;
    v.migrated = a.migrated;
    v.cycles = summarize(a.values);
    std::vector<double> ns(a.values);
    double k = 1e9 / m_.tsc_hz;
    for (double& x : ns) x *= k;
    v.ns = summarize(std::move(ns));
    auto names = m_.counters->live_names();
    for (std::size_t i = 0; i < names.size() && i < a.counter_sum.size(); ++i) {
      v.counters_per_event[names[i]] = a.events ? a.counter_sum[i] / static_cast<double>(a.events) : 0;
    }
  }

  struct Acc {
    std::vector<double> values, rep_values;
    std::uint64_t samples = 0, disturbed = 0, migrated = 0, events = 0;
    std::vector<double> counter_sum;
  };

  BenchSpec spec_;
  const RunOptions& opt_;
  Machine m_;
  BenchmarkResult r_;
  const Workload* workload_ = nullptr;
  std::unique_ptr<Tracer> tracer_;
  std::unique_ptr<ActiveTracer> active_;
  std::unique_ptr<WorkloadState> state_;
  Contenders contenders_;
  bool attached_ = false, enabled_ = false, failed_ = false;
  std::uint64_t samples_ = 0, fired_ = 0;
  Acc acc_[2];
  std::vector<double> overhead_;
  std::vector<std::string> csv_;
};

}  // namespace

// ---------------------------------------------------------------------------
// The run.

Status run_benchmarks(const RunOptions& opt, const Plan& plan, RunResult* run, std::string* dir) {
  RunContext& ctx = run->context;
  int cpu = opt.measured_cpu >= 0 ? opt.measured_cpu : default_measured_cpu();
  TB_TRY(pin_current_thread(cpu));
  std::string tracefs;
  if (Status s = ensure_tracefs(&tracefs); !s) {
    std::fprintf(stderr, "tracebench: warning: %s\n", s.message().c_str());
  }
  // Warm-up: keep the measured CPU busy for a while first, so the first
  // benchmark does not pay for a CPU (or vCPU) that was idle and clocked down.
  {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(opt.quick ? 300 : 1000);
    while (std::chrono::steady_clock::now() < until) {
      for (int i = 0; i < 1000; ++i) asm volatile("" ::: "memory");
    }
  }
  SystemInfo sys = probe_system(cpu);
  TscInfo tsc = probe_tsc();
  Counters counters;
  counters.open();
  Machine m;
  m.tsc_hz = tsc.hz;
  m.measured_cpu = cpu;
  m.counters = &counters;
  double floor_mad = 0;
  calibrate_floor(&m.floor, &floor_mad);
  m.interrupt_gap_cycles = 1e-6 * tsc.hz;  // an interrupt costs at least ~1 us

  ctx.date_utc = utc_now_iso8601();
  ctx.host = sys.hostname;
  ctx.cpu_model = sys.cpu_model;
  ctx.cpus = sys.cpus;
  ctx.measured_cpu = cpu;
  ctx.kernel_release = sys.kernel_release;
  ctx.kernel_version = sys.kernel_version;
  ctx.kernel_config_hash = sys.kernel_config_hash;
  ctx.kernel_config_source = sys.kernel_config_source;
  ctx.clocksource = sys.clocksource;
  ctx.virtualized = sys.virtualized;
  ctx.hypervisor = sys.hypervisor;
  ctx.execution = opt.execution;
  ctx.emulated = opt.execution.find("tcg") != std::string::npos;
  ctx.tsc_hz = tsc.hz;
  ctx.tsc_calibrated_hz = tsc.calibrated_hz;
  ctx.tsc_source = tsc.source;
  ctx.tsc_invariant = tsc.invariant;
  ctx.floor_cycles = m.floor;
  ctx.floor_mad_cycles = floor_mad;
  ctx.counter_read_cycles = counters.read_cost_cycles();
  for (const auto& c : counters.info()) ctx.counters.push_back({c.name, c.source, c.live, c.unavailable_reason});
  ctx.noise_warnings = sys.noise_warnings;
  if (std::fabs(tsc.calibrated_hz - tsc.hz) > 0.01 * tsc.hz) {
    ctx.noise_warnings.push_back(fmt::format("TSC frequency from {} ({:.0f} Hz) and calibration ({:.0f} Hz) differ by >1%",
                                             tsc.source, tsc.hz, tsc.calibrated_hz));
  }
  ctx.tracebench_version = kVersion;
  ctx.git_sha = kGitSha;
  ctx.build_type = kBuildType;
  ctx.compiler = kCompiler;
  ctx.library_versions = library_versions();
  ctx.library_versions["papi"] = counters.papi_version();
  std::set<std::string> tracer_names;
  for (const auto& spec : plan.specs) tracer_names.insert(spec.tracer);
  for (const auto& name : tracer_names) {
    if (auto t = make_tracer(name)) {
      for (const auto& [k, v] : t->versions()) ctx.library_versions[k] = v;
    }
  }
  ctx.command_line = opt.command_line;
  ctx.run_id = make_run_id(ctx);

  std::vector<std::string> samples_csv;
  std::vector<std::unique_ptr<BenchRun>> runs;
  std::size_t index = 0;
  for (const auto& spec : plan.specs) {
    auto br = std::make_unique<BenchRun>(spec, opt, m);
    BenchRun* raw = br.get();
    runs.push_back(std::move(br));
    std::size_t my_index = ++index;
    std::size_t total = plan.specs.size();
    auto calls = std::make_shared<int>(0);
    int reps = opt.repetitions;
    benchmark::RegisterBenchmark(spec.name().c_str(), [raw, calls, reps, my_index, total, tsc_hz = m.tsc_hz, &samples_csv](benchmark::State& state) {
      int rep = (*calls)++;
      if (rep == 0 && !g_stop_requested) {
        std::fprintf(stderr, "[%zu/%zu] %s\n", my_index, total, raw->result().name.c_str());
        if (Status s = raw->setup(); !s) raw->fail(s.message());
      }
      if (g_stop_requested && !raw->failed()) raw->fail("interrupted");
      // Every repetition runs its one iteration, even a failed one: Google
      // Benchmark requires equal iteration counts across repetitions.
      for (auto _ : state) {
        if (raw->failed()) {
          state.SkipWithError(raw->result().error.c_str());
          break;
        }
        if (Status s = raw->repetition(rep); !s) {
          raw->fail(s.message());
          state.SkipWithError(raw->result().error.c_str());
          break;
        }
        // Google Benchmark's time column: traced cost per event.
        state.SetIterationTime(std::max(raw->last_traced(), 0.0) / tsc_hz);
      }
      if (!raw->failed()) {
        state.counters["base_cyc"] = raw->last_baseline();
        state.counters["traced_cyc"] = raw->last_traced();
        state.counters["overhead_cyc"] = raw->last_overhead();
        state.counters["batch"] = static_cast<double>(raw->result().batch);
      }
      if (rep == reps - 1) {
        raw->finish(&samples_csv);
        raw->teardown();
      }
    })
        ->Iterations(1)
        ->Repetitions(reps)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
  }

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
  benchmark::RunSpecifiedBenchmarks();
  benchmark::ClearRegisteredBenchmarks();
  if (const CpuTimeSnapshot after = cpu_time_snapshot(); before.ok && after.ok) {
    ctx.foreign_cpu_load = foreign_cpu_load(before, after);
    if (ctx.foreign_cpu_load > kBusyNeighbourCpus)
      ctx.noise_warnings.push_back(fmt::format(
          "other processes kept {:.2f} of {} CPUs busy while this run measured (tracer daemons included): "
          "they slow the measured CPU too; compare runs made on a quiet machine",
          ctx.foreign_cpu_load, ctx.cpus));
  }

  for (auto& br : runs) {
    br->teardown();  // filtered out by --benchmark_filter, or interrupted
    BenchmarkResult& r = br->result();
    if (r.baseline.samples == 0 && r.status == "ok") continue;  // filtered out by --benchmark_filter
    run->benchmarks.push_back(r);
  }
  counters.close();

  std::string base = opt.out_base.empty() ? "results" : opt.out_base;
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  // Two runs that start in the same second get distinct directories.
  const std::string first_id = ctx.run_id;
  for (int k = 1; std::filesystem::exists(base + "/" + ctx.run_id); ++k) {
    ctx.run_id = fmt::format("{}-{}", first_id, k);
  }
  *dir = base + "/" + ctx.run_id;
  TB_TRY(write_run(*dir, *run));
  if (opt.write_samples) {
    std::string csv = "benchmark,variant,repetition,sample,cycles_per_event,batch,disturbed,migrated\n";
    for (const auto& line : samples_csv) csv += line + "\n";
    TB_TRY(write_file_atomic(*dir + "/samples.csv", csv));
  }
  if (g_stop_requested) return Status::error("interrupted");
  return Status::ok();
}

std::string summary_table(const RunResult& run) {
  std::string out = fmt::format("{:<52} {:>12} {:>12} {:>12} {:>20} {:>10} {:>8}\n", "benchmark", "base ns", "traced ns",
                                "overhead ns", "95% CI (ns)", "events", "verify");
  for (const auto& b : run.benchmarks) {
    if (b.status != "ok") {
      out += fmt::format("{:<52} {}: {}\n", b.name, b.status, b.error);
      continue;
    }
    std::string ci = b.overhead_ns ? fmt::format("[{:.1f}, {:.1f}]", b.overhead_ns->low, b.overhead_ns->high) : "-";
    out += fmt::format("{:<52} {:>12.1f} {:>12.1f} {:>12.1f} {:>20} {:>10} {:>8}\n", b.name, b.baseline.ns.p50,
                       b.traced.ns.p50, b.overhead_ns ? b.overhead_ns->median : 0.0, ci, b.events.fired,
                       b.events.verification == "not_applicable" ? "-" : b.events.verification);
    // A tracer that drops or discards takes a cheaper path for those events,
    // so the figure is no longer the cost of recording one.
    if (b.events.fired && b.events.lost * 20 > b.events.fired)
      out += fmt::format("  ^ {:.0f}% of the events were lost (dropped or discarded): the overhead mixes recording and "
                         "dropping; give the tracer bigger buffers (its README)\n",
                         100.0 * static_cast<double>(b.events.lost) / static_cast<double>(b.events.fired));
  }
  return out;
}

}  // namespace tracebench
