// model.json (results/model.schema.json) and reading it back, and
// SCENARIO.json for `model predict`; model.md is model_markdown.cc's, model.csv
// model_csv.cc's.
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "tracebench/json_optional.h"
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
      points.push_back({{"payload_bytes", p.payload_bytes},
                        {"median_cycles", p.median_cycles},
                        {"predicted_cycles", p.predicted_cycles},
                        {"n", p.n}});
    json consumer = nullptr;
    if (const auto& q = e.consumer_fit) {
      consumer = {{"points", q->points},
                  {"r2", q->r2},
                  {"worst_residual_cycles", q->worst_residual_cycles},
                  {"user_fraction", json_or_null(q->user_fraction)},
                  {"ticks", q->ticks}};
      if (!q->user_fraction) consumer["user_fraction_missing"] = q->user_fraction_missing;
      if (!q->per_wakeup_from.empty()) consumer["per_wakeup_from"] = q->per_wakeup_from;
    }
    json direct = nullptr;
    if (const auto& d = e.fixed_direct)
      direct = {{"median_cycles", d->median},  {"low", d->low}, {"high", d->high},
                {"confidence", d->confidence}, {"n", d->n},     {"agrees", d->agrees}};
    entries.push_back({{"tracer", e.tracer},
                       {"probe_kind", e.probe_kind},
                       {"action", e.action},
                       {"options", e.options},
                       {"workloads", e.workloads},
                       {"parameters", params},
                       {"contention", cont},
                       {"wakeups_per_record", json_or_null(e.wakeups_per_record)},
                       {"idle_gap_us", json_or_null(e.idle_gap_us)},
                       {"idle_base_options", json_or_null(e.idle_base_options)},
                       {"fit",
                        {{"r2", json_or_null(e.r2)},
                         {"worst_residual_cycles", json_or_null(e.worst_residual_cycles)},
                         {"points", points},
                         {"fixed_direct", direct},
                         {"handlers", handlers},
                         {"consumer", consumer}}}});
  }
  return {{"schema", kModelSchema},
          {"schema_version", kModelSchemaVersion},
          {"context",
           {{"host", m.host},
            {"cpu_model", m.cpu_model},
            {"kernel_release", m.kernel_release},
            {"execution", m.execution},
            {"emulated", m.emulated},
            {"simulated_host", m.simulated_host},
            {"tsc_hz", m.tsc_hz},
            {"runs", m.runs}}},
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
    m.simulated_host = c.at("simulated_host");
    m.tsc_hz = c.at("tsc_hz");
    m.runs = c.at("runs").get<std::vector<std::string>>();
    if (!(m.tsc_hz > 0) || !std::isfinite(m.tsc_hz))
      return Status::error("model: context.tsc_hz is not a positive rate");
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
      if (!f.at("worst_residual_cycles").is_null())
        e.worst_residual_cycles = f.at("worst_residual_cycles").get<double>();
      for (const auto& p : f.at("points"))
        e.points.push_back({p.at("payload_bytes"), p.at("median_cycles"), p.at("predicted_cycles"), p.at("n")});
      if (const json& d = f.at("fixed_direct"); !d.is_null())
        e.fixed_direct = Entry::DirectCheck{d.at("median_cycles"), d.at("low"), d.at("high"),
                                            d.at("confidence"),    d.at("n"),   d.at("agrees")};
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
  } catch (const std::exception& e) { return Status::error(std::string("model: ") + e.what()); }
  return Status::ok();
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
  auto number = [&](const json& o, const char* k, double lo, double hi, double* v, const std::string& where) -> Status {
    if (!o.contains(k)) return Status::ok();  // the default stands
    if (!o.at(k).is_number()) return bad(where + ": \"" + k + "\" must be a number");
    double x = o.at(k).get<double>();
    if (!std::isfinite(x) || x < lo || x > hi)
      return bad(fmt::format("{}: \"{}\" = {} is outside {}..{}", where, k, x, lo, hi));
    *v = x;
    return Status::ok();
  };
  const std::set<std::string> probe_keys = {"tracer",        "probe_kind", "action",         "options",
                                            "payload_bytes", "handlers",   "predicate_true", "rate_hz",
                                            "threads",       "wakeups_hz", "bursts_hz"};
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
    const std::set<std::string> keys = {"tracer",     "probe_kind", "action",        "options",         "records_hz",
                                        "wakeups_hz", "enables_hz", "payload_bytes", "idle_wakeups_hz", "handlers"};
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
