// The model's files: model.json (results/model.schema.json) and reading it
// back, model.md (the paper's table shapes, cycles and ns), model.csv, and
// SCENARIO.json for `model predict`.
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "tracebench/model.h"

namespace tracebench::model {

using nlohmann::json;

namespace {

json param_json(const Param& p) {
  if (!p.ok()) return {{"cycles", nullptr}, {"missing", p.missing}};
  return {{"cycles", *p.cycles}, {"ci_low", p.ci_low}, {"ci_high", p.ci_high}, {"n", p.n}};
}

Param param_from(const json& j) {
  Param p;
  if (j.at("cycles").is_null()) {
    p.missing = j.at("missing").get<std::string>();
    return p;
  }
  p.cycles = j.at("cycles").get<double>();
  p.ci_low = j.at("ci_low").get<double>();
  p.ci_high = j.at("ci_high").get<double>();
  p.n = j.at("n").get<std::size_t>();
  return p;
}

const std::pair<const char*, Param Entry::*> kParams[] = {
    {"fixed", &Entry::fixed},
    {"per_byte", &Entry::per_byte},
    {"per_ecb", &Entry::per_ecb},
    {"false_predicate", &Entry::false_predicate},
    {"consumer_per_record", &Entry::consumer_per_record},
    {"consumer_per_record_byte", &Entry::consumer_per_record_byte},
    {"consumer_per_wakeup", &Entry::consumer_per_wakeup},
    {"consumer_per_enable", &Entry::consumer_per_enable},
    {"consumer_per_enable_ecb", &Entry::consumer_per_enable_ecb},
    {"probe_per_wakeup", &Entry::probe_per_wakeup},
    {"idle_start", &Entry::idle_start},
    {"consumer_per_idle_wakeup", &Entry::consumer_per_idle_wakeup},
    {"action_over_empty", &Entry::action_over_empty},
};

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

std::vector<std::pair<std::string, const Param*>> named_params(const Entry& e) {
  std::vector<std::pair<std::string, const Param*>> out;
  for (const auto& [name, member] : kParams) out.emplace_back(name, &(e.*member));
  for (const auto& [t, p] : e.contention) out.emplace_back(fmt::format("contention_{}", t), &p);
  return out;
}

json to_json(const Model& m) {
  json entries = json::array();
  for (const auto& e : m.entries) {
    json params = json::object();
    for (const auto& [name, member] : kParams) params[name] = param_json(e.*member);
    json cont = json::object();
    for (const auto& [t, p] : e.contention) cont[std::to_string(t)] = param_json(p);
    json handlers = json::object();
    for (int truth : {1, 0}) {
      const auto& q = e.handler_fit[truth];
      handlers[truth ? "acting" : "false_predicate"] =
          q ? json{{"r2", q->r2}, {"worst_residual_cycles", q->worst_residual_cycles}, {"points", q->points}}
            : json(nullptr);
    }
    json points = json::array();
    for (const auto& p : e.points)
      points.push_back({{"payload_bytes", p.payload_bytes}, {"median_cycles", p.median_cycles},
                        {"predicted_cycles", p.predicted_cycles}, {"n", p.n}});
    json consumer = nullptr;
    if (const auto& q = e.consumer_fit) {
      consumer = {{"points", q->points}, {"r2", q->r2}, {"worst_residual_cycles", q->worst_residual_cycles},
                  {"user_fraction", opt(q->user_fraction)}, {"ticks", q->ticks}};
      if (!q->user_fraction) consumer["user_fraction_missing"] = q->user_fraction_missing;
      if (!q->per_wakeup_from.empty()) consumer["per_wakeup_from"] = q->per_wakeup_from;
    }
    entries.push_back({{"tracer", e.tracer}, {"probe_kind", e.probe_kind}, {"action", e.action},
                       {"options", e.options}, {"workloads", e.workloads}, {"parameters", params}, {"contention", cont},
                       {"wakeups_per_record", opt(e.wakeups_per_record)}, {"idle_gap_us", opt(e.idle_gap_us)},
                       {"idle_base_options", opt(e.idle_base_options)},
                       {"fit", {{"r2", opt(e.r2)}, {"worst_residual_cycles", opt(e.worst_residual_cycles)},
                                {"points", points}, {"handlers", handlers}, {"consumer", consumer}}}});
  }
  return {{"schema", kModelSchema},
          {"schema_version", kModelSchemaVersion},
          {"context",
           {{"host", m.host}, {"cpu_model", m.cpu_model}, {"kernel_release", m.kernel_release},
            {"execution", m.execution}, {"emulated", m.emulated}, {"tsc_hz", m.tsc_hz}, {"runs", m.runs}}},
          {"equation",
           "Cost(P) = fixed + b*per_byte + (N-1)*(false_predicate + p*(per_ecb - false_predicate)) + contention(t) "
           "+ (w' - wakeups_per_record)*probe_per_wakeup + (bursts/rate)*idle_start, w' = (wakeups/s - bursts/s)/rate; "
           "Cost_D = records/s*(consumer_per_record + b*consumer_per_record_byte) + (wakeups/s - idle wakeups/s)"
           "*consumer_per_wakeup + idle wakeups/s*consumer_per_idle_wakeup + enables/s*(consumer_per_enable + "
           "(N-1)*consumer_per_enable_ecb), "
           "Cost_A = u*Cost_D, Cost_C = (1-u)*Cost_D"},
          {"entries", entries}};
}

Status from_json(const json& j, Model* out) {
  try {
    if (j.at("schema").get<std::string>() != kModelSchema)
      return Status::error("not a tracebench model (schema is '" + j.at("schema").get<std::string>() + "')");
    if (j.at("schema_version").get<int>() != kModelSchemaVersion)
      return Status::error(fmt::format("model schema_version {} (this tracebench reads {})",
                                       j.at("schema_version").get<int>(), kModelSchemaVersion));
    Model m;
    const json& c = j.at("context");
    m.host = c.at("host");
    m.cpu_model = c.at("cpu_model");
    m.kernel_release = c.at("kernel_release");
    m.execution = c.at("execution");
    m.emulated = c.at("emulated");
    m.tsc_hz = c.at("tsc_hz");
    m.runs = c.at("runs").get<std::vector<std::string>>();
    if (!(m.tsc_hz > 0) || !std::isfinite(m.tsc_hz)) return Status::error("model: context.tsc_hz is not a positive rate");
    for (const auto& ej : j.at("entries")) {
      Entry e;
      e.tracer = ej.at("tracer");
      e.probe_kind = ej.at("probe_kind");
      e.action = ej.at("action");
      e.options = ej.at("options").get<std::map<std::string, std::string>>();
      e.workloads = ej.at("workloads").get<std::vector<std::string>>();
      for (const auto& [name, member] : kParams) e.*member = param_from(ej.at("parameters").at(name));
      for (const auto& [t, p] : ej.at("contention").items()) e.contention[std::stoi(t)] = param_from(p);
      if (!ej.at("wakeups_per_record").is_null()) e.wakeups_per_record = ej.at("wakeups_per_record").get<double>();
      if (!ej.at("idle_gap_us").is_null()) e.idle_gap_us = ej.at("idle_gap_us").get<double>();
      if (!ej.at("idle_base_options").is_null())
        e.idle_base_options = ej.at("idle_base_options").get<std::map<std::string, std::string>>();
      const json& f = ej.at("fit");
      if (!f.at("r2").is_null()) e.r2 = f.at("r2").get<double>();
      if (!f.at("worst_residual_cycles").is_null()) e.worst_residual_cycles = f.at("worst_residual_cycles").get<double>();
      for (const auto& p : f.at("points"))
        e.points.push_back({p.at("payload_bytes"), p.at("median_cycles"), p.at("predicted_cycles"), p.at("n")});
      for (int truth : {1, 0}) {
        const json& q = f.at("handlers").at(truth ? "acting" : "false_predicate");
        if (!q.is_null())
          e.handler_fit[truth] = Entry::LineQuality{q.at("r2"), q.at("worst_residual_cycles"), q.at("points")};
      }
      if (const json& q = f.at("consumer"); !q.is_null()) {
        Entry::ConsumerFit c;
        c.points = q.at("points");
        c.r2 = q.at("r2");
        c.worst_residual_cycles = q.at("worst_residual_cycles");
        c.ticks = q.at("ticks");
        if (!q.at("user_fraction").is_null()) c.user_fraction = q.at("user_fraction").get<double>();
        if (q.contains("user_fraction_missing")) c.user_fraction_missing = q.at("user_fraction_missing");
        if (q.contains("per_wakeup_from")) c.per_wakeup_from = q.at("per_wakeup_from");
        e.consumer_fit = c;
      }
      m.entries.push_back(std::move(e));
    }
    if (Status s = check_model_terms(m); !s)
      return Status::error(s.message() + "; the file was edited or damaged (fit it again: tracebench model fit)");
    *out = std::move(m);
  } catch (const std::exception& e) {
    return Status::error(std::string("model: ") + e.what());
  }
  return Status::ok();
}

// The action with its configuration, as the tables show it.
std::string action_label(const Entry& e) {
  std::string o;
  for (const auto& [k, v] : e.options) o += fmt::format("{}{}={}", o.empty() ? "" : ", ", k, v);
  return o.empty() ? e.action : fmt::format("{} ({})", e.action, o);
}

std::string to_markdown(const Model& m) {
  const double ns = 1e9 / m.tsc_hz;
  auto cell = [&](const Param& p) -> std::string {
    if (!p.ok()) return "—";
    return fmt::format("{:.1f} [{:.1f}, {:.1f}] ({:.1f} ns)", *p.cycles, p.ci_low, p.ci_high, *p.cycles * ns);
  };
  std::string md = fmt::format(
      "# Cost model parameters\n\n{} ({}), kernel {}, {}, TSC {:.3f} GHz; fitted from {} run(s). Cycles per event "
      "with the 95% bootstrap interval over repetitions, and ns.\n\n"
      "`Cost(P) = fixed + b·per_byte + (N−1)·(false_predicate + p·(per_ecb − false_predicate)) + contention(t) + (w − "
      "w_fit)·probe_per_wakeup + (bursts/rate)·idle_start`\n",
      m.host, m.cpu_model, m.kernel_release, m.emulated ? m.execution + " (emulated)" : std::string("host"),
      m.tsc_hz / 1e9, m.runs.size());
  std::set<std::string> tracers;
  for (const auto& e : m.entries) tracers.insert(e.tracer);
  for (const auto& t : tracers) {
    md += fmt::format("\n## {}\n\n| probe kind | action | fixed (Table 6 analog) | per byte | R² | worst residual "
                      "| workloads |\n|---|---|---|---|---:|---:|---|\n",
                      t);
    for (const auto& e : m.entries) {
      if (e.tracer != t) continue;
      std::string wl;
      for (const auto& w : e.workloads) wl += (wl.empty() ? "" : ", ") + w;
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", e.probe_kind, action_label(e), cell(e.fixed),
                        e.per_byte.ok() ? fmt::format("{:.3f} [{:.3f}, {:.3f}]", *e.per_byte.cycles, e.per_byte.ci_low,
                                                      e.per_byte.ci_high)
                                        : "—",
                        e.r2 ? fmt::format("{:.3f}", *e.r2) : "", e.worst_residual_cycles
                                                                      ? fmt::format("{:.1f}", *e.worst_residual_cycles)
                                                                      : "",
                        wl);
    }
    bool handlers = false;
    for (const auto& e : m.entries) {
      if (e.tracer != t || (!e.per_ecb.ok() && !e.false_predicate.ok())) continue;
      if (!handlers)
        md += "\n| probe kind | action | per extra handler, acting (`per_ecb`) | R², worst residual | per extra "
              "handler, predicate false (`false_predicate`) | R², worst residual |\n|---|---|---|---|---|---|\n";
      handlers = true;
      auto quality = [](const std::optional<Entry::LineQuality>& q) {
        return q ? fmt::format("{:.3f}, {:.1f} ({} points)", q->r2, q->worst_residual_cycles, q->points) : std::string();
      };
      md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", e.probe_kind, action_label(e),
                        e.per_ecb.ok() ? cell(e.per_ecb) : "—", quality(e.handler_fit[1]),
                        e.false_predicate.ok() ? cell(e.false_predicate) : "—", quality(e.handler_fit[0]));
    }
    bool actions = false;
    for (const auto& e : m.entries) {
      if (e.tracer != t || !e.action_over_empty.ok()) continue;
      if (!actions)
        md += fmt::format("\n| probe kind | action | over the empty handler (Table 4 analog; the `{}` row's fixed is "
                          "the flow, Table 6) |\n|---|---|---|\n",
                          kEmptyAction);
      actions = true;
      md += fmt::format("| {} | {} | {} |\n", e.probe_kind, action_label(e), cell(e.action_over_empty));
    }
    bool any = false;
    for (const auto& e : m.entries) {
      if (e.tracer != t) continue;
      for (const auto& [threads, p] : e.contention) {
        if (!p.ok()) continue;
        if (!any) md += "\n| probe kind | action | threads | contention (extra cycles per event) |\n|---|---|---:|---|\n";
        any = true;
        md += fmt::format("| {} | {} | {} | {} |\n", e.probe_kind, action_label(e), threads, cell(p));
      }
    }
  }
  bool consumers = false;
  for (const auto& e : m.entries) {
    if (!e.consumer_fit || !e.consumer_per_record.ok()) continue;
    if (!consumers)
      md += "\n## Consumers (Table 3 analog)\n\nThe consumer's CPU time (reader threads, daemons, reads on the "
            "measuring thread) per record, per recorded byte, per wakeup and per enable/disable cycle (a session's "
            "start and stop, a read pass at disable), and per enable/disable cycle of each extra handler (from the "
            "handler sweep's runs whose extra predicates fail), fitted over benchmarks; its idle time is spread over "
            "them.\n\n"
            "| tracer | probe kind | action | per record | per byte | per wakeup | per enable | per enable, extra "
            "handler | user share | R², worst residual (points) |\n|---|---|---|---|---|---|---|---|---:|---|\n";
    consumers = true;
    const auto& q = *e.consumer_fit;
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3f}, {:.1f} ({}) |\n", e.tracer,
                      e.probe_kind,
                      action_label(e),
                      cell(e.consumer_per_record),
                      e.consumer_per_record_byte.ok()
                          ? fmt::format("{:.3f} [{:.3f}, {:.3f}]", *e.consumer_per_record_byte.cycles,
                                        e.consumer_per_record_byte.ci_low, e.consumer_per_record_byte.ci_high)
                          : "—",
                      cell(e.consumer_per_wakeup), cell(e.consumer_per_enable), cell(e.consumer_per_enable_ecb),
                      q.user_fraction ? fmt::format("{:.2f} ({} ticks)", *q.user_fraction, q.ticks) : "—", q.r2,
                      q.worst_residual_cycles, q.points);
  }
  bool wakeups = false;
  for (const auto& e : m.entries) {
    if (!e.probe_per_wakeup.ok()) continue;
    if (!wakeups)
      md += "\n## What a probe pays per consumer wakeup\n\nThe benchmarks' overhead per event regressed on wakeups "
            "per record (runs that differ only in the wakeup policy, pooled): the probe's own share of a wakeup "
            "(an irq_work, a wakeup of the reader). `fixed` holds it at the entry's own wakeups per record "
            "(w_fit).\n\n| tracer | probe kind | action | per wakeup (`probe_per_wakeup`) | w_fit |\n"
            "|---|---|---|---|---:|\n";
    wakeups = true;
    md += fmt::format("| {} | {} | {} | {} | {} |\n", e.tracer, e.probe_kind, action_label(e), cell(e.probe_per_wakeup),
                      e.wakeups_per_record ? fmt::format("{:.3f}", *e.wakeups_per_record) : std::string("—"));
  }
  bool idle = false;
  for (const auto& e : m.entries) {
    if (!e.idle_start.ok() && !e.consumer_per_idle_wakeup.ok()) continue;
    if (!idle)
      md += "\n## After an idle gap (Table 5 analog)\n\nRuns with a sleep before each sample (`run --gap-us`): what "
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
                      e.idle_gap_us ? fmt::format("{:.0f}", *e.idle_gap_us) : std::string("—"), cell(e.idle_start),
                      base, cell(e.consumer_per_idle_wakeup));
  }
  md += "\n## What the runs did not measure\n\n";
  std::set<std::string> said;
  for (const auto& e : m.entries) {
    std::vector<std::pair<std::string, const Param*>> all;
    for (const auto& [name, member] : kParams) all.push_back({name, &(e.*member)});
    for (const auto& [t, p] : e.contention) all.push_back({fmt::format("contention({})", t), &p});
    for (const auto& [name, p] : all) {
      if (p->ok()) continue;
      std::string line = fmt::format("- {} {} {}: {}: {}\n", e.tracer, e.probe_kind, action_label(e), name, p->missing);
      if (said.insert(line).second) md += line;
    }
    if (e.consumer_fit && !e.consumer_fit->user_fraction)
      md += fmt::format("- {} {} {}: consumer user share: {}\n", e.tracer, e.probe_kind, action_label(e),
                        e.consumer_fit->user_fraction_missing);
    if (e.consumer_fit && !e.consumer_fit->per_wakeup_from.empty())
      md += fmt::format("- {} {} {}: consumer_per_wakeup: {}\n", e.tracer, e.probe_kind, action_label(e),
                        e.consumer_fit->per_wakeup_from);
  }
  return md;
}

std::string to_csv(const Model& m) {
  std::string out = "tracer,probe_kind,action,options,parameter,cycles,ci_low,ci_high,n,ns,missing\n";
  const double ns = 1e9 / m.tsc_hz;
  auto row = [&](const Entry& e, const std::string& name, const Param& p) {
    std::string opts;
    for (const auto& [k, v] : e.options) opts += fmt::format("{}{}={}", opts.empty() ? "" : ";", k, v);
    for (char& ch : opts)
      if (ch == ',' || ch == '"' || ch == '\n') ch = ' ';
    std::string why = p.missing;
    for (char& ch : why)
      if (ch == ',' || ch == '"' || ch == '\n') ch = ' ';
    if (p.ok())
      out += fmt::format("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{},{:.3f},\n", e.tracer, e.probe_kind, e.action, opts, name,
                         *p.cycles, p.ci_low, p.ci_high, p.n, *p.cycles * ns);
    else
      out += fmt::format("{},{},{},{},{},,,,,,{}\n", e.tracer, e.probe_kind, e.action, opts, name, why);
  };
  for (const auto& e : m.entries) {
    for (const auto& [name, member] : kParams) row(e, name, e.*member);
    for (const auto& [t, p] : e.contention) row(e, fmt::format("contention_{}", t), p);
  }
  return out;
}

Status scenario_from_json(const json& j, Scenario* out) {
  auto bad = [](const std::string& what) { return Status::error("scenario: " + what); };
  if (!j.is_object()) return bad("expected an object with \"probes\" and optionally \"consumers\"");
  for (const auto& [k, v] : j.items())
    if (k != "probes" && k != "consumers" && k != "comment") return bad("unknown key '" + k + "'");
  if (!j.contains("probes") || !j.at("probes").is_array() || j.at("probes").empty())
    return bad("\"probes\" must be a non-empty array");
  Scenario s;
  auto text = [&](const json& o, const char* k, std::string* v, const std::string& where) -> Status {
    if (!o.contains(k) || !o.at(k).is_string() || o.at(k).get<std::string>().empty())
      return bad(where + ": \"" + k + "\" must be a non-empty string");
    *v = o.at(k).get<std::string>();
    return Status::ok();
  };
  auto number = [&](const json& o, const char* k, double lo, double hi, double* v,
                    const std::string& where) -> Status {
    if (!o.contains(k)) return Status::ok();  // the default stands
    if (!o.at(k).is_number()) return bad(where + ": \"" + k + "\" must be a number");
    double x = o.at(k).get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) return bad(fmt::format("{}: \"{}\" = {} is outside {}..{}", where, k, x, lo, hi));
    *v = x;
    return Status::ok();
  };
  const std::set<std::string> probe_keys = {"tracer",     "probe_kind", "action",  "options",    "payload_bytes",
                                            "handlers",   "predicate_true", "rate_hz", "threads", "wakeups_hz",
                                            "bursts_hz"};
  auto options = [&](const json& o, std::optional<std::map<std::string, std::string>>* v,
                     const std::string& where) -> Status {
    if (!o.contains("options")) return Status::ok();
    if (!o.at("options").is_object()) return bad(where + ": \"options\" must be an object of strings");
    std::map<std::string, std::string> m;
    for (const auto& [k, x] : o.at("options").items()) {
      if (!x.is_string()) return bad(where + ": options." + k + " must be a string");
      m[k] = x.get<std::string>();
    }
    *v = m;
    return Status::ok();
  };
  for (std::size_t i = 0; i < j.at("probes").size(); ++i) {
    const json& o = j.at("probes")[i];
    std::string where = fmt::format("probes[{}]", i);
    if (!o.is_object()) return bad(where + ": expected an object");
    for (const auto& [k, v] : o.items())
      if (!probe_keys.count(k)) return bad(where + ": unknown key '" + k + "'");
    ProbeLoad p;
    TB_TRY(text(o, "tracer", &p.tracer, where));
    TB_TRY(text(o, "probe_kind", &p.probe_kind, where));
    TB_TRY(text(o, "action", &p.action, where));
    TB_TRY(options(o, &p.options, where));
    double bytes = 0, handlers = 1, threads = 1;
    TB_TRY(number(o, "payload_bytes", 0, 1 << 20, &bytes, where));
    TB_TRY(number(o, "handlers", 1, 1024, &handlers, where));
    TB_TRY(number(o, "threads", 1, 4096, &threads, where));
    TB_TRY(number(o, "predicate_true", 0, 1, &p.predicate_true, where));
    if (!o.contains("rate_hz")) return bad(where + ": \"rate_hz\" is required");
    TB_TRY(number(o, "rate_hz", 0, 1e9, &p.rate_hz, where));
    if (o.contains("wakeups_hz")) {
      double w = 0;
      TB_TRY(number(o, "wakeups_hz", 0, 1e9, &w, where));
      p.wakeups_hz = w;
    }
    TB_TRY(number(o, "bursts_hz", 0, 1e9, &p.bursts_hz, where));
    if (p.bursts_hz > p.rate_hz)
      return bad(fmt::format("{}: \"bursts_hz\" {} is more than \"rate_hz\" {} (a burst fires at least once)", where,
                             p.bursts_hz, p.rate_hz));
    if (bytes != std::floor(bytes) || handlers != std::floor(handlers) || threads != std::floor(threads))
      return bad(where + ": payload_bytes, handlers and threads are whole numbers");
    p.payload_bytes = static_cast<std::uint64_t>(bytes);
    p.handlers = static_cast<int>(handlers);
    p.threads = static_cast<int>(threads);
    s.probes.push_back(p);
  }
  if (j.contains("consumers")) {
    if (!j.at("consumers").is_array()) return bad("\"consumers\" must be an array");
    const std::set<std::string> keys = {"tracer",     "probe_kind", "action",     "options",       "records_hz",
                                        "wakeups_hz", "enables_hz", "payload_bytes", "idle_wakeups_hz",
                                        "handlers"};
    for (std::size_t i = 0; i < j.at("consumers").size(); ++i) {
      const json& o = j.at("consumers")[i];
      std::string where = fmt::format("consumers[{}]", i);
      if (!o.is_object()) return bad(where + ": expected an object");
      for (const auto& [k, v] : o.items())
        if (!keys.count(k)) return bad(where + ": unknown key '" + k + "'");
      ConsumerLoad c;
      TB_TRY(text(o, "tracer", &c.tracer, where));
      TB_TRY(text(o, "probe_kind", &c.probe_kind, where));
      TB_TRY(text(o, "action", &c.action, where));
      TB_TRY(options(o, &c.options, where));
      TB_TRY(number(o, "records_hz", 0, 1e9, &c.records_hz, where));
      TB_TRY(number(o, "wakeups_hz", 0, 1e9, &c.wakeups_hz, where));
      TB_TRY(number(o, "enables_hz", 0, 1e6, &c.enables_hz, where));
      TB_TRY(number(o, "idle_wakeups_hz", 0, 1e9, &c.idle_wakeups_hz, where));
      if (c.idle_wakeups_hz > c.wakeups_hz)
        return bad(fmt::format("{}: \"idle_wakeups_hz\" {} is more than \"wakeups_hz\" {} (they are some of them)",
                               where, c.idle_wakeups_hz, c.wakeups_hz));
      double bytes = 0, handlers = 1;
      TB_TRY(number(o, "payload_bytes", 0, 1 << 20, &bytes, where));
      TB_TRY(number(o, "handlers", 1, 1024, &handlers, where));
      if (bytes != std::floor(bytes) || handlers != std::floor(handlers))
        return bad(where + ": payload_bytes and handlers are whole numbers");
      c.payload_bytes = static_cast<std::uint64_t>(bytes);
      c.handlers = static_cast<int>(handlers);
      s.consumers.push_back(c);
    }
  }
  *out = std::move(s);
  return Status::ok();
}

}  // namespace tracebench::model
