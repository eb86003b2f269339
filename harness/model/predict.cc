// `tracebench model predict`: eqs. 4-8 of the cost model (tracebench/model.h)
// for a scenario of probes and consumers.
#include <cmath>

#include <fmt/format.h>

#include "tracebench/model.h"

namespace tracebench::model {
namespace {

Status need(const Param& p, const char* name, const Entry& e) {
  if (p.ok()) return Status::ok();
  return Status::error(fmt::format("model predict: {} {} {}: the model has no {}: {}", e.tracer, e.probe_kind, e.action,
                                   name, p.missing));
}

std::string options_text(const std::map<std::string, std::string>& o) {
  std::string t;
  for (const auto& [k, v] : o) t += fmt::format("{}{}={}", t.empty() ? "" : ",", k, v);
  return t.empty() ? "no options" : t;
}

// The entry a probe or consumer names: the one with its options, or the
// only configuration the model has of that tracer, probe kind and action.
Status entry_for(const Model& m, const std::string& tracer, const std::string& kind, const std::string& action,
                 const std::optional<std::map<std::string, std::string>>& options, const Entry** e) {
  std::vector<const Entry*> same;
  for (const auto& x : m.entries)
    if (x.tracer == tracer && x.probe_kind == kind && x.action == action) same.push_back(&x);
  if (options) {
    *e = m.find(tracer, kind, action, *options);
    if (*e) return Status::ok();
  } else if (same.size() == 1) {
    *e = same[0];
    return Status::ok();
  }
  if (!same.empty()) {
    std::string configs;
    for (const Entry* x : same)
      configs += fmt::format("{}{{{}}}", configs.empty() ? "" : ", ", options_text(x->options));
    return Status::error(
        fmt::format("model predict: the model has {} configuration(s) of {} {} {} ({}){}: say which "
                    "with \"options\"",
                    same.size(), tracer, kind, action, configs,
                    options ? fmt::format(", none with {}", options_text(*options)) : ""));
  }
  std::string known;
  for (const auto& x : m.entries)
    known += fmt::format("{}{} {} {}", known.empty() ? "" : ", ", x.tracer, x.probe_kind, x.action);
  return Status::error(
      fmt::format("model predict: the model has no entry for {} {} {} (it has: {})", tracer, kind, action, known));
}

}  // namespace

Status predict(const Model& m, const Scenario& s, Prediction* out) {
  if (!(m.tsc_hz > 0)) return Status::error("model predict: the model has no TSC rate");
  Prediction p;
  for (const auto& load : s.probes) {
    const Entry* e = nullptr;
    TB_TRY(entry_for(m, load.tracer, load.probe_kind, load.action, load.options, &e));
    TB_TRY(need(e->fixed, "fixed cost", *e));
    double c = *e->fixed.cycles;
    if (load.payload_bytes > 0) {
      TB_TRY(need(e->per_byte, "per-byte cost", *e));
      c += static_cast<double>(load.payload_bytes) * *e->per_byte.cycles;
    }
    if (load.handlers > 1) {
      TB_TRY(need(e->false_predicate, "false-predicate cost", *e));
      double extra = *e->false_predicate.cycles;
      if (load.predicate_true > 0) {
        TB_TRY(need(e->per_ecb, "per-handler cost", *e));
        extra += load.predicate_true * (*e->per_ecb.cycles - *e->false_predicate.cycles);
      }
      c += (load.handlers - 1) * extra;
    }
    if (load.threads > 1) {
      auto it = e->contention.find(load.threads);
      if (it == e->contention.end())
        return Status::error(fmt::format("model predict: {} {} {}: the model has no contention term for {} threads",
                                         e->tracer, e->probe_kind, e->action, load.threads));
      TB_TRY(need(it->second, "contention term", *e));
      c += *it->second.cycles;
    }
    ProbeCost pc;
    std::optional<double> w_fit = e->wakeups_per_record;
    if (load.bursts_hz > 0 && load.rate_hz > 0) {
      // Each burst's first event follows an idle gap.
      if (load.bursts_hz > load.rate_hz)
        return Status::error(
            fmt::format("model predict: {} {} {}: {} bursts/s at {} firings/s: a burst has at least "
                        "one firing",
                        e->tracer, e->probe_kind, e->action, load.bursts_hz, load.rate_hz));
      TB_TRY(need(e->idle_start, "cost of a burst's first event after an idle gap (idle_start)", *e));
      if (e->idle_base_options) {
        // The burst's other events at the quiet configuration's hot line,
        // against which idle_start was measured (it woke no consumer).
        const Entry* base = m.find(e->tracer, e->probe_kind, e->action, *e->idle_base_options);
        if (!base)
          return Status::error(
              fmt::format("model predict: {} {} {}: idle_start is against the configuration {{{}}}, "
                          "which the model lacks",
                          e->tracer, e->probe_kind, e->action, options_text(*e->idle_base_options)));
        TB_TRY(need(base->fixed, "fixed cost (of the quiet configuration)", *base));
        c += *base->fixed.cycles - *e->fixed.cycles;
        if (load.payload_bytes > 0) {
          TB_TRY(need(base->per_byte, "per-byte cost (of the quiet configuration)", *base));
          c += static_cast<double>(load.payload_bytes) * (*base->per_byte.cycles - *e->per_byte.cycles);
        }
        w_fit = base->wakeups_per_record;
      }
      pc.idle_cycles = load.bursts_hz / load.rate_hz * *e->idle_start.cycles;
      c += pc.idle_cycles;
    }
    if (load.wakeups_hz && load.rate_hz > 0) {
      // The firing cost at the scenario's wakeups per firing rather than the
      // entry's own; a burst's first wakeup is in idle_start.
      const double w = std::max(0.0, *load.wakeups_hz - load.bursts_hz) / load.rate_hz;
      if (!e->probe_per_wakeup.ok())
        pc.wakeup_note =
            fmt::format("{:.3g} wakeups per firing, not costed (fixed holds {} of its runs): {}", w,
                        w_fit ? fmt::format("the {:.3g}", *w_fit) : std::string("those"), e->probe_per_wakeup.missing);
      else if (!w_fit)
        pc.wakeup_note = "the entry's runs did not count their wakeups per record";
      else
        pc.wakeup_cycles = (w - *w_fit) * *e->probe_per_wakeup.cycles;
      c += pc.wakeup_cycles;
    }
    pc.cycles = c;
    pc.cycles_per_s = load.rate_hz * c;
    pc.cpu_percent = 100 * pc.cycles_per_s / m.tsc_hz;
    p.cost_b += pc.cycles_per_s;
    p.probes.push_back(pc);
  }
  for (const auto& load : s.consumers) {
    const Entry* e = nullptr;
    TB_TRY(entry_for(m, load.tracer, load.probe_kind, load.action, load.options, &e));
    double d = 0;  // the consumer's cycles per second, user and kernel
    if (load.records_hz > 0) {
      TB_TRY(need(e->consumer_per_record, "consumer cost per record", *e));
      double per = *e->consumer_per_record.cycles;
      if (load.payload_bytes > 0) {
        TB_TRY(need(e->consumer_per_record_byte, "consumer cost per recorded byte", *e));
        per += static_cast<double>(load.payload_bytes) * *e->consumer_per_record_byte.cycles;
      }
      d += load.records_hz * per;
    }
    if (load.idle_wakeups_hz > load.wakeups_hz)
      return Status::error(
          fmt::format("model predict: {} {} {}: idle_wakeups_hz {} is more than wakeups_hz {} (they "
                      "are some of them)",
                      e->tracer, e->probe_kind, e->action, load.idle_wakeups_hz, load.wakeups_hz));
    if (load.wakeups_hz > load.idle_wakeups_hz) {
      TB_TRY(need(e->consumer_per_wakeup, "consumer cost per wakeup", *e));
      d += (load.wakeups_hz - load.idle_wakeups_hz) * *e->consumer_per_wakeup.cycles;
    }
    if (load.idle_wakeups_hz > 0) {
      TB_TRY(need(e->consumer_per_idle_wakeup, "consumer cost per wakeup after an idle gap", *e));
      d += load.idle_wakeups_hz * *e->consumer_per_idle_wakeup.cycles;
    }
    // Enable/disable cycles: without the term their cost is in the per-record
    // one (at the runs' cycles per record), so a scenario with none is
    // predicted as the runs had them.
    if (load.enables_hz > 0 && e->consumer_per_enable.ok()) d += load.enables_hz * *e->consumer_per_enable.cycles;
    // The extra handlers' enable cycles; without the term (none measured, or
    // not above the fit's noise) they are taken to cost nothing.
    if (load.enables_hz > 0 && load.handlers > 1 && e->consumer_per_enable_ecb.ok())
      d += load.enables_hz * (load.handlers - 1) * *e->consumer_per_enable_ecb.cycles;
    if (d == 0) continue;
    if (!e->consumer_fit || !e->consumer_fit->user_fraction) {
      // The total holds; only its split is unknown.
      p.cost_ac_unsplit += d;
      p.split_missing = fmt::format(
          "{} {} {}: no user/kernel split of the consumer's time (Cost_A vs Cost_C): {}", e->tracer, e->probe_kind,
          e->action, e->consumer_fit ? e->consumer_fit->user_fraction_missing : std::string("no consumer fit"));
      continue;
    }
    const double u = *e->consumer_fit->user_fraction;
    p.cost_a += u * d;
    p.cost_c += (1 - u) * d;
  }
  p.cpu_percent_a = 100 * p.cost_a / m.tsc_hz;
  p.cpu_percent_b = 100 * p.cost_b / m.tsc_hz;
  p.cpu_percent_c = 100 * p.cost_c / m.tsc_hz;
  p.cpu_percent_ac_unsplit = 100 * p.cost_ac_unsplit / m.tsc_hz;
  p.cpu_percent = p.cpu_percent_a + p.cpu_percent_b + p.cpu_percent_c + p.cpu_percent_ac_unsplit;
  *out = std::move(p);
  return Status::ok();
}

Status check_prediction_costs(const Scenario& s, const Prediction& p) {
  auto negative = [](const std::string& what, double v, const char* unit) {
    return Status::error(fmt::format(
        "model predict: {}: the model's terms add up to {:.1f} {}, and a cost is not negative: its signed terms "
        "(differences, the consumer's least-squares terms) do not hold for this scenario (refit the model from "
        "consistent runs)",
        what, v, unit));
  };
  for (std::size_t i = 0; i < p.probes.size() && i < s.probes.size(); ++i)
    if (p.probes[i].cycles < 0)
      return negative(fmt::format("{} {} {}", s.probes[i].tracer, s.probes[i].probe_kind, s.probes[i].action),
                      p.probes[i].cycles, "cycles a firing");
  for (const auto& [what, v] :
       {std::pair{"the consumers, user", p.cost_a}, std::pair{"the consumers, kernel", p.cost_c},
        std::pair{"the consumers", p.cost_ac_unsplit}})
    if (v < 0) return negative(what, v, "cycles a second");
  return Status::ok();
}

nlohmann::json to_json(const Scenario& s, const Prediction& p) {
  nlohmann::json probes = nlohmann::json::array();
  for (std::size_t i = 0; i < s.probes.size(); ++i) {
    const auto& l = s.probes[i];
    probes.push_back({{"tracer", l.tracer},
                      {"probe_kind", l.probe_kind},
                      {"action", l.action},
                      {"payload_bytes", l.payload_bytes},
                      {"handlers", l.handlers},
                      {"predicate_true", l.predicate_true},
                      {"rate_hz", l.rate_hz},
                      {"threads", l.threads},
                      {"cycles", p.probes[i].cycles},
                      {"cycles_per_s", p.probes[i].cycles_per_s},
                      {"cpu_percent", p.probes[i].cpu_percent}});
    if (l.bursts_hz > 0) {
      probes.back()["bursts_hz"] = l.bursts_hz;
      probes.back()["idle_cycles"] = p.probes[i].idle_cycles;
    }
    if (l.wakeups_hz) {
      probes.back()["wakeups_hz"] = *l.wakeups_hz;
      probes.back()["wakeup_cycles"] = p.probes[i].wakeup_cycles;
      if (!p.probes[i].wakeup_note.empty()) probes.back()["wakeup_note"] = p.probes[i].wakeup_note;
    }
  }
  nlohmann::json j = {{"probes", probes},
                      {"cost_a_cycles_per_s", p.cost_a},
                      {"cost_b_cycles_per_s", p.cost_b},
                      {"cost_c_cycles_per_s", p.cost_c},
                      {"cost_ac_unsplit_cycles_per_s", p.cost_ac_unsplit},
                      {"cpu_percent",
                       {{"a_consumer_user", p.cpu_percent_a},
                        {"b_probes", p.cpu_percent_b},
                        {"c_consumer_kernel", p.cpu_percent_c},
                        {"ac_consumer_unsplit", p.cpu_percent_ac_unsplit},
                        {"total", p.cpu_percent}}}};
  if (!p.split_missing.empty()) j["split_missing"] = p.split_missing;
  return j;
}

std::string to_text(const Scenario& s, const Prediction& p) {
  std::string out = fmt::format("{:<34} {:>8} {:>8} {:>12} {:>12} {:>8}\n", "probe", "bytes", "handlers", "rate Hz",
                                "cycles", "CPU %");
  for (std::size_t i = 0; i < s.probes.size(); ++i) {
    const auto& l = s.probes[i];
    out += fmt::format("{:<34} {:>8} {:>8} {:>12.0f} {:>12.1f} {:>8.3f}\n",
                       fmt::format("{} {} {}", l.tracer, l.probe_kind, l.action), l.payload_bytes, l.handlers,
                       l.rate_hz, p.probes[i].cycles, p.probes[i].cpu_percent);
    if (l.wakeups_hz && p.probes[i].wakeup_note.empty())
      out += fmt::format("  of which {:.1f} cycles for {:.0f} wakeups/s (probe_per_wakeup)\n",
                         p.probes[i].wakeup_cycles, *l.wakeups_hz);
    if (!p.probes[i].wakeup_note.empty()) out += "  note: " + p.probes[i].wakeup_note + "\n";
    if (l.bursts_hz > 0)
      out += fmt::format("  of which {:.1f} cycles for {:.0f} bursts/s after an idle gap (idle_start)\n",
                         p.probes[i].idle_cycles, l.bursts_hz);
  }
  out += fmt::format("Cost_A (consumer, user)   {:>14.0f} cycles/s  {:>7.3f} % CPU\n", p.cost_a, p.cpu_percent_a);
  out += fmt::format("Cost_B (probe firings)    {:>14.0f} cycles/s  {:>7.3f} % CPU\n", p.cost_b, p.cpu_percent_b);
  out += fmt::format("Cost_C (consumer, kernel) {:>14.0f} cycles/s  {:>7.3f} % CPU\n", p.cost_c, p.cpu_percent_c);
  if (p.cost_ac_unsplit > 0)
    out += fmt::format("Cost_A + C, not split     {:>14.0f} cycles/s  {:>7.3f} % CPU  ({})\n", p.cost_ac_unsplit,
                       p.cpu_percent_ac_unsplit, p.split_missing);
  out += fmt::format("total                     {:>14.0f} cycles/s  {:>7.3f} % CPU\n",
                     p.cost_a + p.cost_b + p.cost_c + p.cost_ac_unsplit, p.cpu_percent);
  out += "CPU % is of one CPU: cycles per second over the TSC rate (200 % is two CPUs busy)\n";
  return out;
}

}  // namespace tracebench::model
