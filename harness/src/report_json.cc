// The JSON reporter: result.json, the results schema (results/schema.json)
// as nlohmann::json conversions, and reading it back.
#include <cerrno>
#include <fstream>

#include <fmt/format.h>

#include "tracebench/report.h"
#include "tracebench/reporter.h"
#include "tracebench/util.h"
#include "tracebench/results.h"

namespace tracebench {

using nlohmann::json;

namespace {

template <typename T>
void put_opt(json& j, const char* key, const std::optional<T>& v) {
  j[key] = v ? json(*v) : json(nullptr);
}
template <typename T>
void get_opt(const json& j, const char* key, std::optional<T>& v) {
  if (j.contains(key) && !j.at(key).is_null()) {
    v = j.at(key).get<T>();
  } else {
    v.reset();
  }
}

double ctx_tsc_hz(const RunResult& r) { return r.context.tsc_hz; }

json consumer_json(const ConsumerResult& c, double tsc_hz) {
  json tasks = json::array();
  for (const auto& t : c.tasks)
    tasks.push_back({{"role", t.role}, {"pid", t.pid}, {"tid", t.tid}, {"cpu_ns", t.cpu_ns}});
  json j = {{"cpu_ns", c.cpu_ns},     {"caller_cpu_ns", c.caller_cpu_ns},
            {"ticks", c.ticks},       {"user_ticks", c.user_ticks},
            {"precise", c.precise},   {"records", c.records},
            {"window_s", c.window_s}, {"tasks", tasks}};
  put_opt(j, "user_fraction", c.user_fraction);
  put_opt(j, "wakeups", c.wakeups);
  put_opt(j, "traced_cpu_ns", c.traced_cpu_ns);
  if (c.enables) j["enables"] = *c.enables;
  j["wakes_on_timer"] = c.wakes_on_timer;
  // Derived, for readers of the file: cycles of consumer CPU per record.
  j["cycles_per_record"] =
      c.records > 0 && tsc_hz > 0 ? json(c.cpu_ns * tsc_hz / 1e9 / static_cast<double>(c.records)) : json(nullptr);
  return j;
}

ConsumerResult consumer_from(const json& j) {
  ConsumerResult c;
  j.at("cpu_ns").get_to(c.cpu_ns);
  j.at("caller_cpu_ns").get_to(c.caller_cpu_ns);
  j.at("ticks").get_to(c.ticks);
  j.at("user_ticks").get_to(c.user_ticks);
  j.at("precise").get_to(c.precise);
  j.at("records").get_to(c.records);
  j.at("window_s").get_to(c.window_s);
  get_opt(j, "user_fraction", c.user_fraction);
  get_opt(j, "wakeups", c.wakeups);
  get_opt(j, "traced_cpu_ns", c.traced_cpu_ns);                                 // absent in results written before it
  if (j.contains("enables")) c.enables = j.at("enables").get<std::uint64_t>();  // absent in results written before it
  c.wakes_on_timer = j.value("wakes_on_timer", false);                          // absent in results written before it
  for (const auto& t : j.at("tasks")) {
    ConsumerTaskResult x;
    t.at("role").get_to(x.role);
    t.at("pid").get_to(x.pid);
    t.at("tid").get_to(x.tid);
    t.at("cpu_ns").get_to(x.cpu_ns);
    c.tasks.push_back(x);
  }
  return c;
}

json variant_json(const VariantResult& v) {
  json j;
  // A variant without valid samples has no distribution: null, never zeros.
  j["cycles_per_event"] = v.cycles.n ? json(v.cycles) : json(nullptr);
  j["ns_per_event"] = v.ns.n ? json(v.ns) : json(nullptr);
  j["samples"] = v.samples;
  j["disturbed_samples"] = v.disturbed;
  j["migrated_samples"] = v.migrated;
  put_opt(j, "cold_first_event_cycles", v.cold_first_event_cycles);
  j["repetition_medians_cycles"] = v.repetition_medians;
  j["counters_per_event"] = v.counters_per_event;
  return j;
}

VariantResult variant_from(const json& j) {
  VariantResult v;
  if (!j.at("cycles_per_event").is_null()) j.at("cycles_per_event").get_to(v.cycles);
  if (!j.at("ns_per_event").is_null()) j.at("ns_per_event").get_to(v.ns);
  j.at("samples").get_to(v.samples);
  j.at("disturbed_samples").get_to(v.disturbed);
  j.at("migrated_samples").get_to(v.migrated);
  get_opt(j, "cold_first_event_cycles", v.cold_first_event_cycles);
  j.at("repetition_medians_cycles").get_to(v.repetition_medians);
  j.at("counters_per_event").get_to(v.counters_per_event);
  return v;
}

}  // namespace

void to_json(json& j, const RunResult& r) {
  const RunContext& c = r.context;
  json ctx;
  ctx["run_id"] = c.run_id;
  ctx["date_utc"] = c.date_utc;
  ctx["host"] = c.host;
  ctx["cpu_model"] = c.cpu_model;
  ctx["cpus"] = c.cpus;
  ctx["measured_cpu"] = c.measured_cpu;
  ctx["kernel"] = {{"release", c.kernel_release},
                   {"version", c.kernel_version},
                   {"config_sha256", c.kernel_config_hash},
                   {"config_source", c.kernel_config_source}};
  ctx["clocksource"] = c.clocksource;
  ctx["virtualized"] = c.virtualized;
  ctx["hypervisor"] = c.hypervisor;
  ctx["execution"] = c.execution;
  ctx["emulated"] = c.emulated;
  ctx["tsc"] = {{"hz", c.tsc_hz},
                {"calibrated_hz", c.tsc_calibrated_hz},
                {"source", c.tsc_source},
                {"invariant", c.tsc_invariant}};
  ctx["floor"] = {{"cycles", c.floor_cycles}, {"mad_cycles", c.floor_mad_cycles}};
  if (!c.clock.empty()) ctx["clock"] = c.clock;
  json counters = json::array();
  for (const auto& k : c.counters) {
    json e{{"name", k.name}, {"source", k.source}, {"live", k.live}};
    if (!k.live) e["unavailable_reason"] = k.unavailable_reason;
    counters.push_back(e);
  }
  ctx["counters"] = counters;
  ctx["counter_read_cycles"] = c.counter_read_cycles;
  ctx["noise_warnings"] = c.noise_warnings;
  if (c.foreign_cpu_load >= 0) ctx["foreign_cpu_load"] = c.foreign_cpu_load;
  ctx["concurrent"] = c.concurrent;
  ctx["tracebench_version"] = c.tracebench_version;
  ctx["git_sha"] = c.git_sha;
  ctx["build_type"] = c.build_type;
  ctx["compiler"] = c.compiler;
  ctx["library_versions"] = c.library_versions;
  ctx["command_line"] = c.command_line;
  ctx["complete"] = c.complete;

  json benches = json::array();
  for (const auto& b : r.benchmarks) {
    json e;
    e["name"] = b.name;
    e["tracer"] = b.tracer;
    e["workload"] = b.workload;
    e["probe"] = b.probe;
    e["probe_kind"] = b.probe_kind;
    e["action"] = b.action;
    e["payload_bytes"] = b.payload_bytes;
    e["threads"] = b.threads;
    e["options"] = b.options;
    e["repetitions"] = b.repetitions;
    put_opt(e, "dropped_repetitions", b.dropped_repetitions);
    if (b.repetitions_stop)
      e["repetitions_stop"] = {{"rule", b.repetitions_stop->rule},
                               {"target_cycles", b.repetitions_stop->target_cycles},
                               {"half_width_cycles", b.repetitions_stop->half_width_cycles},
                               {"cap", b.repetitions_stop->cap}};
    e["samples_per_block"] = b.samples_per_block;
    e["batch"] = b.batch;
    e["gap_us"] = b.gap_us;
    e["status"] = b.status;
    e["error"] = b.error;
    e["warnings"] = b.warnings;
    e["baseline"] = variant_json(b.baseline);
    e["traced"] = variant_json(b.traced);
    put_opt(e, "overhead_cycles_per_event", b.overhead_cycles);
    put_opt(e, "overhead_ns_per_event", b.overhead_ns);
    e["events"] = {{"fired", b.events.fired},
                   {"recorded", b.events.recorded},
                   {"lost", b.events.lost},
                   {"exact", b.events.exact},
                   {"payload_verified_bytes", b.events.payload_verified},
                   {"payload_source", b.events.payload_source},
                   {"payload_checked_events", b.events.payload_checked_events},
                   {"payload_mismatched_events", b.events.payload_mismatched_events},
                   {"payload_truncated_events", b.events.payload_truncated_events},
                   {"payload_kept_bytes", b.events.payload_kept_bytes},
                   {"tracer_errors", b.events.tracer_errors},
                   {"verification", b.events.verification},
                   {"verification_reason", b.events.verification_reason}};
    if (b.events.timer_events_per_op) e["events"]["timer_events_per_op"] = *b.events.timer_events_per_op;
    if (b.consumer) e["consumer"] = consumer_json(*b.consumer, ctx_tsc_hz(r));
    e["tracer_details"] = b.tracer_details;
    e["interrupts_per_event"] = b.interrupts_per_event;
    benches.push_back(e);
  }
  j = json{{"schema", kSchemaName}, {"schema_version", kSchemaVersion}, {"context", ctx}, {"benchmarks", benches}};
}

void from_json(const json& j, RunResult& r) {
  if (j.at("schema").get<std::string>() != kSchemaName) throw std::runtime_error("not a tracebench result");
  if (j.at("schema_version").get<int>() != kSchemaVersion) {
    throw std::runtime_error(
        fmt::format("schema_version {} is not {}", j.at("schema_version").get<int>(), kSchemaVersion));
  }
  const json& ctx = j.at("context");
  RunContext& c = r.context;
  ctx.at("run_id").get_to(c.run_id);
  ctx.at("date_utc").get_to(c.date_utc);
  ctx.at("host").get_to(c.host);
  ctx.at("cpu_model").get_to(c.cpu_model);
  ctx.at("cpus").get_to(c.cpus);
  ctx.at("measured_cpu").get_to(c.measured_cpu);
  ctx.at("kernel").at("release").get_to(c.kernel_release);
  ctx.at("kernel").at("version").get_to(c.kernel_version);
  ctx.at("kernel").at("config_sha256").get_to(c.kernel_config_hash);
  ctx.at("kernel").at("config_source").get_to(c.kernel_config_source);
  ctx.at("clocksource").get_to(c.clocksource);
  ctx.at("virtualized").get_to(c.virtualized);
  ctx.at("hypervisor").get_to(c.hypervisor);
  ctx.at("execution").get_to(c.execution);
  ctx.at("emulated").get_to(c.emulated);
  ctx.at("tsc").at("hz").get_to(c.tsc_hz);
  ctx.at("tsc").at("calibrated_hz").get_to(c.tsc_calibrated_hz);
  ctx.at("tsc").at("source").get_to(c.tsc_source);
  ctx.at("tsc").at("invariant").get_to(c.tsc_invariant);
  ctx.at("floor").at("cycles").get_to(c.floor_cycles);
  ctx.at("floor").at("mad_cycles").get_to(c.floor_mad_cycles);
  c.clock = ctx.contains("clock") ? ctx.at("clock") : json::object();
  c.counters.clear();
  for (const auto& k : ctx.at("counters")) {
    CounterContext cc;
    k.at("name").get_to(cc.name);
    k.at("source").get_to(cc.source);
    k.at("live").get_to(cc.live);
    if (k.contains("unavailable_reason")) k.at("unavailable_reason").get_to(cc.unavailable_reason);
    c.counters.push_back(cc);
  }
  ctx.at("counter_read_cycles").get_to(c.counter_read_cycles);
  ctx.at("noise_warnings").get_to(c.noise_warnings);
  c.foreign_cpu_load = ctx.contains("foreign_cpu_load") ? ctx.at("foreign_cpu_load").get<double>() : -1;
  c.concurrent = ctx.contains("concurrent") && ctx.at("concurrent").get<bool>();
  ctx.at("tracebench_version").get_to(c.tracebench_version);
  ctx.at("git_sha").get_to(c.git_sha);
  ctx.at("build_type").get_to(c.build_type);
  ctx.at("compiler").get_to(c.compiler);
  ctx.at("library_versions").get_to(c.library_versions);
  ctx.at("command_line").get_to(c.command_line);
  c.complete = ctx.contains("complete") ? ctx.at("complete").get<bool>() : true;

  r.benchmarks.clear();
  for (const auto& e : j.at("benchmarks")) {
    BenchmarkResult b;
    e.at("name").get_to(b.name);
    e.at("tracer").get_to(b.tracer);
    e.at("workload").get_to(b.workload);
    e.at("probe").get_to(b.probe);
    e.at("probe_kind").get_to(b.probe_kind);
    e.at("action").get_to(b.action);
    e.at("payload_bytes").get_to(b.payload_bytes);
    e.at("threads").get_to(b.threads);
    e.at("options").get_to(b.options);
    e.at("repetitions").get_to(b.repetitions);
    get_opt(e, "dropped_repetitions", b.dropped_repetitions);  // results written before it had none
    if (e.contains("repetitions_stop")) {
      const json& st = e.at("repetitions_stop");
      RepetitionStop stop;
      st.at("rule").get_to(stop.rule);
      st.at("target_cycles").get_to(stop.target_cycles);
      st.at("half_width_cycles").get_to(stop.half_width_cycles);
      st.at("cap").get_to(stop.cap);
      b.repetitions_stop = stop;
    }
    e.at("samples_per_block").get_to(b.samples_per_block);
    e.at("batch").get_to(b.batch);
    if (e.contains("gap_us")) e.at("gap_us").get_to(b.gap_us);  // results written before it had none
    e.at("status").get_to(b.status);
    e.at("error").get_to(b.error);
    if (e.contains("warnings")) e.at("warnings").get_to(b.warnings);
    b.baseline = variant_from(e.at("baseline"));
    b.traced = variant_from(e.at("traced"));
    get_opt(e, "overhead_cycles_per_event", b.overhead_cycles);
    get_opt(e, "overhead_ns_per_event", b.overhead_ns);
    const json& ev = e.at("events");
    ev.at("fired").get_to(b.events.fired);
    ev.at("recorded").get_to(b.events.recorded);
    ev.at("lost").get_to(b.events.lost);
    ev.at("exact").get_to(b.events.exact);
    ev.at("payload_verified_bytes").get_to(b.events.payload_verified);
    ev.at("verification").get_to(b.events.verification);
    // Added after the first results were written: optional when reading.
    auto opt_field = [&ev](const char* key, auto& v) {
      if (ev.contains(key)) ev.at(key).get_to(v);
    };
    opt_field("payload_source", b.events.payload_source);
    opt_field("payload_checked_events", b.events.payload_checked_events);
    opt_field("payload_mismatched_events", b.events.payload_mismatched_events);
    opt_field("payload_truncated_events", b.events.payload_truncated_events);
    opt_field("payload_kept_bytes", b.events.payload_kept_bytes);
    opt_field("tracer_errors", b.events.tracer_errors);
    opt_field("verification_reason", b.events.verification_reason);
    if (ev.contains("timer_events_per_op")) b.events.timer_events_per_op = ev.at("timer_events_per_op").get<double>();
    b.tracer_details = e.at("tracer_details");
    if (e.contains("consumer") && !e.at("consumer").is_null()) b.consumer = consumer_from(e.at("consumer"));
    if (e.contains("interrupts_per_event")) b.interrupts_per_event = e.at("interrupts_per_event");
    r.benchmarks.push_back(std::move(b));
  }
}

std::string result_json_text(const RunResult& run) {
  json j = run;
  return j.dump(2) + "\n";
}

Status read_result_json(const std::string& path, RunResult* run) {
  std::string text;
  TB_TRY(read_input_file(path, kMaxInputBytes, &text));
  try {
    json j = json::parse(text);
    *run = j.get<RunResult>();
  } catch (const std::exception& e) { return Status::error(fmt::format("{}: {}", path, e.what())); }
  return Status::ok();
}

namespace {
// result.json: the run as results.h's to_json writes it.
class JsonRunReporter final : public JsonReporter<RunReport> {
 public:
  Status document(const RunReport& in, json* out) const override {
    *out = in.run;
    return Status::ok();
  }
};
}  // namespace

const Reporter<RunReport>& json_run_reporter() {
  static const JsonRunReporter r;
  return r;
}

}  // namespace tracebench
