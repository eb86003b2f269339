// `tracebench model validate`, the arithmetic: from the paced segments'
// measurements to measured and predicted cost per probe and CPU share (the
// Table 7 analog), and its files.  The pacing itself is validate_command.cc.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tracebench/json_read.h"
#include "tracebench/json_optional.h"
#include "tracebench/model.h"
#include "tracebench/task_clock.h"

namespace tracebench::model {

ProbeLoad ValidationScenario::probe_load(double rate) const {
  ProbeLoad load;
  load.tracer = tracer;
  load.probe_kind = probe_kind;
  load.action = action;
  load.payload_bytes = payload_bytes;
  load.handlers = handlers;
  load.predicate_true = predicate_true;
  load.rate_hz = rate;
  load.options = options;
  return load;
}

std::vector<std::string> validation_problems(const ValidationScenario& s, const ValidationMeasured& x,
                                             const Validation& v, const ValidationLimits& limits) {
  std::vector<std::string> out;
  if (s.rate_hz > 0 && v.ops_hz < limits.min_rate_share * s.rate_hz)
    out.push_back(
        fmt::format("the rate was not held: {:.0f} Hz of the {:.0f} Hz asked ({:.0f}%, under {:.0f}%) while "
                    "traced: the thread could not fire that fast, or lost the CPU",
                    v.ops_hz, s.rate_hz, 100 * v.ops_hz / s.rate_hz, 100 * limits.min_rate_share));
  if (v.longest_period_ms > limits.max_period_ms)
    out.push_back(
        fmt::format("a 1 ms pacing period lasted {:.0f} ms (over {:.0f} ms): the process was stopped "
                    "(SIGSTOP) or kept off the CPU, and caught up after; the load was not the scenario's",
                    v.longest_period_ms, limits.max_period_ms));
  if (x.seen > 0 && v.lost_share > limits.max_lost_share)
    out.push_back(
        fmt::format("the tracer lost {} of the {} events it saw ({:.1f}%, over {:g}%): a tracer that drops "
                    "costs less per event than one that records; enlarge its buffer",
                    x.lost, x.seen, 100 * v.lost_share, 100 * limits.max_lost_share));
  return out;
}

Status validation_from_json(const nlohmann::json& j, ValidationFile* out) {
  ValidationFile v;
  const JsonFields doc(j, "");
  TB_TRY(doc.object());
  JsonFields m({}, ""), p({}, ""), e({}, "");
  TB_TRY(doc.child("measured", &m));
  TB_TRY(m.number("rate_hz", &v.measured.rate_hz));
  TB_TRY(m.number("probe_cycles", &v.measured.probe_cycles));
  TB_TRY(m.number("probe_cpu_percent", &v.measured.probe_cpu_percent));
  TB_TRY(m.number("consumer_cpu_percent", &v.measured.consumer_cpu_percent));
  TB_TRY(m.number("cpu_percent", &v.measured.cpu_percent));
  TB_TRY(m.number("untraced_spread_ns_per_event", &v.measured.untraced_spread_ns_per_event));
  if (m.has("traced_ns_per_event") && m.has("untraced_ns_per_event")) {
    double traced = 0, untraced = 0;
    TB_TRY(m.number("traced_ns_per_event", &traced));
    TB_TRY(m.number("untraced_ns_per_event", &untraced));
    v.measured.probe_ns_per_event = traced - untraced;
  }
  if (m.has("probe_cycles_pairs")) TB_TRY(m.numbers("probe_cycles_pairs", &v.measured.probe_cycles_pairs));
  TB_TRY(doc.child("predicted", &p));
  TB_TRY(p.number("probe_cycles", &v.predicted.probe_cycles));
  TB_TRY(p.number("probe_cpu_percent", &v.predicted.probe_cpu_percent));
  TB_TRY(p.number_or_null("consumer_cpu_percent", &v.predicted.consumer_cpu_percent));
  TB_TRY(p.number_or_null("cpu_percent", &v.predicted.cpu_percent));
  TB_TRY(doc.child("error", &e));
  TB_TRY(e.number_or_null("cpu_percent", &v.error_cpu_percent));
  if (doc.has("conditions")) {  // written before conditions existed: held
    JsonFields c({}, "");
    TB_TRY(doc.child("conditions", &c));
    TB_TRY(c.boolean("held", &v.held));
    if (c.has("problems")) TB_TRY(c.strings("problems", &v.problems));
  }
  if (doc.has("model")) {
    JsonFields c({}, "");
    TB_TRY(doc.child("model", &c));
    if (c.has("emulated")) TB_TRY(c.boolean("emulated", &v.emulated));
    if (c.has("execution")) TB_TRY(c.string("execution", &v.execution));
  }
  v.document = j;
  *out = std::move(v);
  return Status::ok();
}

std::vector<double> probe_cycles_by_pair(const std::vector<ValidationSegment>& segments, double firings_per_op,
                                         double tsc_hz) {
  std::vector<double> out;
  for (std::size_t i = 0; i + 1 < segments.size(); i += 2) {
    const ValidationSegment& a = segments[i];
    const ValidationSegment& b = segments[i + 1];
    if (a.traced == b.traced || a.events == 0 || b.events == 0 || !(firings_per_op > 0)) continue;
    const ValidationSegment& traced = a.traced ? a : b;
    const ValidationSegment& untraced = a.traced ? b : a;
    const double ns = traced.thread_cpu_ns / static_cast<double>(traced.events) -
                      untraced.thread_cpu_ns / static_cast<double>(untraced.events);
    out.push_back(ns / firings_per_op * tsc_hz / 1e9);
  }
  return out;
}

namespace {

// The segments summed by kind ([0] untraced, [1] traced), and the traced
// consumer tasks split by whether perf's task-clock counted them.
struct SegmentSums {
  double wall[2] = {0, 0}, cpu[2] = {0, 0}, busy[2] = {0, 0}, consumer = 0;
  double tasks = 0, tasks_perf = 0, tasks_counted = 0, wall_counted = 0, tasks_uncounted = 0, wall_uncounted = 0;
  std::uint64_t switches = 0;
  bool perf_all = true, any_tasks = false, any_counted = false, any_uncounted = false;
  std::uint64_t events[2] = {0, 0}, ticks = 0, late = 0, enables = 0, bursts = 0;
};

SegmentSums sum_segments(const ValidationMeasured& x) {
  SegmentSums a;
  a.consumer = x.drain_consumer_cpu_ns;
  for (const auto& g : x.segments) {
    const int t = g.traced ? 1 : 0;
    a.enables += t;  // each traced segment is one enable() and one disable()
    a.wall[t] += g.wall_ns;
    a.cpu[t] += g.thread_cpu_ns;
    a.busy[t] += g.machine_busy_ns;
    a.events[t] += g.events;
    if (g.traced) {
      a.bursts += g.bursts;
      a.consumer += g.consumer_cpu_ns;
      a.tasks += g.consumer_tasks_ns;
      a.any_tasks |= g.consumer_tasks_ns > 0 || g.consumer_tasks_perf_ns.has_value();
      // The cross-check is over the segments perf counted; the others are
      // the same tasks uncounted, for what counting costs them.
      if (g.task_clock) {
        a.any_counted = true;
        a.tasks_counted += g.consumer_tasks_ns;
        a.wall_counted += g.wall_ns;
        if (g.consumer_tasks_perf_ns)
          a.tasks_perf += *g.consumer_tasks_perf_ns;
        else
          a.perf_all = false;
        a.switches += g.consumer_tasks_switches;
      } else {
        a.any_uncounted = true;
        a.tasks_uncounted += g.consumer_tasks_ns;
        a.wall_uncounted += g.wall_ns;
      }
    }
    a.ticks += g.ticks;
    a.late += g.late_ticks;
  }
  return a;
}

// The consumer tasks' CPU by schedstat against perf's task-clock, over the
// segments perf counted, and what counting them cost.
void cross_check_consumer(const SegmentSums& a, Validation* v) {
  if (a.perf_all && a.any_tasks && a.any_counted) {
    // Both accounts over the segments perf counted.
    const double counted_percent = 100 * a.tasks_counted / a.wall_counted;
    v->consumer_tasks_counted_cpu_percent = counted_percent;
    v->consumer_tasks_perf_cpu_percent = 100 * a.tasks_perf / a.wall_counted;
    v->consumer_tasks_switches = a.switches;
    // schedstat counts the switches into and out of a task, task-clock does
    // not: the gap per switch is what a switch costs, a few µs; more, or
    // task-clock above schedstat, and the two accounts do not agree.
    const double gap_ns = a.tasks_counted - a.tasks_perf;
    if (a.switches > 0) v->consumer_switch_gap_us = gap_ns / static_cast<double>(a.switches) / 1e3;
    const bool perf_above = -gap_ns > 0.1 * a.tasks_counted && -gap_ns / a.wall_counted * 100 > 0.05;
    const bool gap_too_large = gap_ns / a.wall_counted * 100 > 0.05 &&
                               (a.switches == 0 || gap_ns / static_cast<double>(a.switches) > kSwitchGapExplainedNs);
    if (perf_above || gap_too_large)
      v->warnings.push_back(fmt::format(
          "the consumer tasks' CPU from /proc schedstat ({:.3f} %) and from perf's task-clock ({:.3f} %) differ by "
          "more than their {} context switches explain: the consumer figure is not confirmed",
          counted_percent, *v->consumer_tasks_perf_cpu_percent, a.switches));
  }
  if (a.any_tasks && a.any_counted && a.any_uncounted && a.wall_counted > 0 && a.wall_uncounted > 0)
    v->task_clock_effect_percent = 100 * (a.tasks_counted / a.wall_counted - a.tasks_uncounted / a.wall_uncounted);
}

// The noise (how far the untraced segments' cost per event spread), and
// what makes the figures doubtful: a probe inside the noise, a rate not held.
void judge_noise(const ValidationMeasured& x, const SegmentSums& a, double probe_ns, Validation* v) {
  double lo = 1e300, hi = 0;
  for (const auto& g : x.segments) {
    if (g.traced || g.events == 0) continue;
    lo = std::min(lo, g.thread_cpu_ns / static_cast<double>(g.events));
    hi = std::max(hi, g.thread_cpu_ns / static_cast<double>(g.events));
  }
  v->untraced_spread_ns_per_event = hi >= lo ? hi - lo : 0;
  if (std::fabs(probe_ns) < v->untraced_spread_ns_per_event)
    v->warnings.push_back(fmt::format(
        "the probe's measured cost ({:.0f} ns per event) is inside the spread of the untraced segments ({:.0f} ns): "
        "noise, not a measurement; a costlier configuration, a higher rate or longer segments",
        probe_ns, v->untraced_spread_ns_per_event));
  if (v->late_share > 0.05)
    v->warnings.push_back(
        fmt::format("{:.0f}% of the pacing periods began late: the rate was not held", 100 * v->late_share));
  const double untraced_rate = static_cast<double>(a.events[0]) / (a.wall[0] / 1e9);
  if (std::fabs(untraced_rate - v->ops_hz) > 0.02 * v->ops_hz)
    v->warnings.push_back(
        fmt::format("untraced segments ran at {:.0f} Hz, traced at {:.0f} Hz", untraced_rate, v->ops_hz));
}

// What was measured: rates, the probe's and the consumer's cost, the machine.
Status measure(const Model& m, const ValidationMeasured& x, const SegmentSums& a, Validation* v) {
  if (a.events[0] == 0 || a.events[1] == 0 || !(a.wall[0] > 0) || !(a.wall[1] > 0))
    return Status::error("model validate: no events in the untraced or the traced segments");
  v->ops_hz = static_cast<double>(a.events[1]) / (a.wall[1] / 1e9);
  // A profile probe's events are its timer's firings while the ops ran.
  if (x.timer_firings && *x.timer_firings == 0)
    return Status::error("model validate: the tracer's timer never fired in the traced segments");
  const double firings_per_op =
      x.timer_firings ? static_cast<double>(*x.timer_firings) / static_cast<double>(a.events[1]) : 1.0;
  v->rate_hz = v->ops_hz * firings_per_op;
  v->untraced_ns_per_event = a.cpu[0] / static_cast<double>(a.events[0]);
  v->traced_ns_per_event = a.cpu[1] / static_cast<double>(a.events[1]);
  const double probe_ns = v->traced_ns_per_event - v->untraced_ns_per_event;  // per op
  v->probe_cycles = probe_ns / firings_per_op * m.tsc_hz / 1e9;
  v->probe_cpu_percent = 100 * v->ops_hz * probe_ns / 1e9;
  v->consumer_cpu_percent = 100 * a.consumer / a.wall[1];
  v->consumer_tasks_cpu_percent = 100 * a.tasks / a.wall[1];
  cross_check_consumer(a, v);
  v->cpu_percent = v->probe_cpu_percent + v->consumer_cpu_percent;
  v->system_busy_delta_percent = 100 * (a.busy[1] / a.wall[1] - a.busy[0] / a.wall[0]);
  v->late_share = a.ticks ? static_cast<double>(a.late) / static_cast<double>(a.ticks) : 0;
  v->probe_cycles_pairs = probe_cycles_by_pair(x.segments, firings_per_op, m.tsc_hz);
  judge_noise(x, a, probe_ns, v);
  return Status::ok();
}

// The consumer at the rates it ran at, as the model predicts it.
void predict_consumer(const Model& m, const ValidationScenario& s, const ValidationMeasured& x, const SegmentSums& a,
                      const Entry* entry, const Scenario& probe_only, double wake_wall, Validation* v) {
  if (x.records == 0) {
    v->predicted_consumer_cpu_percent = 0;
    v->consumer_missing = "";
    return;
  }
  Scenario with = probe_only;
  ConsumerLoad c;
  c.tracer = s.tracer;
  c.probe_kind = s.probe_kind;
  c.action = s.action;
  c.options = s.options;
  c.payload_bytes = s.payload_bytes;
  c.records_hz = static_cast<double>(x.records) / (a.wall[1] / 1e9);
  if (x.wakeups) c.wakeups_hz = static_cast<double>(*x.wakeups) / (wake_wall / 1e9);
  c.enables_hz = static_cast<double>(a.enables) / (a.wall[1] / 1e9);
  c.handlers = s.handlers;
  if (v->idle_wakeups_hz > 0 && entry) {
    if (entry->consumer_per_idle_wakeup.ok())
      c.idle_wakeups_hz = std::min(v->idle_wakeups_hz, c.wakeups_hz);
    else
      v->idle_note +=
          fmt::format("{}{:.0f} of the consumer's wakeups/s found it asleep, costed as warm ones: {}",
                      v->idle_note.empty() ? "" : "; ", v->idle_wakeups_hz, entry->consumer_per_idle_wakeup.missing);
  }
  with.consumers.push_back(c);
  Prediction q;
  if (Status st = predict(m, with, &q); st) {
    v->predicted_consumer_cpu_percent = q.consumer_cpu_percent();
  } else if (c.wakeups_hz > 0) {
    // A model without a per-wakeup term has the wakeups in its per-record one.
    with.consumers[0].wakeups_hz = 0;
    with.consumers[0].idle_wakeups_hz = 0;
    if (Status st2 = predict(m, with, &q); st2)
      v->predicted_consumer_cpu_percent = q.consumer_cpu_percent();
    else
      v->consumer_missing = st2.message();
  } else {
    v->consumer_missing = st.message();
  }
}

// What the model predicts for the rates achieved: the probe (with its
// wakeups and idle bursts), then the consumer.
Status predict_measured(const Model& m, const ValidationScenario& s, const ValidationMeasured& x, const SegmentSums& a,
                        Validation* v) {
  Scenario probe_only;
  ProbeLoad load = s.probe_load(v->rate_hz);
  // What the probe pays for waking the consumer, at the wakeups this
  // scenario caused.
  // The consumer's wakeups per second: over the traced segments, or for a
  // consumer on its own timer (it runs in the untraced ones too) over all.
  const double wake_wall = x.wakes_on_timer ? a.wall[0] + a.wall[1] : a.wall[1];
  if (x.wakeups && x.records > 0) load.wakeups_hz = static_cast<double>(*x.wakeups) / (wake_wall / 1e9);
  // Each pacing period's events are a burst after the thread slept: its
  // first one pays idle_start, and its first wakeup (if it wakes the
  // consumer) finds the consumer asleep.
  v->bursts_hz = static_cast<double>(a.bursts) / (a.wall[1] / 1e9);
  if (load.wakeups_hz && !x.wakes_on_timer) v->idle_wakeups_hz = std::min(*load.wakeups_hz, v->bursts_hz);
  const Entry* entry = m.find(s.tracer, s.probe_kind, s.action, s.options);
  // A profile probe's bursts each stop and restart its timer, fired or not.
  if (entry && entry->idle_start.ok())
    load.bursts_hz = x.timer_firings ? v->bursts_hz : std::min(v->bursts_hz, v->rate_hz);
  else if (entry && v->bursts_hz > 0)
    v->idle_note =
        fmt::format("{:.0f} bursts/s after an idle gap, not costed: {}", v->bursts_hz, entry->idle_start.missing);
  probe_only.probes.push_back(load);
  Prediction p;
  TB_TRY(predict(m, probe_only, &p));
  v->predicted_probe_cycles = p.probes[0].cycles;
  v->predicted_wakeup_cycles = p.probes[0].wakeup_cycles;
  v->predicted_idle_cycles = p.probes[0].idle_cycles;
  v->wakeup_note = p.probes[0].wakeup_note;
  v->predicted_probe_cpu_percent = p.cpu_percent_b;
  predict_consumer(m, s, x, a, entry, probe_only, wake_wall, v);
  if (v->predicted_consumer_cpu_percent && *v->predicted_consumer_cpu_percent < 0)
    v->warnings.push_back(fmt::format(
        "the model's consumer terms predict a negative cost ({:.2f} % CPU) at these rates: its consumer fit does not "
        "hold for this tracer (see the fit's R² and residuals in model.md)",
        *v->predicted_consumer_cpu_percent));
  if (v->predicted_consumer_cpu_percent)
    v->predicted_cpu_percent = v->predicted_probe_cpu_percent + *v->predicted_consumer_cpu_percent;
  return Status::ok();
}

}  // namespace

Status evaluate(const Model& m, const ValidationScenario& s, const ValidationMeasured& x, Validation* out,
                const ValidationLimits& limits) {
  const SegmentSums a = sum_segments(x);
  Validation v;
  TB_TRY(measure(m, x, a, &v));
  TB_TRY(predict_measured(m, s, x, a, &v));
  for (const auto& g : x.segments) v.longest_period_ms = std::max(v.longest_period_ms, g.longest_period_ns / 1e6);
  v.lost_share = x.seen ? static_cast<double>(x.lost) / static_cast<double>(x.seen) : 0;
  v.problems = validation_problems(s, x, v, limits);
  *out = std::move(v);
  return Status::ok();
}

nlohmann::json to_json(const Model& m, const ValidationScenario& s, const ValidationMeasured& x, const Validation& v) {
  nlohmann::json segs = nlohmann::json::array();
  for (const auto& g : x.segments)
    segs.push_back({{"traced", g.traced},
                    {"wall_ns", g.wall_ns},
                    {"thread_cpu_ns", g.thread_cpu_ns},
                    {"machine_busy_ns", g.machine_busy_ns},
                    {"events", g.events},
                    {"consumer_cpu_ns", g.consumer_cpu_ns},
                    {"consumer_tasks_ns", g.consumer_tasks_ns},
                    {"consumer_tasks_perf_ns", json_or_null(g.consumer_tasks_perf_ns)},
                    {"consumer_tasks_switches", g.consumer_tasks_switches},
                    {"task_clock", g.task_clock},
                    {"ticks", g.ticks},
                    {"bursts", g.bursts},
                    {"late_ticks", g.late_ticks},
                    {"longest_period_ns", g.longest_period_ns}});
  nlohmann::json j = {
      {"schema", "tracebench.validation"},
      {"schema_version", 4},
      {"model",
       {{"host", m.host},
        {"kernel_release", m.kernel_release},
        {"execution", m.execution},
        {"emulated", m.emulated},
        {"tsc_hz", m.tsc_hz},
        {"runs", m.runs}}},
      {"scenario",
       {{"tracer", s.tracer},
        {"workload", s.workload},
        {"probe_kind", s.probe_kind},
        {"action", s.action},
        {"options", s.options},
        {"handlers", s.handlers},
        {"predicate_true", s.predicate_true},
        {"payload_bytes", s.payload_bytes},
        {"rate_hz", s.rate_hz},
        {"seconds", s.seconds}}},
      {"measured",
       {{"rate_hz", v.rate_hz},
        {"untraced_ns_per_event", v.untraced_ns_per_event},
        {"traced_ns_per_event", v.traced_ns_per_event},
        {"probe_cycles", v.probe_cycles},
        {"probe_cpu_percent", v.probe_cpu_percent},
        {"consumer_cpu_percent", v.consumer_cpu_percent},
        {"cpu_percent", v.cpu_percent},
        {"system_busy_delta_percent", v.system_busy_delta_percent},
        {"consumer_tasks_cpu_percent", v.consumer_tasks_cpu_percent},
        {"consumer_tasks_counted_cpu_percent", json_or_null(v.consumer_tasks_counted_cpu_percent)},
        {"consumer_tasks_perf_cpu_percent", json_or_null(v.consumer_tasks_perf_cpu_percent)},
        {"consumer_tasks_switches", v.consumer_tasks_switches},
        {"consumer_switch_gap_us", json_or_null(v.consumer_switch_gap_us)},
        {"task_clock_effect_percent", json_or_null(v.task_clock_effect_percent)},
        {"late_share", v.late_share},
        {"untraced_spread_ns_per_event", v.untraced_spread_ns_per_event},
        {"probe_cycles_pairs", v.probe_cycles_pairs},
        {"records", x.records},
        {"wakeups", json_or_null(x.wakeups)},
        {"wakes_on_timer", x.wakes_on_timer},
        {"drain_consumer_cpu_ns", x.drain_consumer_cpu_ns},
        {"first_pass_events", x.first_pass_events},
        {"segments", segs}}},
      {"predicted",
       {{"probe_cycles", v.predicted_probe_cycles},
        {"probe_cpu_percent", v.predicted_probe_cpu_percent},
        {"consumer_cpu_percent", json_or_null(v.predicted_consumer_cpu_percent)},
        {"cpu_percent", json_or_null(v.predicted_cpu_percent)}}},
      {"error",
       {{"probe_cycles", v.probe_cycles - v.predicted_probe_cycles},
        {"cpu_percent", v.predicted_cpu_percent ? nlohmann::json(v.cpu_percent - *v.predicted_cpu_percent)
                                                : nlohmann::json(nullptr)}}},
      {"warnings", v.warnings},
      // Whether the run held the scenario; a validation that did not is
      // neither agreement nor disagreement with the model.
      {"conditions",
       {{"held", v.held()},
        {"problems", v.problems},
        {"rate_asked_hz", s.rate_hz},
        {"longest_period_ms", v.longest_period_ms},
        {"lost_share", v.lost_share}}}};
  if (!v.consumer_missing.empty()) j["predicted"]["consumer_missing"] = v.consumer_missing;
  if (x.wakeups && x.records > 0) j["predicted"]["probe_wakeup_cycles"] = v.predicted_wakeup_cycles;
  j["measured"]["ops_hz"] = v.ops_hz;
  if (x.timer_firings) j["measured"]["timer_firings"] = *x.timer_firings;
  j["measured"]["bursts_hz"] = v.bursts_hz;
  j["measured"]["idle_wakeups_hz"] = v.idle_wakeups_hz;
  j["predicted"]["probe_idle_cycles"] = v.predicted_idle_cycles;
  if (!v.idle_note.empty()) j["predicted"]["idle_note"] = v.idle_note;
  if (!v.wakeup_note.empty()) j["predicted"]["probe_wakeup_note"] = v.wakeup_note;
  return j;
}

std::string to_text(const ValidationScenario& s, const Validation& v) {
  auto pct = [](const std::optional<double>& x) { return x ? fmt::format("{:.3f}", *x) : std::string("—"); };
  std::string out = fmt::format("{} {} {} payload {}{} at {:.0f} Hz (asked {:.0f}), CPU % of one CPU\n", s.tracer,
                                s.workload, s.action, s.payload_bytes,
                                s.handlers > 1 ? fmt::format(", {} handlers (the extra ones' predicates {})",
                                                             s.handlers, s.predicate_true > 0 ? "hold" : "fail")
                                               : std::string(),
                                v.ops_hz, s.rate_hz);
  if (s.probe_kind == "profile")
    out +=
        fmt::format("the probe is the tracer's timer: it fired {:.0f} times per second while the ops ran\n", v.rate_hz);
  out += fmt::format("{:<22} {:>12} {:>12} {:>12}\n", "", "predicted", "measured", "error");
  out += fmt::format("{:<22} {:>12.1f} {:>12.1f} {:>12.1f}\n", "cycles per probe", v.predicted_probe_cycles,
                     v.probe_cycles, v.probe_cycles - v.predicted_probe_cycles);
  out += fmt::format("{:<22} {:>12.3f} {:>12.3f} {:>12.3f}\n", "probes, CPU %", v.predicted_probe_cpu_percent,
                     v.probe_cpu_percent, v.probe_cpu_percent - v.predicted_probe_cpu_percent);
  out += fmt::format("{:<22} {:>12} {:>12.3f} {:>12}\n", "consumer, CPU %", pct(v.predicted_consumer_cpu_percent),
                     v.consumer_cpu_percent,
                     v.predicted_consumer_cpu_percent
                         ? fmt::format("{:.3f}", v.consumer_cpu_percent - *v.predicted_consumer_cpu_percent)
                         : std::string("—"));
  out += fmt::format(
      "{:<22} {:>12} {:>12.3f} {:>12}\n", "total, CPU %", pct(v.predicted_cpu_percent), v.cpu_percent,
      v.predicted_cpu_percent ? fmt::format("{:.3f}", v.cpu_percent - *v.predicted_cpu_percent) : std::string("—"));
  out += fmt::format(
      "machine busy, traced minus untraced (/proc/stat, independent, tick-sampled): {:.3f} % of one "
      "CPU\n",
      v.system_busy_delta_percent);
  if (v.consumer_tasks_perf_cpu_percent)
    out += fmt::format(
        "consumer tasks, in the segments perf counted: {:.3f} % by /proc schedstat, {:.3f} % by perf task-clock "
        "(independent){}\n",
        *v.consumer_tasks_counted_cpu_percent, *v.consumer_tasks_perf_cpu_percent,
        v.consumer_switch_gap_us
            ? fmt::format(
                  "; schedstat's extra is {:.1f} µs per context switch ({} switches): the switches into and out "
                  "of the consumer, which task-clock leaves out",
                  *v.consumer_switch_gap_us, v.consumer_tasks_switches)
            : std::string());
  if (v.task_clock_effect_percent)
    out += fmt::format(
        "perf's task-clock counted the consumer tasks in two of the four traced segments: their share "
        "there minus in the other two, {:+.3f} CPU points (what counting costs them, noise included)\n",
        *v.task_clock_effect_percent);
  out += fmt::format("untraced segments' cost per event spread over {:.0f} ns (the noise)\n",
                     v.untraced_spread_ns_per_event);
  if (v.predicted_wakeup_cycles != 0)
    out += fmt::format("of the predicted cycles per probe, {:.1f} for the wakeups it caused (probe_per_wakeup)\n",
                       v.predicted_wakeup_cycles);
  if (!v.wakeup_note.empty()) out += "probe wakeups: " + v.wakeup_note + "\n";
  if (v.predicted_idle_cycles != 0)
    out += fmt::format("of the predicted cycles per probe, {:.1f} for {:.0f} bursts/s after an idle gap (idle_start)\n",
                       v.predicted_idle_cycles, v.bursts_hz);
  if (!v.idle_note.empty()) out += "after idle: " + v.idle_note + "\n";
  if (!v.consumer_missing.empty()) out += "no consumer prediction: " + v.consumer_missing + "\n";
  for (const auto& w : v.warnings) out += "warning: " + w + "\n";
  if (!v.held()) {
    out +=
        "verdict: NOT A VALIDATION: the run did not hold the scenario, so its figures neither confirm nor refute "
        "the model:\n";
    for (const auto& p : v.problems) out += "  " + p + "\n";
  }
  return out;
}

}  // namespace tracebench::model
