// The one interface every tracer adapter implements.
//
// Data flows one way: a workload fires events at a probe point, the tracer
// records them, the harness samples the cost, statistics and the results
// schema come after.  A tracer never sees the harness's timings and the
// harness never parses what a tracer prints.
//
// Lifecycle, driven by the harness for one benchmark:
//   available()  -> attach(spec) -> { enable() ... disable() } x N -> drain()
//   -> counts() -> teardown()
// teardown() must be safe to call at any point (after a failed attach, twice,
// from the signal-cleanup path) and must leave nothing behind in the kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/model_description.h"
#include "tracebench/options.h"
#include "tracebench/register.h"
#include "tracebench/status.h"

namespace tracebench {

// What kind of site a probe point is; adapters decide what they can attach to
// from the kind, not from the name.
enum class ProbeKind {
  kNone,            // fires nothing a tracer can see (empty loop)
  kSyscall,         // a syscall; `target` is the syscall name ("getpid")
  kUserFunction,    // a noinline function in this binary; `target` is its symbol
  kUsdt,            // a sys/sdt.h site; `target` is "provider:name"
  kMarker,          // a write to tracefs trace_marker; payload = bytes written
  kKernelFunction,  // a kernel function (kprobe / fentry / function tracer)
  kKmodTracepoint,  // a tracepoint of the companion module
  kUstTracepoint,   // an LTTng-UST tracepoint; `target` is "provider:event"
  kProfile,         // a timer the tracer arms fires it while the firing thread
                    // runs (a profile probe); `target` is the clock ("cpu-clock").
                    // The workload only burns CPU: its events are the timer's
                    // firings, which the tracer counts (EventCounts::timer_fired)
};

std::string_view to_string(ProbeKind kind);

// One place a workload fires events.  `name` is stable and user-visible
// ("syscall:getpid", "user:tb_hot_nop", "usdt:tracebench:hot").
struct ProbePoint {
  std::string name;
  ProbeKind kind = ProbeKind::kNone;
  std::string target;          // syscall name, symbol, "provider:name", ...
  std::uintptr_t address = 0;  // resolved address for kUserFunction, else 0
  std::string description;
  // Where a payload workload's buffer is at this probe, for tracers that copy
  // it from there: the (0-based) argument of the syscall or function holding
  // the buffer's user-space address and the one holding its length; -1 when
  // the probe hands over no buffer (getpid, a USDT site without one).
  int payload_addr_arg = -1;
  int payload_len_arg = -1;
  // kUserFunction only: more functions of the same binary, each call of any
  // of them one event as a call of `target` is (a many-probe workload: N
  // uprobes on N functions).  Planned only with tracers that attach to every
  // site (Tracer::attaches_many_sites()).
  struct Site {
    std::string symbol;
    std::uintptr_t address = 0;
  };
  std::vector<Site> more_sites;
};

// What the harness asks a tracer to do at a probe point.
struct AttachSpec {
  ProbePoint probe;
  std::string action = "default";  // one of Tracer::actions()
  std::size_t payload_bytes = 0;   // bytes the workload hands over per event
  // Adapter parameters ("buffer_kb", "clock", "wakeup", ...), all strings so
  // they can come from the CLI unchanged; each adapter documents its keys and
  // rejects unknown ones.
  std::map<std::string, std::string> options;
  // `options` parsed against the tracer's schema by the plan (run_request.h),
  // once per run; null in a spec built by hand (tests), which option_values()
  // then parses.
  std::shared_ptr<const OptionValues> parsed_options;
  int pid = 0;  // process that fires (0 = this process)
};

// The options of `spec` as typed values: the plan's (parsed_options), else
// `spec.options` parsed here against `schema`.
Status option_values(std::string_view tracer, const OptionSchema& schema, const AttachSpec& spec, OptionValues* out);

// ---------------------------------------------------------------------------
// The verification contract.
//
// After every benchmark the harness asks the adapter what it recorded
// (Tracer::counts()) and one judge (tracebench/verification.h) decides
// whether the run passed.  An adapter reports facts only, never a verdict:
// it fills these fields honestly and leaves pass/fail to the judge, so every
// tracer is held to the same rules.

// Where the payload bytes a tracer recorded per event come from.
enum class PayloadSource {
  kNone,      // the tracer records no payload (counts, fixed fields, pointers)
  kWorkload,  // copied from the bytes the workload handed over at the probe
              // (trace_marker text, a tracemem() of the buffer argument, a
              // bpf_probe_read_user() of it, a CTF sequence field); checked
              // against the suite's payload pattern (tracebench/payload_pattern.h)
  kTracer,    // written by the tracer itself (a BPF program filling a record
              // where the probe hands it no buffer): its per-byte cost is real,
              // but it says nothing about the workload's bytes and is never
              // counted as verified payload
};

std::string_view to_string(PayloadSource source);  // "none", "workload", "tracer"

// What an adapter reports for the events fired since attach().
struct EventCounts {
  // Whether this tracer records events at all.  Only the baseline tracer
  // ("none") says false; the judge then answers not_applicable.
  bool records_events = true;
  // The workload's probe is deliberately disabled while the tracer is live
  // elsewhere (a D-VM "disabled" action: the cost of a disabled probe): the
  // judge then requires that nothing was recorded.  disabled_detail says
  // where the tracer is live.
  bool probe_disabled = false;
  std::string disabled_detail;
  // Events of the probe the tracer recorded (and, where it has a buffer,
  // read back), whatever their content.
  std::uint64_t recorded = 0;
  // Events the tracer knows it did not record: dropped, overwritten,
  // discarded, skipped by the kernel (recursion, full buffers or maps).
  std::uint64_t lost = 0;
  // True when only the workload's events can reach the tracer, so
  // recorded + lost must equal the events fired; false when the probe also
  // sees other activity (raw_syscalls without a filter, a probe without a
  // pid filter), so recorded + lost >= fired is all that can be checked.
  bool exact = true;
  // Faults and errors on the tracer's side: a D-VM clause that faulted, a
  // record of another event in the buffer, a tracer-written record that came
  // back corrupted, entry/exit events that do not pair up.  Any is a failure.
  std::uint64_t tracer_errors = 0;
  std::string tracer_error_detail;  // the first of them, in words

  // Payload.  payload_source says where recorded payload comes from; the
  // counts below are about recorded events that carry one.
  PayloadSource payload_source = PayloadSource::kNone;
  // Recorded events whose payload was compared with what the workload
  // handed over (kWorkload), or with what the tracer wrote (kTracer).
  std::uint64_t payload_checked_events = 0;
  // Of those: the bytes differ from the expected ones.
  std::uint64_t payload_mismatched_events = 0;
  // Of those: the tracer kept a length other than the requested payload
  // bytes (AttachSpec::payload_bytes), e.g. the kernel's trace_marker limit.
  std::uint64_t payload_truncated_events = 0;
  // Length the tracer kept in the first truncated event.
  std::uint64_t payload_kept_bytes = 0;
  std::string payload_mismatch_detail;  // the first mismatch, in words
  // Bytes of workload payload that matched byte for byte (events that were
  // checked, complete and equal).  0 unless payload_source == kWorkload.
  std::uint64_t payload_verified = 0;

  // Times the consumer woke up to read (an epoll or poll return with data,
  // a timer tick that found records); -1 when the tracer cannot tell.
  std::int64_t consumer_wakeups = -1;
  // The consumer wakes on its own timer (a switch rate), never because a
  // record was written: the probe causes none of its wakeups.
  bool consumer_wakes_on_timer = false;

  // A probe the tracer's own timer fires (ProbeKind::kProfile): the firings
  // its timer's clock made time for while enabled (time counted over the
  // sampling period), which take the place of the workload's count: an
  // upper bound, one more per window (an enable, or the thread switched
  // back in: the timer stops and restarts at each, so its phase may move);
  // fewer where expiries came late and were coalesced.  Unset for every
  // other probe.
  std::optional<std::uint64_t> timer_fired;
  std::uint64_t timer_windows = 0;
};

// A task that consumes what a tracer records, beside the firing thread: a
// reader thread of this process (tid) or a daemon (tid 0: the whole
// process, every thread).  The harness reads their CPU time from attach to
// drain: the consumer's cost per record (the model's Cost_A and Cost_C).
struct ConsumerTask {
  std::string role;  // "ring buffer reader", "lttng-consumerd", ...
  int pid = 0;
  int tid = 0;
  // Runs whether or not there is anything to read (a consumer that polls
  // its buffer in a loop): never idle, so never waited for
  // (tracebench/consumer_catch_up.h).
  bool spins = false;
};

struct Availability {
  bool ok = false;
  std::string reason;  // exact reason when !ok: missing config, privilege, package
  static Availability yes() { return {true, {}}; }
  static Availability no(std::string why) { return {false, std::move(why)}; }
};

class Tracer {
 public:
  virtual ~Tracer() = default;

  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // Probed on the running kernel by trying, not assumed.
  virtual Availability available() = 0;
  // Actions this tracer can run per event ("count", "record", ...).
  virtual std::vector<std::string> actions() const = 0;
  virtual bool supports(const ProbePoint& probe) const = 0;
  // Whether it attaches one probe to each of a probe point's more_sites as
  // well (an N-probe workload); false leaves such workloads out of its plan.
  virtual bool attaches_many_sites() const { return false; }
  // Whether `action` applies at a supported probe (an action that only some
  // probe kinds have, e.g. a kretprobe); the plan leaves the others out.
  virtual bool supports_action(const ProbePoint& probe, const std::string& action) const {
    (void)probe;
    (void)action;
    return true;
  }
  // The largest payload (bytes per event) this tracer carries whole at
  // `probe` with `action` on this kernel.  The plan leaves larger sizes of
  // the default sweep out (saying so) and refuses them when asked for;
  // verification fails a payload cut short anyway.
  virtual std::size_t max_payload_bytes(const ProbePoint& probe, const std::string& action) const {
    (void)probe;
    (void)action;
    return static_cast<std::size_t>(-1);
  }
  // The `--option <tracer>.<key>=<value>` keys this tracer takes: checked by
  // the plan before anything runs (parse_options), printed by `tracebench
  // list --options`, and the source of the tracer README's option table.
  virtual const OptionSchema& option_schema() const {
    static const OptionSchema none;
    return none;
  }
  // What the cost model needs to know of this tracer: its Table 7
  // scenarios and the options that vary its consumer (model_description.h).
  // `tracebench model suite` and `model fit` learn it from here only.
  virtual ModelDescription model() const { return {}; }
  // Versions of the libraries/tools this adapter uses, for the run context.
  virtual std::map<std::string, std::string> versions() const { return {}; }

  // Checks a spec without touching the kernel or the file system: options,
  // action, payload size.  The run calls it for every planned benchmark
  // before anything is attached, so bad input is refused up front; attach()
  // must accept every spec validate() passes (and refuses the same ones).
  virtual Status validate(const AttachSpec& spec) const {
    (void)spec;
    return Status::ok();
  }
  // Whether this kernel runs a spec validate() passed, where that varies
  // within a tracer that is available(): an attach type the kernel refuses
  // (eBPF's fentry under lockdown, uprobe_multi before Linux 6.6).  The plan
  // leaves such a benchmark out with the reason (an error when nothing else
  // of the run applies) instead of failing it at attach().
  virtual Availability available_for(const AttachSpec& spec) const {
    (void)spec;
    return Availability::yes();
  }
  virtual Status attach(const AttachSpec& spec) = 0;
  virtual Status enable() = 0;
  virtual Status disable() = 0;
  // The most events one traced block may fire for the tracer to keep them
  // all (0: no limit), asked after the pilot: a tracer whose buffer is
  // fixed at attach() and emptied by a consumer that may fall behind (an
  // LTTng channel) says what half its buffer holds, and the harness sizes
  // the block (batch and samples) to the pilot's traced cost x that many.
  virtual std::uint64_t block_event_capacity() const { return 0; }
  // Events a tracer costs more for at first, for a reason it knows (0:
  // none): a buffer in user memory whose pages are touched for the first
  // time as its first passes fill them (LTTng-UST: on a VM whose page faults
  // are dear, 2.5x the steady cost for ~1.8 passes).  A run's warm-up fires
  // that many before it judges whether the cost has settled
  // (tracebench/steady_state.h).  Asked after the pilot.
  virtual std::uint64_t first_pass_events() const { return 0; }
  // Called once after the pilot and before the first measured block, with
  // the events one traced block fires on the firing thread (samples per
  // block x batch; the pilot's events were read back already).  A tracer
  // whose buffer is read back between blocks and whose size the user did not
  // set sizes it here to hold one block (events x its record size), within a
  // bound it documents; one that keeps its default returns ok.
  virtual Status plan_block(std::uint64_t events_per_block) {
    (void)events_per_block;
    return Status::ok();
  }
  // Consume what is buffered (called after disable(), before counts()).
  virtual Status drain() { return Status::ok(); }
  virtual EventCounts counts() = 0;
  // The tasks consuming what it records (asked after attach() and again
  // before drain(); work done on the calling thread: reads_on_caller()).  None for a tracer that keeps everything in the kernel
  // until drain().
  virtual std::vector<ConsumerTask> consumer_tasks() const { return {}; }
  // True when disable() or drain() read the tracer's records on the calling
  // thread the way its consumer would (ftrace's buffer read after each block,
  // the last pass of a reader thread): the harness then counts the CPU time
  // of every disable() and drain() call as consumer time (stopping the
  // tracer, a syscall or two per block, with it).  False when they only stop
  // a session and read the trace back to verify it (LTTng: its consumer
  // daemon did the work).
  virtual bool reads_on_caller() const { return false; }
  // Extra measurements a tracer has of itself (kernel run stats, ...).
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
  // A calibrated regression for measuring the suite's own detectors (the
  // none tracer's inject_cycles): the harness spins this many TSC cycles per
  // event after each batch the workload fires, inside the timed region, in
  // both variants, as if the workload itself had become that much slower.
  virtual std::uint64_t injected_cycles_per_event() const { return 0; }
  // The same sized to the host: this percentage of the workload's own cost
  // per event, which the harness measures on this machine before the
  // blocks (the none tracer's inject_percent), added to the cycles above.
  virtual double injected_percent_of_workload() const { return 0; }
  // For kMarker probes: the trace_marker file the workload must write to
  // (the tracer's private instance).  Called after attach().
  virtual std::string marker_file() const { return {}; }
  virtual void teardown() noexcept = 0;
};

// Registry: one line per adapter, in that adapter's folder:
//   TRACEBENCH_REGISTER_TRACER(ftrace, [] { return std::make_unique<FtraceTracer>(); });
using TracerFactory = std::function<std::unique_ptr<Tracer>()>;

struct TracerEntry {
  std::string name;
  TracerFactory make;
};

const std::vector<TracerEntry>& tracer_registry();
std::unique_ptr<Tracer> make_tracer(std::string_view name);
bool register_tracer(std::string name, TracerFactory make);

// Removes anything tagged as ours that a killed run left behind.  Each
// adapter registers one function; `tracebench cleanup` runs them all with
// remove = true; every other command runs them with remove = false and
// warns about what they found.  Returns what it removed (or would remove).
using CleanupFn = std::function<std::vector<std::string>(bool remove)>;
bool register_cleanup(std::string name, CleanupFn fn);
std::vector<std::pair<std::string, CleanupFn>>& cleanup_registry();

// What an adapter keeps from one benchmark to the next instead of setting it
// up at every attach (a daemon it started): `release` runs at exit, normal or
// not (a signal, an uncaught exception: see runner.h), after the attached
// tracers' teardown.  It must be safe to call when nothing is kept and must
// not throw.  Registering the same function again does nothing.
void keep_until_exit(void (*release)());

}  // namespace tracebench

#define TRACEBENCH_REGISTER_TRACER(id, factory)                                     \
  [[maybe_unused]] static const bool TRACEBENCH_CONCAT(tb_registered_tracer_, id) = \
      ::tracebench::register_tracer(#id, factory)
#define TRACEBENCH_REGISTER_CLEANUP(id, fn)                                          \
  [[maybe_unused]] static const bool TRACEBENCH_CONCAT(tb_registered_cleanup_, id) = \
      ::tracebench::register_cleanup(#id, fn)
