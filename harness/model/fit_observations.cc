// The cost model's fit: the runs' benchmarks grouped into observations per
// entry (what a benchmark says: its configuration, handlers, whether their
// predicates hold, its overheads and consumer figures), and the check that
// the runs are of one machine.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/model/fit_internal.h"
#include "tracebench/handler_count.h"
#include "tracebench/model_description.h"
#include "tracebench/results.h"
#include "tracebench/tracer.h"

namespace tracebench::model::fit_detail {

std::set<std::string> wakeup_knobs(const std::string& tracer) { return model_description(tracer).wakeup_knobs; }

std::pair<std::map<std::string, std::string>, std::string> config_of(const BenchmarkResult& b,
                                                                     const std::set<std::string>& skip) {
  std::map<std::string, std::string> o;
  std::string text;
  for (const auto& [k, v] : b.options) {
    if (k == kEcbsOption || k == kExtraPredicateOption || skip.count(k)) continue;
    o[k] = v;
    text += (text.empty() ? "" : ",") + k + "=" + v;
  }
  return {o, text};
}

Status same_machine(const std::vector<RunResult>& runs) {
  const RunContext& a = runs.front().context;
  for (const auto& r : runs) {
    const RunContext& b = r.context;
    auto differ = [&](const char* what, const std::string& x, const std::string& y) {
      return Status::error(
          fmt::format("model fit: one model is for one machine and kernel: run {} has {} '{}', run {} "
                      "has '{}'",
                      a.run_id, what, x, b.run_id, y));
    };
    if (b.emulated != a.emulated || b.execution != a.execution)
      return Status::error(fmt::format("model fit: refusing to mix emulated and host runs: {} ran on {}, {} on {}",
                                       a.run_id, a.execution, b.run_id, b.execution));
    if (b.simulated_host != a.simulated_host)
      return Status::error(fmt::format(
          "model fit: refusing to mix runs of a simulated host with others: {} ran on '{}', {} on '{}' (\"\": none)",
          a.run_id, a.simulated_host, b.run_id, b.simulated_host));
    if (b.concurrent)
      return Status::error(
          fmt::format("model fit: run {} was measured concurrently with another tracebench command "
                      "(context.concurrent): its figures may hold the other's probes and load; "
                      "measure it again alone",
                      b.run_id));
    if (b.host != a.host) return differ("host", a.host, b.host);
    if (b.cpu_model != a.cpu_model) return differ("CPU", a.cpu_model, b.cpu_model);
    if (b.kernel_release != a.kernel_release) return differ("kernel", a.kernel_release, b.kernel_release);
    if (!(b.tsc_hz > 0) || std::fabs(b.tsc_hz - a.tsc_hz) > 0.01 * a.tsc_hz)
      return Status::error(fmt::format("model fit: run {} has a TSC of {:.0f} Hz, run {} of {:.0f} Hz: not one machine",
                                       a.run_id, a.tsc_hz, b.run_id, b.tsc_hz));
  }
  return Status::ok();
}

int handlers_of(const BenchmarkResult& b) {
  if (b.tracer_details.contains(kEcbsOption) && b.tracer_details[kEcbsOption].is_number_integer())
    return std::max(1, b.tracer_details[kEcbsOption].get<int>());
  auto it = b.options.find(kEcbsOption);
  return it == b.options.end() ? 1 : std::max(1, std::atoi(it->second.c_str()));
}

bool extra_predicate_holds(const BenchmarkResult& b) {
  if (b.tracer_details.contains(kExtraPredicateOption) && b.tracer_details[kExtraPredicateOption].is_string())
    return b.tracer_details[kExtraPredicateOption].get<std::string>() != "false";
  auto it = b.options.find(kExtraPredicateOption);
  return it == b.options.end() || it->second != "false";
}

namespace {

// A benchmark's overhead per event, one figure per repetition (traced minus
// baseline median); a profile probe's repetitions are per op, its events its
// timer's firings, so many per op (`per_op`).
std::vector<double> overheads_of(const BenchmarkResult& b, double per_op) {
  const auto& base = b.baseline.repetition_medians;
  const auto& tr = b.traced.repetition_medians;
  std::vector<double> v;
  for (std::size_t i = 0; i < std::min(base.size(), tr.size()); ++i)
    if (std::isfinite(tr[i] - base[i])) v.push_back((tr[i] - base[i]) / per_op);
  return v;
}

// The observations of the benchmark's entry, with what the benchmark says
// of it: options, consumer pool, workload, effective options, payload.
Observations& observations_for(const BenchmarkResult& b, std::map<Key, Observations>* obs) {
  auto [options, config] = config_of(b);
  Observations& o = (*obs)[{b.tracer, b.probe_kind, b.action, config}];
  o.options = options;
  o.consumer_pool = {b.tracer, b.probe_kind, b.action, config_of(b, wakeup_knobs(b.tracer)).second};
  o.workloads.insert(b.workload);
  if (b.tracer_details.contains("options") && b.tracer_details["options"].is_object())
    for (const auto& [key, value] : b.tracer_details["options"].items())
      o.effective[key].insert(value.is_string() ? value.get<std::string>() : value.dump());
  if (b.events.payload_source != "none") o.carries_payload = true;
  return o;
}

// A consumer on its own timer with nothing to read (a `count` run after an
// idle gap): what its thread spends per pass while the firing CPU mostly
// sleeps (timer_pass_costs); the caller's disable and drain left out.
void add_idle_pass(const BenchmarkResult& b, double tsc, const Observations& o,
                   std::map<PassKey, std::vector<IdlePass>>* idle_passes) {
  const auto& c = b.consumer;
  if (!(c && c->wakes_on_timer && b.action == "count" && c->wakeups && *c->wakeups > 0 && tsc > 0)) return;
  const double passes = static_cast<double>(*c->wakeups);
  (*idle_passes)[{b.tracer, std::get<3>(o.consumer_pool)}].push_back(
      {std::max(0.0, c->cpu_ns - c->caller_cpu_ns) * tsc / 1e9 / passes,
       c->enables ? static_cast<double>(*c->enables) / passes : -1.0});
}

// A consumer its records wake, after an idle gap: its cycles per record and
// the wakeups that found it asleep.
void add_idle_consumer(const BenchmarkResult& b, double tsc, Observations* o) {
  const auto& c = b.consumer;
  if (!(c && c->records > 0 && c->wakeups && *c->wakeups > 0 && !c->wakes_on_timer && tsc > 0)) return;
  // At most one wakeup per traced sample found the consumer asleep.
  // With the tasks' time in the traced blocks alone, the records are
  // those blocks' (the pilot's hot ones left out).
  const double samples = static_cast<double>(b.repetitions) * static_cast<double>(b.samples_per_block);
  const double records = c->traced_cpu_ns
                             ? std::min(static_cast<double>(c->records), samples * static_cast<double>(b.batch))
                             : static_cast<double>(c->records);
  const double idle = std::min(static_cast<double>(*c->wakeups), samples);
  // The tasks' time in the traced blocks alone where the run has it:
  // these runs' few records would magnify what the tasks do idle in
  // the baseline blocks (a reader's poll timeouts), and the fitted
  // per-enable term set against the reads at disable, which are
  // measured and left out.
  IdleConsumerPoint ip;
  const double ns = c->traced_cpu_ns ? *c->traced_cpu_ns : std::max(0.0, c->cpu_ns - c->caller_cpu_ns);
  ip.point.cycles_per_record = ns * tsc / 1e9 / records;
  ip.point.payload_bytes = static_cast<double>(b.payload_bytes);
  ip.point.wakeups_per_record = (static_cast<double>(*c->wakeups) - idle) / records;
  ip.point.enables_per_record = 0;
  ip.idle_wakeups_per_record = idle / records;
  o->idle_consumer.push_back(ip);
}

// A hot benchmark's consumer figure (one thread; one handler, or the
// handler sweep's extra handlers whose predicates fail), into its pool or
// the entry's handler-sweep figures.
void add_consumer_point(const BenchmarkResult& b, double tsc, int handlers, const std::vector<double>& v,
                        Observations* o, std::map<Key, std::vector<ConsumerPoint>>* pools) {
  if (!(b.consumer && b.threads == 1 && b.consumer->records > 0 && tsc > 0 &&
        (handlers == 1 || (b.payload_bytes == 0 && !extra_predicate_holds(b)))))
    return;
  const ConsumerResult& c = *b.consumer;
  ConsumerPoint p;
  p.cycles_per_record = c.cpu_ns * tsc / 1e9 / static_cast<double>(c.records);
  p.records = static_cast<double>(c.records);
  p.payload_bytes = static_cast<double>(b.payload_bytes);
  if (c.wakeups) p.wakeups_per_record = static_cast<double>(*c.wakeups) / static_cast<double>(c.records);
  if (c.enables) p.enables_per_record = static_cast<double>(*c.enables) / static_cast<double>(c.records);
  p.user_ticks = c.user_ticks;
  p.split_ticks = static_cast<double>(c.ticks);
  p.overhead_cycles = median_of(v);
  p.config = config_of(b).second;
  p.wakes_on_timer = c.wakes_on_timer;
  if (handlers > 1) {
    o->handler_consumer.emplace_back(p, handlers);  // what the extra handlers' enable cycles cost it
  } else {
    (*pools)[o->consumer_pool].push_back(p);
    if (p.wakeups_per_record >= 0) o->own_wakeups.push_back(p.wakeups_per_record);
  }
}

// A hot benchmark's overheads, by the one knob it varies: payload (one
// thread, one handler), threads (payload 0) or handlers (payload 0, one
// thread).
void add_hot_overheads(const BenchmarkResult& b, int handlers, const std::vector<double>& v, Observations* o) {
  std::vector<double>* dst = nullptr;
  if (handlers > 1) {
    if (b.threads != 1 || b.payload_bytes != 0) return;  // one knob at a time
    dst = &o->by_handlers[extra_predicate_holds(b)][handlers];
  } else if (b.threads == 1) {
    dst = &o->by_payload[b.payload_bytes];
  } else if (b.payload_bytes == 0) {
    dst = &o->by_threads[b.threads];
  } else {
    return;
  }
  dst->insert(dst->end(), v.begin(), v.end());
}

}  // namespace

Observed observe_runs(const std::vector<RunResult>& runs) {
  Observed seen;
  for (const auto& r : runs) {
    const double tsc = r.context.tsc_hz;
    for (const auto& b : r.benchmarks) {
      if (b.status != "ok" || !b.overhead_cycles || b.tracer == kBaselineTracer) continue;
      const double per_op = b.events.timer_events_per_op.value_or(1.0);
      const std::vector<double> v = overheads_of(b, per_op);
      if (v.empty()) continue;
      Observations& o = observations_for(b, &seen.obs);
      const int handlers = handlers_of(b);
      if (b.gap_us > 0) {
        // After an idle gap: its own terms, kept out of the hot ones.
        if (handlers != 1 || b.threads != 1) continue;
        o.idle_runs.push_back(
            {b.payload_bytes, static_cast<double>(std::max<std::uint64_t>(1, b.batch)) * per_op, b.gap_us, v});
        add_idle_pass(b, tsc, o, &seen.idle_passes);
        add_idle_consumer(b, tsc, &o);
        continue;
      }
      add_consumer_point(b, tsc, handlers, v, &o, &seen.pools);
      add_hot_overheads(b, handlers, v, &o);
    }
  }
  return seen;
}

}  // namespace tracebench::model::fit_detail
