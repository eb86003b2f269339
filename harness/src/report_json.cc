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
  if (c.catch_up)
    j["catch_up"] = {
        {"waits", c.catch_up->waits}, {"timeouts", c.catch_up->timeouts}, {"seconds", c.catch_up->seconds}};
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
  if (j.contains("catch_up")) {                                                 // absent in results written before it
    const json& u = j.at("catch_up");
    c.catch_up = CatchUpResult{u.at("waits").get<std::uint64_t>(), u.at("timeouts").get<std::uint64_t>(),
                               u.at("seconds").get<double>()};
  }
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

// result.json's plain fields are listed once (context_fields,
// benchmark_fields, event_fields) and walked both ways: a Writer puts each
// into a JSON object, a Reader takes each out of one.  `field` is required
// (at() throws, naming it, when it is missing); `optional` may be absent
// from results written before it existed (reading leaves the default);
// `nullable` is an std::optional written as null when empty, `when_set` one
// left out when empty (a figure results written before it never had).  The fields
// with rules of their own (a sentinel, a derived figure, a nested
// distribution) are written and read beside the walk.
struct Writer {
  json& j;
  template <class T>
  void field(const char* k, const T& v) {
    j[k] = v;
  }
  template <class T>
  void optional(const char* k, const T& v) {
    j[k] = v;
  }
  template <class T>
  void nullable(const char* k, const std::optional<T>& v) {
    put_opt(j, k, v);
  }
  template <class T>
  void when_set(const char* k, const std::optional<T>& v) {
    if (v) j[k] = *v;
  }
  template <class F>
  void object(const char* k, F f) {
    Writer w{j[k]};
    f(w);
  }
};

struct Reader {
  const json& j;
  template <class T>
  void field(const char* k, T& v) const {
    j.at(k).get_to(v);
  }
  template <class T>
  void optional(const char* k, T& v) const {
    if (j.contains(k)) j.at(k).get_to(v);
  }
  template <class T>
  void when_set(const char* k, std::optional<T>& v) const {
    get_opt(j, k, v);
  }
  template <class T>
  void nullable(const char* k, std::optional<T>& v) const {
    get_opt(j, k, v);
  }
  template <class F>
  void object(const char* k, F f) const {
    Reader r{j.at(k)};
    f(r);
  }
};

// `Context` is RunContext for reading, const RunContext for writing.
template <class Io, class Context>
void context_fields(Io& io, Context& c) {
  io.field("run_id", c.run_id);
  io.field("date_utc", c.date_utc);
  io.field("host", c.host);
  io.field("cpu_model", c.cpu_model);
  io.field("cpus", c.cpus);
  io.field("measured_cpu", c.measured_cpu);
  io.object("kernel", [&](auto& k) {
    k.field("release", c.kernel_release);
    k.field("version", c.kernel_version);
    k.field("config_sha256", c.kernel_config_hash);
    k.field("config_source", c.kernel_config_source);
  });
  io.field("clocksource", c.clocksource);
  io.field("virtualized", c.virtualized);
  io.field("hypervisor", c.hypervisor);
  io.field("execution", c.execution);
  io.field("emulated", c.emulated);
  io.object("tsc", [&](auto& t) {
    t.field("hz", c.tsc_hz);
    t.field("calibrated_hz", c.tsc_calibrated_hz);
    t.field("source", c.tsc_source);
    t.field("invariant", c.tsc_invariant);
  });
  io.object("floor", [&](auto& f) {
    f.field("cycles", c.floor_cycles);
    f.field("mad_cycles", c.floor_mad_cycles);
  });
  io.field("counter_read_cycles", c.counter_read_cycles);
  io.field("noise_warnings", c.noise_warnings);
  io.optional("concurrent", c.concurrent);
  io.field("tracebench_version", c.tracebench_version);
  io.field("git_sha", c.git_sha);
  io.field("build_type", c.build_type);
  io.field("compiler", c.compiler);
  io.field("library_versions", c.library_versions);
  io.field("command_line", c.command_line);
  io.optional("complete", c.complete);
}

template <class Io, class Events>
void event_fields(Io& io, Events& e) {
  io.field("fired", e.fired);
  io.field("recorded", e.recorded);
  io.field("lost", e.lost);
  io.field("exact", e.exact);
  io.field("payload_verified_bytes", e.payload_verified);
  io.field("verification", e.verification);
  io.optional("payload_source", e.payload_source);
  io.optional("payload_checked_events", e.payload_checked_events);
  io.optional("payload_mismatched_events", e.payload_mismatched_events);
  io.optional("payload_truncated_events", e.payload_truncated_events);
  io.optional("payload_kept_bytes", e.payload_kept_bytes);
  io.optional("tracer_errors", e.tracer_errors);
  io.optional("verification_reason", e.verification_reason);
}

template <class Io, class Benchmark>
void benchmark_fields(Io& io, Benchmark& b) {
  io.field("name", b.name);
  io.field("tracer", b.tracer);
  io.field("workload", b.workload);
  io.field("probe", b.probe);
  io.field("probe_kind", b.probe_kind);
  io.field("action", b.action);
  io.field("payload_bytes", b.payload_bytes);
  io.field("threads", b.threads);
  io.field("options", b.options);
  io.field("repetitions", b.repetitions);
  io.nullable("dropped_repetitions", b.dropped_repetitions);
  io.when_set("events_per_second", b.events_per_second);
  io.field("samples_per_block", b.samples_per_block);
  io.when_set("samples_per_block_limit", b.samples_per_block_limit);
  io.field("batch", b.batch);
  io.optional("gap_us", b.gap_us);
  io.field("status", b.status);
  io.field("error", b.error);
  io.optional("warnings", b.warnings);
  io.nullable("overhead_cycles_per_event", b.overhead_cycles);
  io.nullable("overhead_ns_per_event", b.overhead_ns);
  io.when_set("amortized_overhead_cycles_per_event", b.amortized_overhead_cycles);
  io.when_set("amortized_overhead_ns_per_event", b.amortized_overhead_ns);
  io.object("events", [&](auto& e) { event_fields(e, b.events); });
  io.field("tracer_details", b.tracer_details);
  io.optional("interrupts_per_event", b.interrupts_per_event);
}

json warmup_json(const WarmUpResult& w) {
  return json{{"stop", w.stop},       {"blocks", w.blocks},
              {"events", w.events},   {"min_events", w.min_events},
              {"seconds", w.seconds}, {"chunk_medians_cycles", w.chunk_medians_cycles}};
}

WarmUpResult warmup_from(const json& j) {
  WarmUpResult w;
  j.at("stop").get_to(w.stop);
  j.at("blocks").get_to(w.blocks);
  j.at("events").get_to(w.events);
  j.at("min_events").get_to(w.min_events);
  j.at("seconds").get_to(w.seconds);
  j.at("chunk_medians_cycles").get_to(w.chunk_medians_cycles);
  return w;
}

json level_shifts_json(const std::vector<LevelShiftResult>& shifts) {
  json a = json::array();
  for (const auto& s : shifts)
    a.push_back({{"repetitions_left_out", s.repetitions_left_out},
                 {"before_cycles", s.before_cycles},
                 {"after_cycles", s.after_cycles}});
  return a;
}

std::vector<LevelShiftResult> level_shifts_from(const json& a) {
  std::vector<LevelShiftResult> shifts;
  for (const auto& e : a) {
    LevelShiftResult s;
    e.at("repetitions_left_out").get_to(s.repetitions_left_out);
    e.at("before_cycles").get_to(s.before_cycles);
    e.at("after_cycles").get_to(s.after_cycles);
    shifts.push_back(s);
  }
  return shifts;
}

}  // namespace

void to_json(json& j, const RunResult& r) {
  const RunContext& c = r.context;
  json ctx = json::object();
  Writer cw{ctx};
  context_fields(cw, c);
  if (!c.clock.empty()) ctx["clock"] = c.clock;
  json counters = json::array();
  for (const auto& k : c.counters) {
    json e{{"name", k.name}, {"source", k.source}, {"live", k.live}};
    if (!k.live) e["unavailable_reason"] = k.unavailable_reason;
    counters.push_back(e);
  }
  ctx["counters"] = counters;
  if (c.foreign_cpu_load >= 0) ctx["foreign_cpu_load"] = c.foreign_cpu_load;
  if (!c.simulated_host.empty()) ctx["simulated_host"] = c.simulated_host;
  if (c.cpu_gaps)
    ctx["cpu_gaps"] = {{"window_s", c.cpu_gaps->window_s},
                       {"count", c.cpu_gaps->count},
                       {"per_second", c.cpu_gaps->per_second},
                       {"median_ns", c.cpu_gaps->median_ns},
                       {"p90_ns", c.cpu_gaps->p90_ns},
                       {"share", c.cpu_gaps->share},
                       {"short_share", c.cpu_gaps->short_share},
                       {"threshold_ns", c.cpu_gaps->threshold_ns},
                       {"sample_cap_cycles", c.sample_cap_cycles}};

  json benches = json::array();
  for (const auto& b : r.benchmarks) {
    json e = json::object();
    Writer bw{e};
    benchmark_fields(bw, b);
    if (b.repetitions_stop)
      e["repetitions_stop"] = {{"rule", b.repetitions_stop->rule},
                               {"target_cycles", b.repetitions_stop->target_cycles},
                               {"half_width_cycles", b.repetitions_stop->half_width_cycles},
                               {"cap", b.repetitions_stop->cap}};
    if (b.repetitions_stop && b.repetitions_stop->limit > 0) e["repetitions_stop"]["limit"] = b.repetitions_stop->limit;
    if (b.warmup) e["warmup"] = warmup_json(*b.warmup);
    if (!b.level_shifts.empty()) {
      e["level_shifts"] = level_shifts_json(b.level_shifts);
      e["left_out_overheads_cycles"] = b.left_out_overheads_cycles;
    }
    e["baseline"] = variant_json(b.baseline);
    e["traced"] = variant_json(b.traced);
    if (b.events.timer_events_per_op) e["events"]["timer_events_per_op"] = *b.events.timer_events_per_op;
    if (b.consumer) e["consumer"] = consumer_json(*b.consumer, ctx_tsc_hz(r));
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
  c.concurrent = false;  // absent: results written before it
  c.complete = true;     // absent: results written before it
  Reader cr{ctx};
  context_fields(cr, c);
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
  c.foreign_cpu_load = ctx.contains("foreign_cpu_load") ? ctx.at("foreign_cpu_load").get<double>() : -1;
  c.simulated_host = ctx.contains("simulated_host") ? ctx.at("simulated_host").get<std::string>() : "";
  c.cpu_gaps.reset();
  c.sample_cap_cycles = 0;
  if (ctx.contains("cpu_gaps")) {
    const json& g = ctx.at("cpu_gaps");
    CpuGaps gaps;
    g.at("window_s").get_to(gaps.window_s);
    g.at("count").get_to(gaps.count);
    g.at("per_second").get_to(gaps.per_second);
    g.at("median_ns").get_to(gaps.median_ns);
    g.at("p90_ns").get_to(gaps.p90_ns);
    g.at("threshold_ns").get_to(gaps.threshold_ns);
    if (g.contains("share")) g.at("share").get_to(gaps.share);                    // absent before it was written
    if (g.contains("short_share")) g.at("short_share").get_to(gaps.short_share);  // likewise
    g.at("sample_cap_cycles").get_to(c.sample_cap_cycles);
    c.cpu_gaps = gaps;
  }

  r.benchmarks.clear();
  for (const auto& e : j.at("benchmarks")) {
    BenchmarkResult b;
    Reader br{e};
    benchmark_fields(br, b);
    if (e.contains("repetitions_stop")) {
      const json& st = e.at("repetitions_stop");
      RepetitionStop stop;
      st.at("rule").get_to(stop.rule);
      st.at("target_cycles").get_to(stop.target_cycles);
      st.at("half_width_cycles").get_to(stop.half_width_cycles);
      st.at("cap").get_to(stop.cap);
      if (st.contains("limit")) st.at("limit").get_to(stop.limit);
      b.repetitions_stop = stop;
    }
    if (e.contains("warmup")) b.warmup = warmup_from(e.at("warmup"));
    if (e.contains("level_shifts")) {
      b.level_shifts = level_shifts_from(e.at("level_shifts"));
      e.at("left_out_overheads_cycles").get_to(b.left_out_overheads_cycles);
    }
    b.baseline = variant_from(e.at("baseline"));
    b.traced = variant_from(e.at("traced"));
    const json& ev = e.at("events");
    if (ev.contains("timer_events_per_op")) b.events.timer_events_per_op = ev.at("timer_events_per_op").get<double>();
    if (e.contains("consumer") && !e.at("consumer").is_null()) b.consumer = consumer_from(e.at("consumer"));
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
