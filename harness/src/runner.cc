#include "tracebench/runner.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "tracebench/workload.h"
#include "tracebench/clock.h"
#include "tracebench/clock_check.h"
#include "tracebench/counters.h"
#include "tracebench/interrupts.h"
#include "tracebench/gbench.h"
#include "tracebench/sample_book.h"
#include "tracebench/stats.h"
#include "tracebench/system.h"
#include "tracebench/util.h"
#include "tracebench/verification.h"
#include "tracebench/version.h"
#include "tracebench/tracer.h"

namespace tracebench {

std::atomic<bool> g_stop_requested{false};

// ---------------------------------------------------------------------------
// Emergency teardown: the tracers attached right now.

namespace {
// Held while anyone tears a tracer down: the run's own teardown and the
// watcher's emergency teardown never run at once on one tracer (they did:
// a slow eBPF teardown crashed in bpf_link__destroy when the watcher joined in).
std::recursive_mutex g_active_mu;
std::set<Tracer*>& active_tracers() {
  static std::set<Tracer*> s;
  return s;
}
std::atomic<std::uint64_t> g_progress{0};
}  // namespace

ActiveTracer::ActiveTracer(Tracer* t) : tracer_(t) {
  std::lock_guard<std::recursive_mutex> lock(g_active_mu);
  active_tracers().insert(t);
}

ActiveTracer::~ActiveTracer() {
  std::lock_guard<std::recursive_mutex> lock(g_active_mu);
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
    std::fprintf(stderr, "tracebench: tore down %zu tracer(s), exiting\n", teardown_active_tracers());
    _exit(130);
  }).detach();
  // An exception nobody catches (a library's, a bug of ours) must not leave
  // instances, probes or links behind either.
  std::set_terminate([] {
    std::string what = "unknown";
    if (auto e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        what = x.what();
      } catch (...) {
      }
    }
    std::fprintf(stderr, "tracebench: uncaught exception (%s); tearing down\n", what.c_str());
    std::fprintf(stderr, "tracebench: tore down %zu tracer(s); the results of finished benchmarks are kept\n",
                 teardown_active_tracers());
    _exit(70);  // EX_SOFTWARE
  });
}

std::size_t teardown_active_tracers() {
  // The run may be tearing a tracer down right now: wait for it (up to 20 s;
  // a teardown stuck in the kernel longer than that is left to `cleanup`).
  std::unique_lock<std::recursive_mutex> lock(g_active_mu, std::try_to_lock);
  for (int i = 0; i < 2000 && !lock.owns_lock(); ++i) {
    timespec ts{0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
    lock.try_lock();
  }
  if (!lock.owns_lock()) return 0;
  std::size_t n = active_tracers().size();
  for (Tracer* t : active_tracers()) t->teardown();
  return n;
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
  if (!opt.payloads.empty() && !opt.workloads.empty()) {
    bool any = false;
    for (const auto& name : opt.workloads) any |= find_workload(name)->takes_payload;
    if (!any)
      return Status::error(fmt::format("--payload: none of the selected workloads ({}) takes a payload (see "
                                       "`tracebench list`: [payload])",
                                       fmt::join(opt.workloads, ", ")));
  }
  std::set<std::string> unavailable_workloads;
  for (const auto& w : workload_registry()) {
    if (!selected(opt.workloads, w.name) || !w.available) continue;
    if (Availability a = w.available(); !a.ok) {
      unavailable_workloads.insert(w.name);
      plan->skipped.emplace_back("workload " + w.name, a.reason);
    }
  }
  std::set<std::string> actions_used;
  std::vector<std::string> refused;  // specs a tracer's validate() rejects
  std::map<std::string, std::vector<std::string>> supported_actions;
  for (const auto& entry : tracer_registry()) {
    if (!selected(opt.tracers, entry.name)) continue;
    auto tracer = entry.make();
    // The tracer's options, against its schema, before anything else.
    if (auto it = opt.options.find(entry.name); it != opt.options.end()) {
      OptionValues parsed;
      TB_TRY(parse_options(entry.name, tracer->option_schema(), it->second, &parsed));
    }
    Availability av = tracer->available();
    if (!av.ok) {
      plan->skipped.emplace_back(entry.name, av.reason);
      continue;
    }
    std::vector<std::string> actions = opt.actions;
    std::vector<std::string> supported = tracer->actions();
    supported_actions[entry.name] = supported;
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
    std::size_t before = plan->specs.size();
    for (const auto& w : workload_registry()) {
      if (!selected(opt.workloads, w.name) || unavailable_workloads.count(w.name)) continue;
      if (!tracer->supports(w.probe)) continue;
      std::vector<std::size_t> payloads = !w.takes_payload            ? std::vector<std::size_t>{0}
                                          : w.fixed_payloads.empty() ? sweep
                                          : opt.payloads.empty()     ? w.fixed_payloads
                                                                     : opt.payloads;
      for (const auto& action : actions) {
        if (!tracer->supports_action(w.probe, action)) continue;
        for (std::size_t p : payloads) {
          // A payload the tracer cannot carry whole: left out of the default
          // sweep (and said), refused when the user asked for it.
          if (std::size_t max = tracer->max_payload_bytes(w.probe, action); p > max) {
            std::string why = fmt::format("{} carries at most {} bytes per event at {} on this kernel", entry.name,
                                          max, w.probe.name);
            std::string name = fmt::format("{}/{}/{}/payload:{}", entry.name, w.name, action, p);
            if (opt.payloads.empty())
              plan->skipped.emplace_back(name, why);
            else
              refused.push_back(fmt::format("{}: {}", name, why));
            continue;
          }
          if (!w.fixed_payloads.empty() &&
              std::find(w.fixed_payloads.begin(), w.fixed_payloads.end(), p) == w.fixed_payloads.end()) {
            refused.push_back(fmt::format("{}/{}/{}/payload:{}: {} carries exactly {} bytes", entry.name, w.name,
                                          action, p, w.name, fmt::join(w.fixed_payloads, " or ")));
            continue;
          }
          AttachSpec as;
          as.probe = w.probe;
          as.action = action;
          as.payload_bytes = p;
          if (auto it = opt.options.find(entry.name); it != opt.options.end()) as.options = it->second;
          BenchSpec spec{entry.name, w.name, action, p, 1};
          if (Status s = tracer->validate(as); !s) {
            refused.push_back(fmt::format("{}: {}", spec.name(), s.message()));
            continue;
          }
          actions_used.insert(action);
          for (int t : opt.threads) plan->specs.push_back(BenchSpec{entry.name, w.name, action, p, t});
        }
      }
    }
    // Named together, a tracer and workloads it cannot trace are a mistake.
    if (plan->specs.size() == before && !opt.tracers.empty() && !opt.workloads.empty() && refused.empty()) {
      std::vector<std::string> can;
      for (const auto& w : workload_registry()) {
        if (tracer->supports(w.probe)) can.push_back(w.name);
      }
      return Status::error(fmt::format("tracer {} supports none of the selected workloads ({}); it traces: {}",
                                       entry.name, fmt::join(opt.workloads, ", "), fmt::join(can, ", ")));
    }
  }
  if (!refused.empty()) {
    std::sort(refused.begin(), refused.end());
    return Status::error(fmt::format("{} planned benchmark(s) refused before anything ran:\n  {}", refused.size(),
                                     fmt::join(refused, "\n  ")));
  }
  // An action no selected tracer has is an error, even beside known ones.
  for (const auto& a : opt.actions) {
    if (actions_used.count(a)) continue;
    std::string has;
    for (const auto& [t, acts] : supported_actions) has += fmt::format("\n  {}: {}", t, fmt::join(acts, ", "));
    return Status::error(fmt::format("--action {}: no selected tracer runs it on the selected workloads; actions:{}",
                                     a, has));
  }
  // Options for a tracer that is not in the run would be silently unused.
  std::set<std::string> planned;
  for (const auto& s : plan->specs) planned.insert(s.tracer);
  for (const auto& [t, kv] : opt.options) {
    if (!planned.count(t))
      return Status::error(fmt::format("--option {}.{}: tracer {} is not in this run (running: {})", t,
                                       kv.begin()->first, t, fmt::join(planned, ", ")));
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
  ClockPlan clock;                  // how regions are read, migrations detected, the floor
  double interrupt_gap_cycles = 0;  // a sample this much above the median was hit
  int measured_cpu = 0;
  Counters* counters = nullptr;
};

// Times `n` samples of `batch` events each, the way the clock plan says:
// raw cycles per sample (floor not subtracted) and whether it migrated.
template <EndRead E, bool kGetcpu>
void time_samples(WorkloadState* st, std::uint64_t batch, std::uint64_t n, const ClockPlan& clk, int cpu,
                  double* cycles, std::uint8_t* migrated) {
  for (std::uint64_t i = 0; i < n; ++i) {
    int before = kGetcpu ? sched_getcpu() : cpu;
    unsigned aux;
    std::uint64_t t0 = tsc_begin();
    st->fire(batch);
    std::uint64_t t1 = tsc_end_as<E>(&aux);
    int after = kGetcpu ? sched_getcpu() : cpu;
    cycles[i] = static_cast<double>(t1 - t0);
    migrated[i] = sample_migrated(clk.migration, clk.expected_aux, cpu, aux, before, after);
  }
}

void time_block(WorkloadState* st, std::uint64_t batch, std::uint64_t n, const Machine& m, double* cycles,
                std::uint8_t* migrated) {
  const ClockPlan& c = m.clock;
  bool getcpu = c.migration == MigrationMethod::kGetcpu;
  if (c.end_read == EndRead::kLfenceRdtsc)
    time_samples<EndRead::kLfenceRdtsc, true>(st, batch, n, c, m.measured_cpu, cycles, migrated);
  else if (getcpu)
    time_samples<EndRead::kRdtscp, true>(st, batch, n, c, m.measured_cpu, cycles, migrated);
  else
    time_samples<EndRead::kRdtscp, false>(st, batch, n, c, m.measured_cpu, cycles, migrated);
}

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
    ++g_progress;  // attaching can take seconds: the watcher must not take it for a hang
    return pilot();
  }

  // One repetition: a baseline block and a traced block, order alternating.
  Status repetition(int rep) {
    bool traced_first = rep % 2 == 1;
    for (int k = 0; k < 2; ++k) {
      bool traced = (k == 0) == traced_first;
      if (g_stop_requested) return Status::error("interrupted");
      TimedBlock b;
      TB_TRY(run_block(traced, &b));
      book_->add_block(traced, rep, b);
      ++g_progress;
    }
    book_->end_repetition();
    return Status::ok();
  }

  void finish() {
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
    // What a tracer says weakens its figure (e.g. a consumer on the measured CPU).
    if (r_.tracer_details.contains("warnings") && r_.tracer_details["warnings"].is_array()) {
      for (const auto& w : r_.tracer_details["warnings"])
        if (w.is_string()) r_.warnings.push_back(w.get<std::string>());
    }
    record_interrupts();
    std::string no_figure = book_->finish(m_.clock.tsc_hz, m_.counters->live_names(), &r_);
    if (Verification v = verify_events(c, fired_, spec_.payload_bytes, workload_->takes_payload, &r_.events);
        v.failed()) {
      fail(v.reason);
      return;
    }
    if (!no_figure.empty()) fail(no_figure);
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
    std::lock_guard<std::recursive_mutex> exclusive(g_active_mu);  // never beside the watcher's teardown
    ++g_progress;
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
  bool started() const { return book_ != nullptr; }
  BenchmarkResult& result() { return r_; }
  const SampleBook* book() const { return book_.get(); }

 private:
  // Times events with and without the tracer to pick the batch size, and
  // records the first (cold) event of each variant apart.  The per-event
  // estimate itself is taken over samples long enough for the clock (a
  // single cheap event on a TSC that ticks in steps of 21 cycles reads as 0
  // or 21): the pilot's batch grows until a sample spans the clock plan's
  // minimum.
  Status pilot() {
    const std::uint64_t unit = std::max<std::uint64_t>(1, workload_->min_batch);
    const double floor = m_.clock.floor_cycles;
    double cost[2] = {0, 0};
    for (int traced = 0; traced < 2; ++traced) {
      if (traced) TB_TRY(enable());
      double raw0 = 0;
      std::uint8_t mig0 = 0;
      time_block(state_.get(), unit, 1, m_, &raw0, &mig0);
      std::uint64_t fired = unit;
      (traced ? r_.traced : r_.baseline).cold_first_event_cycles = std::max(0.0, raw0 - floor) / static_cast<double>(unit);
      Status s = estimate_cost(unit, &cost[traced], &fired);
      if (traced) {
        fired_ += fired;
        TB_TRY(disable());
      }
      TB_TRY(s);
    }
    r_.batch = choose_batch(cost[0], m_.clock.min_sample_cycles, unit, opt_.batch);
    // Bound one block to about 50 ms of traced time.
    double block_cycles = 0.05 * m_.clock.tsc_hz;
    // The batch is one for both variants and picked for the cheaper baseline;
    // where tracing costs thousands of times more (a uprobe on a 3-cycle
    // call), it is capped so that 50 traced samples still fit in a block.
    // The baseline's samples are then shorter than the clock plan's span:
    // its figure is resolved to a TSC step / batch per event, said in the
    // result, and negligible beside such an overhead.
    if (opt_.batch == 0 && cost[1] > 0) {
      std::uint64_t cap = static_cast<std::uint64_t>(block_cycles / (50.0 * std::max(cost[0], cost[1])));
      cap = std::max(unit, cap - cap % unit);
      if (r_.batch > cap) {
        r_.batch = cap;
        r_.warnings.push_back(fmt::format(
            "batch capped at {} events so a traced block stays near 50 ms: a baseline sample spans ~{:.0f} cycles, "
            "less than the clock's {:.0f}, so the baseline is resolved to ~{:.2f} cycles per event",
            cap, cost[0] * static_cast<double>(cap), m_.clock.min_sample_cycles,
            static_cast<double>(m_.clock.step_cycles) / static_cast<double>(cap)));
      }
    }
    double per_sample = std::max(1.0, std::max(cost[0], cost[1]) * static_cast<double>(r_.batch));
    std::uint64_t cap = static_cast<std::uint64_t>(block_cycles / per_sample);
    samples_ = std::min<std::uint64_t>(opt_.samples, std::max<std::uint64_t>(50, cap));  // never above --samples
    r_.samples_per_block = samples_;
    book_ = std::make_unique<SampleBook>(m_.interrupt_gap_cycles, r_.batch, m_.counters->empty_block_delta(),
                                         opt_.write_samples);
    return Status::ok();
  }

  // Median cost per event (floor subtracted) over 16 samples of a batch that
  // spans the clock plan's minimum; adds the events it fired to `fired`.
  Status estimate_cost(std::uint64_t unit, double* cost, std::uint64_t* fired) {
    constexpr int kPilot = 16;
    constexpr std::uint64_t kMaxBatch = 100000;
    double raw[kPilot];
    std::uint8_t migrated[kPilot];
    std::uint64_t b = unit;
    for (;;) {
      time_block(state_.get(), b, kPilot, m_, raw, migrated);
      *fired += kPilot * b;
      std::vector<double> v;
      for (int i = 0; i < kPilot; ++i) {
        if (!migrated[i]) v.push_back(raw[i]);
      }
      if (v.empty())
        return Status::error(fmt::format("every pilot sample migrated CPU (detected by {})", to_string(m_.clock.migration)));
      double med = summarize(std::move(v)).p50;
      *cost = std::max(0.0, med - m_.clock.floor_cycles) / static_cast<double>(b);
      if (med >= m_.clock.min_sample_cycles || b >= kMaxBatch) return Status::ok();
      double grow = std::ceil(m_.clock.min_sample_cycles / std::max(med, 1.0));
      std::uint64_t next = std::min<std::uint64_t>(kMaxBatch, b * static_cast<std::uint64_t>(std::max(2.0, grow)));
      b = std::max(unit, next - next % unit);
    }
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

  // What the traced blocks cost beside the measured CPU's instructions: the
  // interrupts they added per event (on a VM each is an exit to the
  // hypervisor).  Said as a warning from 0.05 per event on.
  void record_interrupts() {
    std::vector<std::string> notable;
    for (const auto& [kind, per_cpu] : interrupts_.extra_per_event()) {
      auto d = interrupts_.descriptions().find(kind);
      const std::string desc = d == interrupts_.descriptions().end() ? "" : d->second;
      nlohmann::json cpus = nlohmann::json::object();
      for (const auto& [cpu, x] : per_cpu) {
        cpus[std::to_string(cpu)] = std::round(x * 1e4) / 1e4;
        if (x >= 0.05) notable.push_back(fmt::format("{} ({}) {:+.2f} on CPU {}", kind, desc, x, cpu));
      }
      r_.interrupts_per_event[kind] = {{"description", desc}, {"extra_per_event", cpus}};
    }
    if (!notable.empty())
      r_.warnings.push_back(fmt::format(
          "traced blocks took more interrupts per event than untraced ones: {}; the figure includes them (on a "
          "VM each is an exit to the hypervisor), e.g. a tracer waking its consumer on another CPU",
          fmt::join(notable, ", ")));
  }

  Status run_block(bool traced, TimedBlock* b) {
    b->per_event.resize(samples_);
    b->migrated.resize(samples_);
    std::vector<std::int64_t> c0, c1;
    // Counters are read outside the enabled window: a read(2) of them is an
    // event for tracers of the read syscall.
    m_.counters->read(&c0);
    InterruptSnapshot i0 = read_interrupts();
    if (traced) TB_TRY(enable());
    contenders_.run(true);
    const std::uint64_t batch = r_.batch;
    time_block(state_.get(), batch, samples_, m_, b->per_event.data(), b->migrated.data());
    contenders_.run(false);
    std::uint64_t helper_events = contenders_.take_fired();
    if (traced) {
      TB_TRY(disable());
      fired_ += samples_ * batch + helper_events;
    }
    InterruptSnapshot i1 = read_interrupts();
    m_.counters->read(&c1);
    interrupts_.add(i0, i1, traced, samples_ * batch + helper_events);
    b->events = samples_ * batch;
    for (double& x : b->per_event) x = (x - m_.clock.floor_cycles) / static_cast<double>(batch);
    b->counter_delta.resize(c0.size());
    for (std::size_t k = 0; k < c0.size(); ++k) b->counter_delta[k] = c1[k] - c0[k];
    return Status::ok();
  }

  BenchSpec spec_;
  const RunOptions& opt_;
  const Machine& m_;
  BenchmarkResult r_;
  const Workload* workload_ = nullptr;
  std::unique_ptr<Tracer> tracer_;
  std::unique_ptr<ActiveTracer> active_;
  std::unique_ptr<WorkloadState> state_;
  Contenders contenders_;
  bool attached_ = false, enabled_ = false, failed_ = false;
  std::uint64_t samples_ = 0, fired_ = 0;
  std::unique_ptr<SampleBook> book_;
  InterruptTally interrupts_;
};

// The run's files as benchmarks finish: result.json rewritten atomically
// with every benchmark so far (context.complete false until close()), and
// samples.csv appended per benchmark.
class Journal {
 public:
  Journal(std::string dir, bool samples, RunResult* run) : dir_(std::move(dir)), run_(run) {
    if (samples) {
      samples_ = std::fopen((dir_ + "/samples.csv").c_str(), "w");
      if (samples_) std::fputs("benchmark,variant,repetition,sample,cycles_per_event,batch,disturbed,migrated\n", samples_);
    }
  }
  ~Journal() {
    if (samples_) std::fclose(samples_);
  }
  bool has(const std::string& name) const { return names_.count(name) > 0; }
  // Adds a finished benchmark and commits it to disk.
  void add(const BenchmarkResult& r, const SampleBook* book) {
    names_.insert(r.name);
    run_->benchmarks.push_back(r);
    if (samples_ && book) {
      for (const auto& s : book->rows()) {
        std::fprintf(samples_, "%s,%s,%d,%u,%.3f,%llu,%d,%d\n", r.name.c_str(), s.traced ? "traced" : "baseline",
                     s.repetition, s.index, s.cycles_per_event, static_cast<unsigned long long>(r.batch),
                     s.excluded ? 1 : 0, s.migrated ? 1 : 0);
      }
      std::fflush(samples_);
    }
    if (Status s = write_run(dir_, *run_); !s) error_ = s;
  }
  Status close() {
    if (samples_ && std::fclose(samples_) != 0) error_ = Status::error("write " + dir_ + "/samples.csv");
    samples_ = nullptr;
    if (!error_) return error_;
    return write_run(dir_, *run_);  // the final one, with context.complete
  }

 private:
  std::string dir_;
  RunResult* run_;
  std::FILE* samples_ = nullptr;
  std::set<std::string> names_;
  Status error_ = Status::ok();
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
  // The clock self-check: how regions end, how migrations are detected, the
  // TSC's rate and step, the floor.  A failed check stops the run here,
  // before anything is attached or written.
  ClockFacts facts = observe_clock(cpu);
  Machine m;
  m.clock = decide_clock(facts);
  if (!m.clock.ok()) return Status::error("clock self-check failed (see `tracebench env`):\n" + m.clock.failures());
  Counters counters;
  counters.open();
  m.measured_cpu = cpu;
  m.counters = &counters;
  m.interrupt_gap_cycles = 1e-6 * m.clock.tsc_hz;  // an interrupt costs at least ~1 us

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
  TB_TRY(check_execution(opt.execution, sys.hypervisor == "unknown" ? "" : sys.hypervisor, &ctx.execution));
  ctx.emulated = ctx.execution == "qemu-tcg";
  ctx.tsc_hz = m.clock.tsc_hz;
  ctx.tsc_calibrated_hz = facts.calibrated_hz;
  ctx.tsc_source = m.clock.tsc_source;
  ctx.tsc_invariant = (facts.flag_constant_tsc && facts.flag_nonstop_tsc) || facts.cpuid_invariant_tsc;
  ctx.floor_cycles = m.clock.floor_cycles;
  ctx.floor_mad_cycles = m.clock.floor_mad_cycles;
  ctx.clock = clock_json(facts, m.clock);
  ctx.counter_read_cycles = counters.read_cost_cycles();
  for (const auto& c : counters.info()) ctx.counters.push_back({c.name, c.source, c.live, c.unavailable_reason});
  ctx.noise_warnings = sys.noise_warnings;
  for (const auto& c : m.clock.checks) {
    if (c.verdict == "warn") ctx.noise_warnings.push_back(fmt::format("clock {}: {} ({})", c.name, c.reason, c.value));
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

  // The run's directory exists from the start and result.json is rewritten
  // (atomically) as each benchmark finishes, marked incomplete until the
  // end: a killed or failed run keeps what it measured and says so.
  std::string base = opt.out_base.empty() ? "results" : opt.out_base;
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  // Two runs that start in the same second get distinct directories.
  const std::string first_id = ctx.run_id;
  for (int k = 1; std::filesystem::exists(base + "/" + ctx.run_id); ++k) {
    ctx.run_id = fmt::format("{}-{}", first_id, k);
  }
  *dir = base + "/" + ctx.run_id;
  ctx.complete = false;
  TB_TRY(write_run(*dir, *run));
  Journal journal(*dir, opt.write_samples, run);

  // Google Benchmark calls each benchmark once per repetition, all
  // repetitions of one benchmark before the next (no flag that changes that
  // is accepted: gbench.h).  The calls are still checked: a call for another
  // benchmark while one is open, or more calls than repetitions, fails the
  // benchmark instead of mixing its blocks.
  std::vector<std::unique_ptr<BenchRun>> runs;
  auto open = std::make_shared<BenchRun*>(nullptr);
  std::size_t index = 0;
  for (const auto& spec : plan.specs) {
    auto br = std::make_unique<BenchRun>(spec, opt, m);
    BenchRun* raw = br.get();
    runs.push_back(std::move(br));
    std::size_t my_index = ++index;
    std::size_t total = plan.specs.size();
    auto calls = std::make_shared<int>(0);
    int reps = opt.repetitions;
    benchmark::RegisterBenchmark(spec.name().c_str(), [raw, calls, open, reps, my_index, total, journal = &journal,
                                                        tsc_hz = m.clock.tsc_hz](benchmark::State& state) {
      int rep = (*calls)++;
      if (*open != nullptr && *open != raw) {
        (*open)->fail("Google Benchmark called another benchmark before this one's repetitions were done");
        *open = nullptr;
      }
      if (rep >= reps && !raw->failed()) raw->fail("Google Benchmark called this benchmark more often than its repetitions");
      if (rep == 0 && !g_stop_requested) {
        std::fprintf(stderr, "[%zu/%zu] %s\n", my_index, total, raw->result().name.c_str());
        *open = raw;
        if (Status s = raw->setup(); !s) raw->fail(s.message());
      }
      if (g_stop_requested && !raw->failed()) raw->fail("interrupted");
      // Every repetition runs its one iteration, even a failed one: Google
      // Benchmark requires equal iteration counts across repetitions.
      double base = 0, traced = 0;
      bool counted = false;
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
        // Google Benchmark's time column: traced cost per event (0 for a
        // repetition whose blocks lost too many samples; the result file
        // and summary never show such a figure).
        counted = raw->book()->last(&base, &traced);
        state.SetIterationTime(counted ? std::max(traced, 0.0) / tsc_hz : 0.0);
      }
      if (!raw->failed() && counted) {
        state.counters["base_cyc"] = base;
        state.counters["traced_cyc"] = traced;
        state.counters["overhead_cyc"] = traced - base;
        state.counters["batch"] = static_cast<double>(raw->result().batch);
      }
      if (rep == reps - 1) {
        raw->finish();
        raw->teardown();
        if (*open == raw) *open = nullptr;
        journal->add(raw->result(), raw->book());
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
  auto display = make_display_reporter(opt.gbench_args);
  benchmark::RunSpecifiedBenchmarks(display.get());
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
    if (!br->started() && r.status == "ok") continue;  // filtered out by --benchmark_filter
    if (br->started() && r.status == "ok" && !r.overhead_cycles)  // interrupted between calls
      br->fail("interrupted before its repetitions were done");
    if (!journal.has(r.name)) journal.add(r, br->book());
  }
  counters.close();
  ctx.complete = !g_stop_requested;
  TB_TRY(journal.close());
  if (g_stop_requested) return Status::error("interrupted");
  return Status::ok();
}

std::string summary_table(const RunResult& run) {
  std::string out = fmt::format("{:<52} {:>12} {:>12} {:>12} {:>20} {:>10} {:>8}\n", "benchmark", "base ns", "traced ns",
                                "overhead ns", "95% CI (ns)", "events", "verify");
  for (const auto& b : run.benchmarks) {
    // Only a benchmark that kept valid samples in both variants has figures;
    // anything else prints its reason, never a number.
    bool measured = b.status == "ok" && b.overhead_ns && b.baseline.ns.n > 0 && b.traced.ns.n > 0;
    if (!measured) {
      out += fmt::format("{:<52} {}: {}\n", b.name, b.status == "ok" ? "error" : b.status,
                         b.error.empty() ? "no valid sample" : b.error);
      continue;
    }
    std::string ci = fmt::format("[{:.1f}, {:.1f}]", b.overhead_ns->low, b.overhead_ns->high);
    out += fmt::format("{:<52} {:>12.1f} {:>12.1f} {:>12.1f} {:>20} {:>10} {:>8}\n", b.name, b.baseline.ns.p50,
                       b.traced.ns.p50, b.overhead_ns->median, ci, b.events.fired,
                       b.events.verification == "not_applicable" ? "-" : b.events.verification);
    for (const auto& w : b.warnings) out += fmt::format("  ^ {}\n", w);
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
