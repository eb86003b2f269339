// `tracebench model validate`: the paced run behind the Table 7 analog.  The
// workload fires at a steady rate (1 ms periods, clock_nanosleep to absolute
// deadlines) on the measured CPU, in eight segments (untraced, traced, traced,
// untraced, twice: drift cancels; the tracer attached throughout, enabled in
// the traced ones); per
// segment the firing thread's CPU time, the consumer's (its tasks, and its
// reads on this thread inside disable()), and the machine's busy time from
// /proc/stat.  The tracer's counts are judged like a benchmark's before any
// figure is printed; the arithmetic is validate.cc.
#include "validate_command.h"

#include "harness/model/model_reporters.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "tracebench/handler_count.h"
#include "tracebench/host_simulation.h"
#include "tracebench/cli_range.h"
#include "tracebench/clock.h"
#include "tracebench/consumer_catch_up.h"
#include "tracebench/lock_flags.h"
#include "tracebench/machine_lock.h"
#include "tracebench/probe_site.h"
#include "tracebench/model.h"
#include "tracebench/options.h"
#include "tracebench/run_request.h"
#include "tracebench/simulated_host.h"
#include "tracebench/runner.h"
#include "tracebench/system.h"
#include "tracebench/task_clock.h"
#include "tracebench/tracer.h"
#include "tracebench/util.h"
#include "tracebench/verification.h"
#include "tracebench/workload.h"

namespace tracebench::model {
namespace {

struct ValidateArgs {
  std::string model, tracer, workload, action = "default", out;
  std::vector<std::string> options;
  long long payload = 0;  // as typed: the request checks its range
  double rate = 50000, seconds = 8;
  double max_lost_percent = 100 * kDefaultMaxLostShare;
  bool quick = false;
  LockFlags lock;
};

// The consumer tasks' CPU time by task at one instant.
using TaskTimes = std::map<std::pair<int, int>, double>;
TaskTimes task_times(const Tracer& t) {
  TaskTimes out;
  for (const auto& task : t.consumer_tasks()) {
    TaskCpu c;
    if (read_task_cpu(task.pid, task.tid, &c)) out[{task.pid, task.tid}] = c.ns;
  }
  return out;
}
// CPU time the tasks used between two snapshots (a task first seen in `b`
// counts whole; one gone from `b` is lost, as its end cannot be read).
double used(const TaskTimes& a, const TaskTimes& b) {
  double sum = 0;
  for (const auto& [k, v] : b) {
    auto it = a.find(k);
    sum += std::max(0.0, v - (it == a.end() ? 0.0 : it->second));
  }
  return sum;
}

Status paced(WorkloadState* st, double rate, double seconds, ValidationSegment* g) {
  constexpr long kPeriodNs = 1000000;
  const auto periods = static_cast<std::uint64_t>(std::llround(seconds * 1e3));
  const CpuTimeSnapshot busy0 = cpu_time_snapshot();
  const double wall0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  timespec deadline{};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  double carry = 0, period_start = wall0;
  for (std::uint64_t k = 0; k < periods; ++k) {
    if (g_stop_requested) return Status::error("interrupted");
    // A period's length, start to start: a stop (SIGSTOP) or a thread kept
    // off the CPU shows as one long period, however the rest catch up.
    const double now = clock_ns(CLOCK_MONOTONIC);
    g->longest_period_ns = std::max(g->longest_period_ns, now - period_start);
    period_start = now;
    carry += rate * 1e-3;
    const auto n = static_cast<std::uint64_t>(carry);
    carry -= static_cast<double>(n);
    st->fire(n);
    g->events += n;
    if (n > 0) ++g->bursts;
    deadline.tv_nsec += kPeriodNs;
    if (deadline.tv_nsec >= 1000000000) {
      deadline.tv_nsec -= 1000000000;
      ++deadline.tv_sec;
    }
    const double late = clock_ns(CLOCK_MONOTONIC) -
                        (static_cast<double>(deadline.tv_sec) * 1e9 + static_cast<double>(deadline.tv_nsec));
    if (late > kPeriodNs) ++g->late_ticks;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {}
  }
  g->ticks = periods;
  g->thread_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  g->wall_ns = clock_ns(CLOCK_MONOTONIC) - wall0;
  g->longest_period_ns = std::max(g->longest_period_ns, wall0 + g->wall_ns - period_start);
  const CpuTimeSnapshot busy1 = cpu_time_snapshot();
  if (busy0.ok && busy1.ok) g->machine_busy_ns = (busy1.machine_busy_s - busy0.machine_busy_s) * 1e9;
  return Status::ok();
}

int validate_refuse(const std::string& why) {
  std::cerr << "tracebench model validate: " << why << "\n";
  return 2;
}

// The model read from --model, refused unless it was fitted on this kernel
// and on the same kind of machine (an emulator's cycles predict nothing on a
// host, nor the other way round).
Status load_model_for_here(const ValidateArgs& a, Model* m) {
  nlohmann::json j;
  TB_TRY(read_json_file(a.model, &j));
  if (Status s = from_json(j, m); !s) return Status::error(a.model + ": " + s.message());
  if (!a.out.empty()) TB_TRY(check_output_not_input("--out", a.out, {a.model}));
  utsname u{};
  uname(&u);
  if (m->kernel_release != u.release)
    return Status::error(fmt::format("the model is of kernel {}, this machine runs {}: fit one here first",
                                     m->kernel_release, u.release));
  std::string here;
  TB_TRY(check_execution("", hypervisor_vendor(), &here));
  if (m->emulated != (here == "qemu-tcg"))
    return Status::error(m->emulated ? "the model was fitted in an emulator; validate it there (tracebench vm -- "
                                       "model validate ...)"
                                     : "the model was fitted on a host and this is an emulator: fit one here first");
  if (const std::string& sim = host_simulation().spec; m->simulated_host != sim)
    return Status::error(fmt::format(
        "the model was fitted on {} and this run is on {}: a simulated host is validated on the same simulation only",
        m->simulated_host.empty() ? "this machine as it is" : "a simulated host (" + m->simulated_host + ")",
        sim.empty() ? "this machine as it is" : "a simulated host (" + sim + ")"));
  return Status::ok();
}

// The scenario the run holds, from the planned request; the model must be
// able to predict it.  The handler count and the extra handlers' predicate
// are terms of the model, not a configuration of its entry.
Status scenario_of(const ValidateArgs& a, const AttachSpec& spec, const Workload& w, const Model& m,
                   ValidationScenario* sc) {
  sc->tracer = a.tracer;
  sc->workload = a.workload;
  sc->probe_kind = std::string(to_string(w.probe.kind));
  sc->action = a.action;
  sc->options = spec.options;
  if (auto it = sc->options.find(kEcbsOption); it != sc->options.end()) {
    sc->handlers = std::max(1, std::atoi(it->second.c_str()));  // the schema checked it
    sc->options.erase(it);
  }
  if (auto it = sc->options.find(kExtraPredicateOption); it != sc->options.end()) {
    sc->predicate_true = it->second == "false" ? 0 : 1;
    sc->options.erase(it);
  }
  sc->payload_bytes = spec.payload_bytes;
  sc->rate_hz = a.rate;
  sc->seconds = a.quick ? 2.0 : a.seconds;
  Scenario nominal;
  nominal.probes.push_back(sc->probe_load(sc->rate_hz));
  Prediction p;
  return predict(m, nominal, &p);
}

// Takes the machine lock, checks that nobody else probes the code fired,
// pins the thread.  Exit status on failure (0: go on).
int prepare_machine(const ValidateArgs& a, const Workload& w, MachineLock* lock) {
  LockRequest req;
  if (Status s = a.lock.request(&req); !s) return validate_refuse(s.message());
  install_signal_watcher();
  if (Status s = lock->acquire(req, "tracebench model validate", &g_stop_requested); !s) {
    std::cerr << s.message() << "\n";
    return g_stop_requested ? 130 : 2;
  }
  std::string unchecked;
  if (Status s = check_probe_point_unshared(w.probe, &unchecked); !s) {
    std::cerr << "tracebench model validate: " << s.message() << "\n";
    return 1;
  }
  if (!unchecked.empty()) std::cerr << "tracebench model validate: warning: " << unchecked << "\n";
  if (Status s = pin_current_thread(default_measured_cpu()); !s) return validate_refuse(s.message());
  return 0;
}

// One paced segment, traced or not: the firing thread's, the consumer's and
// the machine's CPU time.  The consumer tasks' perf task-clock (the
// cross-check of their CPU time) is read in the first and the last traced
// segment; the two between measure the tasks uncounted (what counting costs,
// drift-free).
Status measure_segment(Tracer& t, WorkloadState* st, const ValidationScenario& sc, bool traced, int traced_seen,
                       ValidationSegment* g) {
  g->traced = traced;
  TaskTimes before = task_times(t);
  TaskClocks perf_clock;
  bool perf_ok = false;
  g->task_clock = traced && (traced_seen == 0 || traced_seen == 3);
  if (g->task_clock) {
    std::vector<int> tids;
    for (const auto& task : t.consumer_tasks())
      for (int tid : threads_of(task.pid, task.tid)) tids.push_back(tid);
    perf_ok = !tids.empty() && perf_clock.open(tids).is_ok();
  }
  if (traced)
    if (Status s = t.enable(); !s) return Status::error("enable: " + s.message());
  {
    const SimulatedHostSteal::Window stolen_from;  // a simulated host's steal: in both kinds of segment
    TB_TRY(paced(st, sc.rate_hz, sc.seconds / 8, g));
  }
  if (!traced) return Status::ok();
  const double c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  if (Status s = t.disable(); !s) return Status::error("disable: " + s.message());
  const double caller = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
  g->consumer_tasks_ns = used(before, task_times(t));
  if (perf_ok) {
    g->consumer_tasks_perf_ns = perf_clock.read_ns();
    g->consumer_tasks_switches = perf_clock.read_switches();
  }
  g->consumer_cpu_ns = g->consumer_tasks_ns + (t.reads_on_caller() ? caller : 0);
  return Status::ok();
}

// After the segments: the drain's consumer CPU and what the tracer counted.
Status read_counts(Tracer& t, ValidationMeasured* x, EventCounts* c) {
  TaskTimes before = task_times(t);
  const double c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  if (Status s = t.drain(); !s) return Status::error("drain: " + s.message());
  const double caller = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
  x->drain_consumer_cpu_ns = used(before, task_times(t)) + (t.reads_on_caller() ? caller : 0);
  *c = t.counts();
  // Records a consumer read: none where nothing consumes (counters in a
  // map, read once to verify).
  const bool consumes = !t.consumer_tasks().empty() || t.reads_on_caller();
  x->records = consumes ? c->recorded - std::min(c->recorded, x->first_pass_events) : 0;
  if (c->consumer_wakeups >= 0) x->wakeups = static_cast<std::uint64_t>(c->consumer_wakeups);
  x->wakes_on_timer = c->consumer_wakes_on_timer;
  // A profile probe's events: the firings the tracer saw (judged against
  // its timer's clock).
  if (c->timer_fired) x->timer_firings = c->recorded + c->lost;
  x->seen = c->recorded + c->lost;
  x->lost = c->lost;
  return Status::ok();
}

// The tracer's first passes (Tracer::first_pass_events: LTTng-UST's buffer
// pages, touched for the first time, cost several times the steady state on
// a VM whose page faults are dear), fired enabled before the segments as
// run's warm-up fires them, in blocks its buffer holds with the consumer
// caught up before each: the segments then measure the steady state the
// model was fitted on, not a fresh buffer.  The events count for
// verification.
Status warm_first_passes(Tracer& t, WorkloadState* st, std::uint64_t* fired) {
  const std::uint64_t total = t.first_pass_events();
  const std::uint64_t block = t.block_event_capacity() > 0 ? t.block_event_capacity() : total;
  ConsumerCatchUp catch_up;
  for (std::uint64_t done = 0; done < total;) {
    if (g_stop_requested) return Status::error("interrupted");
    const std::uint64_t n = std::min(block, total - done);
    catch_up.before_traced_block(t);
    if (Status s = t.enable(); !s) return Status::error("enable: " + s.message());
    st->fire(n);
    if (Status s = t.disable(); !s) return Status::error("disable: " + s.message());
    done += n;
    *fired += n;
  }
  if (total > 0) catch_up.before_traced_block(t);  // its records read before the first segment's account
  return Status::ok();
}

// Attach, the first passes, eight paced segments (untraced, traced, traced, untraced, twice:
// drift cancels), drain, judge the counts, tear down.  Exit status (0: the
// tracer recorded what fired, `x` and `events` hold the measurement).
int measure(const ValidateArgs& a, const AttachSpec& spec, const Workload& w, const ValidationScenario& sc, Tracer& t,
            double tsc_hz, ValidationMeasured* x, EventsResult* events) {
  ActiveTracer guard(&t);
  SimulatedHostSteal steal;  // a simulated host (host_simulation.h), as the runner's blocks have it
  std::unique_ptr<WorkloadState> st;
  auto fail = [&](const std::string& why) {
    st.reset();  // the workload's files first: an open trace_marker keeps an instance busy
    t.teardown();
    std::cerr << "tracebench model validate: " << why << "\n";
    return g_stop_requested ? 130 : 1;
  };
  if (Status s = t.attach(spec); !s) return fail("attach: " + s.message());
  WorkloadParams wp;
  wp.payload_bytes = spec.payload_bytes;
  wp.marker_file = t.marker_file();
  if (Status s = w.setup(wp, &st); !s) return fail("workload setup: " + s.message());
  st = with_simulated_syscalls(std::move(st), w.probe.kind, tsc_hz);
  if (Status s = steal.start(); !s) return fail("simulated host: " + s.message());
  st->fire(1000);  // warm: caches, first faults, lazy binding
  std::uint64_t fired_traced = 0;
  if (Status s = warm_first_passes(t, st.get(), &fired_traced); !s) return fail(s.message());
  x->first_pass_events = fired_traced;
  int traced_seen = 0;
  for (bool traced : {false, true, true, false, false, true, true, false}) {
    ValidationSegment g;
    if (Status s = measure_segment(t, st.get(), sc, traced, traced_seen, &g); !s) return fail(s.message());
    traced_seen += traced;
    if (traced) fired_traced += g.events;
    x->segments.push_back(g);
  }
  EventCounts c;
  if (Status s = read_counts(t, x, &c); !s) return fail(s.message());
  Verification verdict = verify_events(c, fired_traced, spec.payload_bytes, w.takes_payload, events,
                                       w.probe.kind == ProbeKind::kProfile, a.max_lost_percent / 100);
  st.reset();
  t.teardown();
  if (verdict.failed()) {
    std::cerr << "tracebench model validate: the tracer did not record what fired, so no figure is given: "
              << verdict.reason << "\n";
    return 1;
  }
  return 0;
}

// The validation file (when --out) and the text; exit 1 when the run did not
// hold its scenario (its file is kept: what happened, for Table 7).
int report(const ValidateArgs& a, const Model& m, const ValidationScenario& sc, const ValidationMeasured& x,
           const EventsResult& events) {
  Validation v;
  ValidationLimits limits;
  limits.max_lost_share = a.max_lost_percent / 100;
  if (Status s = evaluate(m, sc, x, &v, limits); !s) return validate_refuse(s.message());
  if (const HostSimulation& sim = host_simulation(); sim.active())
    v.warnings.push_back(fmt::format(
        "SIMULATED host ({}={}): the figures are of this machine made slower and noisier on purpose, for tests; never "
        "compare them with a real host's",
        kHostSimulationEnv, sim.spec));
  if (events.fired > 0 && events.lost * 100 > events.fired && v.lost_share <= limits.max_lost_share)
    v.warnings.push_back(
        fmt::format("the tracer lost {:.1f}% of the events (its buffer filled): a tracer that drops "
                    "costs less per event than one that records; enlarge its buffer",
                    100.0 * static_cast<double>(events.lost) / static_cast<double>(events.fired)));
  const ValidationReport in{m, sc, x, v, events, utc_now_iso8601()};
  Report json, text;
  for (auto [format, out] : {std::pair{"json", &json}, std::pair{"text", &text}})
    if (Status s = validation_reporters().write(format, in, out); !s) return validate_refuse(s.message());
  if (!a.out.empty()) {
    std::filesystem::path dir = std::filesystem::path(a.out).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (Status s = write_file_atomic(a.out, json.text); !s) {
      std::cerr << "tracebench model validate: " << s.message() << "\n";
      return 1;
    }
  }
  std::cout << text.text;
  if (!a.out.empty()) std::cout << "wrote " << a.out << "\n";
  if (!v.held()) {
    std::cerr << "tracebench model validate: the run did not hold the scenario: " << v.problems.front() << "\n";
    return 1;
  }
  return 0;
}

int run_validate(const ValidateArgs& a) {
  // Everything is checked before anything is attached or written; the run
  // request first, planned as `run` plans it (tracebench/run_request.h).
  AttachSpec spec;
  if (Status s = plan_single_run({a.tracer, a.workload, a.action, a.payload, a.options}, &spec); !s)
    return validate_refuse(s.message());
  spec.pid = getpid();
  const Workload* w = find_workload(a.workload);
  std::unique_ptr<Tracer> t = make_tracer(a.tracer);
  if (!a.out.empty() && (a.out.size() < 6 || a.out.substr(a.out.size() - 5) != ".json"))
    return validate_refuse("--out names the JSON file to write (a path ending in .json)");
  Model m;
  if (Status s = load_model_for_here(a, &m); !s) return validate_refuse(s.message());
  ValidationScenario sc;
  if (Status s = scenario_of(a, spec, *w, m, &sc); !s) return validate_refuse(s.message());
  // One measuring command per machine (tracebench/machine_lock.h), held until
  // the tracer is torn down.
  MachineLock lock;
  if (int rc = prepare_machine(a, *w, &lock); rc != 0) return rc;
  ValidationMeasured x;
  EventsResult events;
  if (int rc = measure(a, spec, *w, sc, *t, m.tsc_hz, &x, &events); rc != 0) return rc;
  return report(a, m, sc, x, events);
}

}  // namespace

void install_validate(CLI::App* model, int* exit_status) {
  auto va = std::make_shared<ValidateArgs>();
  auto* v = model->add_subcommand(
      "validate",
      "Table 7: fire a workload at a paced rate untraced and traced, measure the CPU, compare with the model");
  v->add_option("--model", va->model, "model.json from `tracebench model fit` on this machine")->required();
  v->add_option("-t,--tracer", va->tracer, "Tracer")->required();
  v->add_option("-w,--workload", va->workload, "Workload (see `tracebench list`)")->required();
  v->add_option("-a,--action", va->action, "The tracer's action")->capture_default_str();
  v->add_option("-p,--payload", va->payload, "Payload bytes per event");
  v->add_option("-o,--option", va->options, "Tracer option key=value (or tracer.key=value), as in `tracebench run`");
  v->add_option("--rate", va->rate, "Events per second to hold")
      ->capture_default_str()
      ->check(finite_range(1000.0, 2e6));
  v->add_option("--seconds", va->seconds, "Length of the whole run (eight segments)")
      ->capture_default_str()
      ->check(finite_range(0.4, 600.0));
  v->add_flag("--quick", va->quick, "2 seconds in all");
  v->add_option("--max-lost-percent", va->max_lost_percent,
                "Events the tracer may lose (% of those it saw) for the validation to hold")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  v->add_option("--out", va->out, "Also write the validation as JSON (results/validation.schema.json)");
  add_lock_flags(v, &va->lock);
  v->callback([va, exit_status] { *exit_status = run_validate(*va); });
}

}  // namespace tracebench::model
