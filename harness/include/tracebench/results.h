// The one results schema (results/README.md, results/schema.json): the
// in-memory result of a run, raw samples included.  Every reporter
// (tracebench/report.h: console, JSON, CSV, compare) reads these structs;
// nothing is ever scraped back from printed text.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/adaptive.h"
#include "tracebench/cpu_gaps.h"
#include "tracebench/stats.h"
#include "tracebench/status.h"

namespace tracebench {

// The untraced baseline's name, as the results schema writes it: every
// other tracer's rows are read against its own.
inline constexpr std::string_view kBaselineTracer = "none";

inline constexpr int kSchemaVersion = 1;
inline constexpr const char* kSchemaName = "tracebench.result";

struct CounterContext {
  std::string name, source;
  bool live = false;
  std::string unavailable_reason;
};

struct RunContext {
  std::string run_id;
  std::string date_utc;
  std::string host;
  std::string cpu_model;
  int cpus = 0;
  int measured_cpu = 0;
  std::string kernel_release, kernel_version, kernel_config_hash, kernel_config_source;
  std::string clocksource;
  bool virtualized = false;
  std::string hypervisor;
  // "host", or "qemu-tcg"/"qemu-kvm" inside the VM lab; emulated results are
  // never compared with host results.
  std::string execution = "host";
  bool emulated = false;
  double tsc_hz = 0, tsc_calibrated_hz = 0;
  std::string tsc_source;
  bool tsc_invariant = false;
  double floor_cycles = 0, floor_mad_cycles = 0;
  // The clock self-check (clock_check.h: clock_json): how regions end, the
  // migration method, the TSC's step, each check's verdict and reason.
  // Empty in results written before it existed.
  nlohmann::json clock = nlohmann::json::object();
  double counter_read_cycles = 0;
  std::vector<CounterContext> counters;
  std::vector<std::string> noise_warnings;
  // CPUs kept busy on average by other processes while the run measured
  // (tracer daemons such as lttng-consumerd included); < 0 = not measured.
  double foreign_cpu_load = -1;
  // Measured while another command held the machine lock, or beside one run
  // with --allow-concurrent (tracebench/machine_lock.h): each one's probes
  // and load may be in the other's figures.  false in results written before
  // it existed.
  bool concurrent = false;
  // A simulated host (tracebench/host_simulation.h: TRACEBENCH_SIMULATE_HOST,
  // for tests): its specification; "" for a run measured as this machine is.
  std::string simulated_host;
  // What the host took from the measured CPU while nothing was attached
  // (cpu_gaps.h) and the longest a traced sample may then span; absent in
  // results written before it.
  std::optional<CpuGaps> cpu_gaps;
  double sample_cap_cycles = 0;  // 0: no cap
  std::string tracebench_version, git_sha, build_type, compiler;
  std::map<std::string, std::string> library_versions;
  std::vector<std::string> command_line;
  // false while the run is still going, and in the result.json of a run that
  // was killed, interrupted or failed before it finished: the benchmarks in
  // it are those that finished.  true in results written before it existed.
  bool complete = true;
};

// One variant (baseline or traced) of a benchmark.
struct VariantResult {
  Summary cycles;               // per event, floor subtracted, undisturbed samples
  Summary ns;                   // n == 0: no valid sample (written as null, never as 0)
  std::uint64_t samples = 0;    // all samples taken
  std::uint64_t disturbed = 0;  // flagged and excluded from the statistics
  std::uint64_t migrated = 0;   // of those, samples whose CPU changed
  std::optional<double> cold_first_event_cycles;
  std::vector<double> repetition_medians;            // cycles per event, one per repetition
  std::map<std::string, double> counters_per_event;  // live counters only
};

// What the tracer recorded and the verdict of the one judge
// (tracebench/verification.h); the fields mirror EventCounts (tracebench/tracer.h).
struct EventsResult {
  std::uint64_t fired = 0;  // while the tracer was enabled
  // A profile probe (fired by the tracer's timer): its firings per workload
  // op in the enabled windows.  `fired` is then the timer's count, the
  // overhead figures are per firing, the baseline and traced distributions
  // per op.
  std::optional<double> timer_events_per_op;
  std::uint64_t recorded = 0;
  std::uint64_t lost = 0;
  bool exact = true;
  // Workload payload bytes verified byte for byte (0 unless payload_source
  // is "workload").
  std::uint64_t payload_verified = 0;
  // "none", "workload" (copied from the workload's bytes) or "tracer"
  // (written by the tracer itself, never counted as verified).
  std::string payload_source = "none";
  std::uint64_t payload_checked_events = 0;
  std::uint64_t payload_mismatched_events = 0;
  std::uint64_t payload_truncated_events = 0;
  std::uint64_t payload_kept_bytes = 0;  // length kept in a truncated event
  std::uint64_t tracer_errors = 0;
  // "passed": every rule of the judge held (harness/README.md, "Verification");
  // "failed"; "not_applicable" for the none tracer (and runs that never got
  // that far).
  std::string verification = "not_applicable";
  std::string verification_reason;
};

// CPU time the tracer's consumer spent over the benchmark (from attach to the
// end of drain, baseline blocks included, when it has nothing to read): its
// reader threads and daemons (Tracer::consumer_tasks) and what drain() did on
// the measuring thread.  Absent when the tracer names no consumer task and
// its drain took no measurable time, or the tracer records nothing.
struct ConsumerTaskResult {
  std::string role;
  int pid = 0, tid = 0;
  double cpu_ns = 0;
};
// Traced blocks that waited for the tracer's consumer to catch up first
// (tracebench/consumer_catch_up.h), those it was still busy before after the
// bound, and the time spent waiting.
struct CatchUpResult {
  std::uint64_t waits = 0;
  std::uint64_t timeouts = 0;
  double seconds = 0;
};

struct ConsumerResult {
  double cpu_ns = 0;         // every task and the drain
  double caller_cpu_ns = 0;  // of it: disable()/drain() on the measuring thread (Tracer::reads_on_caller)
  // The tasks' CPU inside the traced blocks alone (from before each enable()
  // to after its disable()): what the records and their wakeups cost them,
  // without their idle time in the baseline blocks (timeouts, timers).
  std::optional<double> traced_cpu_ns;
  // Share of the consumer's time spent in user space, from the tasks' /proc
  // tick counts and the caller's getrusage(RUSAGE_THREAD) (in ticks);
  // absent below 20 ticks (too few to split).
  std::optional<double> user_fraction;
  std::uint64_t ticks = 0;
  double user_ticks = 0;      // of them in user space (the caller's in tick equivalents)
  bool precise = true;        // false: some task's time came from ticks only
  std::uint64_t records = 0;  // = events.recorded
  std::optional<std::uint64_t> wakeups;
  bool wakes_on_timer = false;  // EventCounts::consumer_wakes_on_timer
  // The tracer's enable() calls in the window: each starts what the
  // consumer then reads (an LTTng session start and stop, a buffer read at
  // disable): what a cycle costs the consumer apart from its records.
  std::optional<std::uint64_t> enables;
  // The waits for the consumer before traced blocks (absent when the
  // tracer names no consumer task, and in older results).
  std::optional<CatchUpResult> catch_up;
  double window_s = 0;
  std::vector<ConsumerTaskResult> tasks;
};

// One timed sample, as samples.csv holds it (per-event cycles, floor subtracted).
struct SampleRow {
  bool traced = false;
  int repetition = 0;
  std::uint32_t index = 0;
  double cycles_per_event = 0;
  bool excluded = false, migrated = false;
};

// How a benchmark reached its steady state before its repetitions
// (tracebench/steady_state.h): traced blocks until their last three chunks
// agreed.
struct WarmUpResult {
  // "stationary": the last blocks agreed; "budget": the time ran out first;
  // "off": `run --warmup 0`; "gap": a run with --gap-us (each sample follows
  // an idle gap, the state a warm-up would hide).
  std::string stop;
  std::uint64_t blocks = 0, events = 0;
  // Events it had to fire first whatever the blocks said: a tracer buffer
  // fixed at attach, once round (0: none).
  std::uint64_t min_events = 0;
  double seconds = 0;
  std::vector<double> chunk_medians_cycles;  // per event, each traced chunk's median (a third of a block)
};

// A level shift found among the repetitions (steady_state.h): those before
// it were left out of the figures.
struct LevelShiftResult {
  int repetitions_left_out = 0;                // counted repetitions on the earlier level
  double before_cycles = 0, after_cycles = 0;  // the two levels' overhead medians, per event
};

struct BenchmarkResult {
  std::string name;  // "ftrace/getpid/count/payload:0/threads:1"
  std::string tracer, workload, probe, probe_kind, action;
  std::uint64_t payload_bytes = 0;
  int threads = 1;
  std::map<std::string, std::string> options;
  int repetitions = 0;  // those that ran
  // Of them, those left out of the figures (a block kept too few samples):
  // the repetition medians are repetitions - dropped.  Absent (unknown) in
  // results written before it.
  std::optional<std::uint64_t> dropped_repetitions;
  // Traced events every firing thread fired per second of a traced block's
  // wall time (threads:N: all N, the measured one and its contenders), the
  // median of the counted repetitions' blocks: the throughput selftests/bpf's
  // bench reports.  Unset when no repetition counted.  Untraced blocks have
  // none: they run at the traced blocks' batch, so their wall time holds more
  // of the harness's per-sample timing than of the workload.
  std::optional<double> events_per_second;
  // What stopped the repetitions (adaptive.h); absent in results written
  // before repetitions could stop early.
  std::optional<RepetitionStop> repetitions_stop;
  // Absent in results written before warm-ups and level shifts were kept.
  std::optional<WarmUpResult> warmup;
  std::vector<LevelShiftResult> level_shifts;
  std::vector<double> left_out_overheads_cycles;  // the left-out repetitions' overheads, per event
  std::uint64_t samples_per_block = 0;
  // The samples a block may hold (`run -n/--samples`): samples_per_block is
  // what the block's time let the pilot take, fewer where samples are long,
  // and then it varies run to run.  What the user chose; unset in files
  // written before it.
  std::optional<std::uint64_t> samples_per_block_limit;
  std::uint64_t batch = 1;  // events per timed sample
  // µs the firing thread slept before each sample (`run --gap-us`; 0: none):
  // the figure is then of events that follow an idle gap.
  std::uint64_t gap_us = 0;
  // ok | error | skipped | unsteady (measured, but the figure changed level
  // and no level held long enough: `error` says which levels; no figure)
  std::string status = "ok";
  std::string error;
  // What makes the figures weaker without voiding them (a large share of
  // excluded samples, dropped repetitions); printed under the figure.
  std::vector<std::string> warnings;
  VariantResult baseline, traced;
  // traced - baseline per repetition; median and its CI across repetitions.
  std::optional<MedianCI> overhead_cycles;
  std::optional<MedianCI> overhead_ns;
  // The same with the costs a tracer pays once in many events (a buffer
  // page, a wakeup) spread over them: per repetition, the traced block's
  // mean less the baseline's, the host's share of the difference taken off
  // (sample_book.h); what throughput follows.  Absent in results written
  // before it, or when fewer than two repetitions counted.
  std::optional<MedianCI> amortized_overhead_cycles;
  std::optional<MedianCI> amortized_overhead_ns;
  EventsResult events;
  std::optional<ConsumerResult> consumer;
  nlohmann::json tracer_details = nlohmann::json::object();
  // Interrupts per event of the traced blocks minus the baseline blocks, by
  // /proc/interrupts row and CPU (rows where some CPU differs by >= 0.001):
  // {"IWI": {"description": "IRQ work interrupts", "extra_per_event": {"1": 0.36}}}.
  nlohmann::json interrupts_per_event = nlohmann::json::object();
  // Every sample of both variants in the order taken (24 bytes each; empty
  // with --no-samples).  Not in result.json: samples.csv is their file, and
  // read_run(..., with_samples) reads them back.
  std::vector<SampleRow> samples;
};

struct RunResult {
  RunContext context;
  std::vector<BenchmarkResult> benchmarks;
};

// The JSON reporter's conversions (report_json.cc), found by nlohmann::json.
void to_json(nlohmann::json& j, const RunResult& r);
void from_json(const nlohmann::json& j, RunResult& r);

// result.json, summary.csv and samples.csv live in one directory per run:
// <base>/<UTC time to the microsecond>-<host>-<sha>-<random>/, e.g.
// 20261127T192450.123456Z-ci8-58fae67-3f9a0c1d: unique across folders and
// machines (the 32 random bits tell apart runs of one microsecond), so a
// history holds every run.  Ids of older runs (second precision, "-N"
// suffixes) stay readable: an id is only ever compared whole.
std::string make_run_id(const RunContext& ctx);
// Creates the run's directory under `base` (made if missing) with an id from
// make_run_id(), exclusively: another process never gets the same one.
Status make_run_dir(const std::string& base, RunContext* ctx, std::string* dir);
// result.json and summary.csv, each replaced atomically (samples.csv is
// appended per benchmark as the run goes: the runner's journal).
Status write_run(const std::string& dir, const RunResult& run);
// A result.json, refused unless consistent (tracebench/result_check.h); with
// `with_samples`, also the samples.csv beside it (a run written with
// --no-samples has none: the benchmarks keep no samples).
Status read_run(const std::string& result_json_path, RunResult* run, bool with_samples = false);
// The result.json files an argument names: a result.json, a run directory,
// or a directory holding runs, nested up to four levels (an `ab` folder's
// pairs; appended in name order).  A directory with no run in it is an
// error, unless `none_is_ok` (then nothing is appended).
Status result_files(const std::string& arg, std::vector<std::string>* files, bool none_is_ok = false);
// Every file of the runs whose result.json are `result_jsons`: the regular
// files in each one's directory (result.json, summary.csv, samples.csv, a
// run's log): what no output may be written over (check_output_not_input).
std::vector<std::string> run_files(const std::vector<std::string>& result_jsons);

}  // namespace tracebench
