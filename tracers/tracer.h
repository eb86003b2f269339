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
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/register.h"
#include "tracebench/status.h"

namespace tracebench {

// What kind of site a probe point is; adapters decide what they can attach to
// from the kind, not from the name.
enum class ProbeKind {
  kNone,           // fires nothing a tracer can see (empty loop)
  kSyscall,        // a syscall; `target` is the syscall name ("getpid")
  kUserFunction,   // a noinline function in this binary; `target` is its symbol
  kUsdt,           // a sys/sdt.h site; `target` is "provider:name"
  kMarker,         // a write to tracefs trace_marker; payload = bytes written
  kKernelFunction, // a kernel function (kprobe / fentry / function tracer)
  kKmodTracepoint, // a tracepoint of the companion module
  kUstTracepoint,  // an LTTng-UST tracepoint; `target` is "provider:event"
};

std::string_view to_string(ProbeKind kind);

// One place a workload fires events.  `name` is stable and user-visible
// ("syscall:getpid", "user:tb_hot_nop", "usdt:tracebench:hot").
struct ProbePoint {
  std::string name;
  ProbeKind kind = ProbeKind::kNone;
  std::string target;            // syscall name, symbol, "provider:name", ...
  std::uintptr_t address = 0;    // resolved address for kUserFunction, else 0
  std::string description;
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
  int pid = 0;                     // process that fires (0 = this process)
};

// Events the tracer saw since attach().  `exact` is false when the probe can
// also be hit by activity outside the workload (e.g. raw_syscalls), in which
// case recorded + lost >= fired is all that can be checked.
struct EventCounts {
  std::uint64_t recorded = 0;
  std::uint64_t lost = 0;
  bool exact = true;
  // Bytes of payload verified byte-for-byte after the run (0 = not checked).
  std::uint64_t payload_verified = 0;
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
  // Whether `action` applies at a supported probe (an action that only some
  // probe kinds have, e.g. a kretprobe); the plan leaves the others out.
  virtual bool supports_action(const ProbePoint& probe, const std::string& action) const {
    (void)probe;
    (void)action;
    return true;
  }
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
  virtual Status attach(const AttachSpec& spec) = 0;
  virtual Status enable() = 0;
  virtual Status disable() = 0;
  // Consume what is buffered (called after disable(), before counts()).
  virtual Status drain() { return Status::ok(); }
  virtual EventCounts counts() = 0;
  // Extra measurements a tracer has of itself (kernel run stats, ...).
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
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

}  // namespace tracebench

#define TRACEBENCH_REGISTER_TRACER(id, factory) \
  [[maybe_unused]] static const bool TRACEBENCH_CONCAT(tb_registered_tracer_, id) = \
      ::tracebench::register_tracer(#id, factory)
#define TRACEBENCH_REGISTER_CLEANUP(id, fn) \
  [[maybe_unused]] static const bool TRACEBENCH_CONCAT(tb_registered_cleanup_, id) = \
      ::tracebench::register_cleanup(#id, fn)
