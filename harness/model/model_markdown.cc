// model.md: the model's parameters in the paper's table shapes, cycles and
// ns (the model reporters' "markdown" format, model_reporters.h).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fit_internal.h"
#include "tracebench/model.h"
#include "tracebench/stats.h"

namespace tracebench::model {

// The action with its configuration, as the tables show it.
std::string action_label(const Entry& e) {
  std::string o;
  for (const auto& [k, v] : e.options) o += fmt::format("{}{}={}", o.empty() ? "" : ", ", k, v);
  return o.empty() ? e.action : fmt::format("{} ({})", e.action, o);
}

namespace {

// A term as the tables show it: cycles, its interval, and ns at `ns` per cycle.
std::string cell(const Param& p, double ns) {
  if (!p.ok()) return "—";
  if (!determined(p))
    return fmt::format("not determined here ({:.1f} [{:.1f}, {:.1f}])", *p.cycles, p.ci_low, p.ci_high);
  return fmt::format("{:.1f} [{:.1f}, {:.1f}] ({:.1f} ns)", *p.cycles, p.ci_low, p.ci_high, *p.cycles * ns);
}

// The title, the machine and the equation.
std::string header(const Model& m) {
  return fmt::format(
      "# Cost model parameters\n\n{} ({}), kernel {}, {}, TSC {:.3f} GHz; fitted from {} run(s). Cycles per event "
      "with the 95% bootstrap interval over repetitions, and ns.\n\n"
      "`Cost(P) = fixed + b·per_byte + (N−1)·(false_predicate + p·(per_ecb − false_predicate)) + contention(t) + (w − "
      "w_fit)·probe_per_wakeup + (bursts/rate)·idle_start`\n",
      m.host, m.cpu_model, m.kernel_release, m.emulated ? m.execution + " (emulated)" : std::string("host"),
      m.tsc_hz / 1e9, m.runs.size());
}

// The entries of tracer t whose line's fixed misses the runs at payload 0
// measured directly (Entry::fixed_direct), a line each under the table.
std::string direct_disagreements(const Model& m, const std::string& t) {
  std::string md;
  for (const auto& e : m.entries) {
    if (e.tracer != t || !e.fixed_direct || e.fixed_direct->agrees) continue;
    const Entry::DirectCheck& d = *e.fixed_direct;
    md += fmt::format(
        "{}- {} {}: **fixed does not agree with its direct run**: the line's intercept {:.1f} [{:.1f}, {:.1f}], the "
        "runs at payload 0 {:.1f} [{:.1f}, {:.1f}] ({} over {} repetitions); the line through the payload sizes does "
        "not hold at 0 (R² {:.3f}: sizes on two levels?), and what it predicts for small payloads rests on it\n",
        md.empty() ? "\n" : "", e.probe_kind, action_label(e), *e.fixed.cycles, e.fixed.ci_low, e.fixed.ci_high,
        d.median, d.low, d.high, confidence_label(d.confidence), d.n, e.r2.value_or(0));
  }
  return md;
}

// A tracer's tables: fixed and per byte, the handler lines, the actions over
// the empty handler, contention.
std::string tracer_tables(const Model& m, const std::string& t, double ns) {
  std::string md;
  md += fmt::format(
      "\n## {}\n\n| probe kind | action | fixed (Table 6 analog) | per byte | R² | worst residual "
      "| workloads |\n|---|---|---|---|---:|---:|---|\n",
      t);
  for (const auto& e : m.entries) {
    if (e.tracer != t) continue;
    std::string wl;
    for (const auto& w : e.workloads) wl += (wl.empty() ? "" : ", ") + w;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", e.probe_kind, action_label(e), cell(e.fixed, ns),
                      e.per_byte.ok() ? fmt::format("{:.3f} [{:.3f}, {:.3f}]", *e.per_byte.cycles, e.per_byte.ci_low,
                                                    e.per_byte.ci_high)
                                      : "—",
                      e.r2 ? fmt::format("{:.3f}", *e.r2) : "",
                      e.worst_residual_cycles ? fmt::format("{:.1f}", *e.worst_residual_cycles) : "", wl);
  }
  md += direct_disagreements(m, t);
  bool handlers = false;
  for (const auto& e : m.entries) {
    if (e.tracer != t || (!e.per_ecb.ok() && !e.false_predicate.ok())) continue;
    if (!handlers)
      md +=
          "\n| probe kind | action | per extra handler, acting (`per_ecb`) | R², worst residual | per extra "
          "handler, predicate false (`false_predicate`) | R², worst residual |\n|---|---|---|---|---|---|\n";
    handlers = true;
    auto quality = [](const std::optional<Entry::LineQuality>& q) {
      return q ? fmt::format("{:.3f}, {:.1f} ({} points)", q->r2, q->worst_residual_cycles, q->points) : std::string();
    };
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", e.probe_kind, action_label(e),
                      e.per_ecb.ok() ? cell(e.per_ecb, ns) : "—", quality(e.handler_fit[1]),
                      e.false_predicate.ok() ? cell(e.false_predicate, ns) : "—", quality(e.handler_fit[0]));
  }
  bool actions = false;
  for (const auto& e : m.entries) {
    if (e.tracer != t || !e.action_over_empty.ok()) continue;
    if (!actions)
      md += fmt::format(
          "\n| probe kind | action | over the empty handler (Table 4 analog; the `{}` row's fixed is "
          "the flow, Table 6) |\n|---|---|---|\n",
          kEmptyAction);
    actions = true;
    md += fmt::format("| {} | {} | {} |\n", e.probe_kind, action_label(e), cell(e.action_over_empty, ns));
  }
  bool any = false;
  for (const auto& e : m.entries) {
    if (e.tracer != t) continue;
    for (const auto& [threads, p] : e.contention) {
      if (!p.ok()) continue;
      if (!any) md += "\n| probe kind | action | threads | contention (extra cycles per event) |\n|---|---|---:|---|\n";
      any = true;
      md += fmt::format("| {} | {} | {} | {} |\n", e.probe_kind, action_label(e), threads, cell(p, ns));
    }
  }
  return md;
}

// The consumers' terms (Table 3 analog).
std::string consumer_table(const Model& m, double ns) {
  std::string md;
  bool consumers = false;
  for (const auto& e : m.entries) {
    if (!e.consumer_fit || !e.consumer_per_record.ok()) continue;
    if (!consumers)
      md +=
          "\n## Consumers (Table 3 analog)\n\nThe consumer's CPU time (reader threads, daemons, reads on the "
          "measuring thread) per record, per recorded byte, per wakeup and per enable/disable cycle (a session's "
          "start and stop, a read pass at disable), and per enable/disable cycle of each extra handler (from the "
          "handler sweep's runs whose extra predicates fail), fitted over benchmarks; its idle time is spread over "
          "them.\n\n"
          "| tracer | probe kind | action | per record | per byte | per wakeup | per enable | per enable, extra "
          "handler | user share | R², worst residual (points) |\n|---|---|---|---|---|---|---|---|---:|---|\n";
    consumers = true;
    const auto& q = *e.consumer_fit;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3f}, {:.1f} ({}) |\n", e.tracer, e.probe_kind,
                      action_label(e), cell(e.consumer_per_record, ns),
                      e.consumer_per_record_byte.ok()
                          ? fmt::format("{:.3f} [{:.3f}, {:.3f}]", *e.consumer_per_record_byte.cycles,
                                        e.consumer_per_record_byte.ci_low, e.consumer_per_record_byte.ci_high)
                          : "—",
                      cell(e.consumer_per_wakeup, ns), cell(e.consumer_per_enable, ns),
                      cell(e.consumer_per_enable_ecb, ns),
                      q.user_fraction ? fmt::format("{:.2f} ({} ticks)", *q.user_fraction, q.ticks) : "—", q.r2,
                      q.worst_residual_cycles, q.points);
  }
  return md;
}

// What a probe pays per consumer wakeup.
std::string wakeup_table(const Model& m, double ns) {
  std::string md;
  bool wakeups = false;
  for (const auto& e : m.entries) {
    if (!e.probe_per_wakeup.ok()) continue;
    if (!wakeups)
      md +=
          "\n## What a probe pays per consumer wakeup\n\nThe benchmarks' overhead per event regressed on wakeups "
          "per record (runs that differ only in the wakeup policy, pooled): the probe's own share of a wakeup "
          "(an irq_work, a wakeup of the reader). `fixed` holds it at the entry's own wakeups per record "
          "(w_fit).\n\n| tracer | probe kind | action | per wakeup (`probe_per_wakeup`) | w_fit |\n"
          "|---|---|---|---|---:|\n";
    wakeups = true;
    md += fmt::format("| {} | {} | {} | {} | {} |\n", e.tracer, e.probe_kind, action_label(e),
                      cell(e.probe_per_wakeup, ns),
                      e.wakeups_per_record ? fmt::format("{:.3f}", *e.wakeups_per_record) : std::string("—"));
  }
  return md;
}

// After an idle gap (Table 5 analog).
std::string idle_table(const Model& m, double ns) {
  std::string md;
  bool idle = false;
  for (const auto& e : m.entries) {
    if (!e.idle_start.ok() && !e.consumer_per_idle_wakeup.ok()) continue;
    if (!idle)
      md +=
          "\n## After an idle gap (Table 5 analog)\n\nRuns with a sleep before each sample (`run --gap-us`): what "
          "a burst's first event costs beyond `fixed` when it follows an idle gap (the consumer asleep on an idle "
          "CPU, caches and predictors cold; `idle_start`), and what waking such a consumer costs it "
          "(`consumer_per_idle_wakeup`, the paper's context switch on an idle system). `idle_start` is over the hot "
          "cost of the burst's other events: the entry's own, or where its hot runs wake the consumer, that of the "
          "configuration named (it wakes none; a burst's other events wake no one).\n\n| tracer | probe kind | "
          "action | gap (µs) | per burst (`idle_start`) | over the hot line of | consumer per idle wakeup |\n"
          "|---|---|---|---:|---|---|---|\n";
    idle = true;
    std::string base = "itself";
    if (e.idle_base_options) {
      Entry b = e;
      b.options = *e.idle_base_options;
      base = action_label(b);
    }
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", e.tracer, e.probe_kind, action_label(e),
                      e.idle_gap_us ? fmt::format("{:.0f}", *e.idle_gap_us) : std::string("—"), cell(e.idle_start, ns),
                      base, cell(e.consumer_per_idle_wakeup, ns));
  }
  return md;
}

// What the runs did not measure: each reason once, with the entries and
// terms it holds for (a reason shared by six consumer terms of two entries
// is one line, not twelve).
std::string not_measured(const Model& m) {
  using Where = std::vector<std::pair<std::string, std::vector<std::string>>>;  // entry -> terms
  std::vector<std::string> reasons;                                             // in the order first met
  std::map<std::string, Where> where;
  auto add = [&](const Entry& e, const std::string& term, const std::string& reason) {
    const std::string entry = fmt::format("{} {} {}", e.tracer, e.probe_kind, action_label(e));
    auto [it, fresh] = where.try_emplace(reason);
    if (fresh) reasons.push_back(reason);
    Where& w = it->second;
    if (w.empty() || w.back().first != entry) w.push_back({entry, {}});
    auto& terms = w.back().second;
    if (std::find(terms.begin(), terms.end(), term) == terms.end()) terms.push_back(term);
  };
  for (const auto& e : m.entries) {
    const std::string vague = fmt::format(
        "not determined here: a 95% interval over ten times as wide as the figure; more runs of the configuration: "
        "`{}`",
        run_command(e));
    for (const auto& [name, p] : named_params(e)) {
      if (name.rfind("contention_", 0) != 0 && !p->ok()) add(e, name, p->missing);
      if (!determined(*p))
        add(e, name.rfind("contention_", 0) == 0 ? "contention(" + name.substr(11) + ")" : name, vague);
    }
    for (const auto& [t, p] : e.contention)
      if (!p.ok()) add(e, fmt::format("contention({})", t), p.missing);
    if (e.consumer_fit && !e.consumer_fit->user_fraction)
      add(e, "consumer user share", e.consumer_fit->user_fraction_missing);
    if (e.consumer_fit && !e.consumer_fit->per_wakeup_from.empty())
      add(e, "consumer_per_wakeup", e.consumer_fit->per_wakeup_from);
  }
  std::string md = "\n## What the runs did not measure\n\n";
  for (const auto& reason : reasons) {
    std::vector<std::string> at;
    for (const auto& [entry, terms] : where[reason]) at.push_back(fmt::format("{}: {}", entry, fmt::join(terms, ", ")));
    md += fmt::format("- {} — {}\n", fmt::join(at, "; "), reason);
  }
  return md;
}

}  // namespace

std::string to_markdown(const Model& m) {
  const double ns = 1e9 / m.tsc_hz;
  std::string md = header(m);
  std::set<std::string> tracers;
  for (const auto& e : m.entries) tracers.insert(e.tracer);
  for (const auto& t : tracers) md += tracer_tables(m, t, ns);
  return md + consumer_table(m, ns) + wakeup_table(m, ns) + idle_table(m, ns) + not_measured(m);
}

}  // namespace tracebench::model
