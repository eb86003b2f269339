// LTTng adapter, kernel domain (lttng-modules) driven through liblttng-ctl:
// a syscall's entry and exit events (`lttng enable-event -k --syscall`), a
// kprobe (`--probe`) or a kretprobe (`--function`) on a kernel function, the
// companion module's tracepoints (`lttng enable-event -k tracebench_fixed`), in a
// recording session scoped to the workload's pid, the trace read back with
// babeltrace2.  See README.md.
//
// lttng-modules registers a kernel event's probe when the event is created
// and unregisters it only when the session is destroyed: a disabled event
// still runs its kprobe or syscall probe.  So each enable() creates a session
// and each disable() destroys it, and the untraced blocks run with no LTTng
// probe in the kernel at all.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "tracers/lttng/ctf_reader.h"
#include "tracers/lttng/lttng_tracer.h"
#include "tracebench/tracer.h"

namespace tracebench::lttng_kernel {

// What a benchmark asks LTTng to instrument.
struct KernelEventPlan {
  enum class Kind { kSyscall, kKprobe, kKretprobe, kTracepoint } kind = Kind::kSyscall;
  std::string name;    // syscall or tracepoint name, or the event name given to LTTng (the symbol)
  std::string symbol;  // kernel function for kprobe/kretprobe
  bool exact = true;   // false when other processes can hit the probe too
};

// The plan for a probe point and action ("record": a syscall's LTTng syscall
// events, a kernel function's kprobe, the companion module's tracepoint
// through LTTng's probe for it (kmod/lttng); "function": a kretprobe on the
// kernel function, or on the syscall's entry function).
Status plan_events(const ProbePoint& probe, const std::string& action, KernelEventPlan* out);

// Options: those of the user-space adapter that apply to a kernel channel;
// the values the plan parsed, when the spec carries them, else its raw options.
Status parse_kernel_spec_options(const AttachSpec& spec, lttng::LttngConfig* out);

// Why this kernel cannot run LTTng's kernel tracer ("" when it can, as far
// as can be told without loading it): no loadable modules, no lttng-modules
// for the running release.
std::string kernel_tracer_missing();

class LttngKernelTracer final : public Tracer {
 public:
  LttngKernelTracer() = default;
  ~LttngKernelTracer() override;

  std::string_view name() const override { return "lttng_kernel"; }
  std::string_view description() const override;
  Availability available() override;
  std::vector<std::string> actions() const override { return {"record", "function"}; }
  bool supports(const ProbePoint& probe) const override;
  // "function" (a kretprobe) needs a function: syscalls and kernel functions.
  bool supports_action(const ProbePoint& probe, const std::string& action) const override {
    return action != "function" || probe.kind != ProbeKind::kKmodTracepoint;
  }
  const OptionSchema& option_schema() const override { return lttng::option_schema(false); }
  ModelDescription model() const override;  // model.cc
  std::map<std::string, std::string> versions() const override;

  Status validate(const AttachSpec& spec) const override;
  Status attach(const AttachSpec& spec) override;
  Status enable() override;
  Status disable() override;
  Status drain() override;
  EventCounts counts() override;
  // The session daemon and its consumer daemons (which write the trace).
  std::vector<ConsumerTask> consumer_tasks() const override;
  nlohmann::json details() const override;
  void teardown() noexcept override;

  // For tests.
  const std::string& trace_dir() const { return trace_dir_; }
  const std::string& session_name() const { return session_; }
  pid_t started_sessiond() const { return started_sessiond_; }

 private:
  Status open_session();   // create, scope to the pid, channel, event, start
  Status close_session();  // stop, read the channel's counters, destroy
  void destroy_session() noexcept;

  mutable std::mutex mu_;
  lttng::LttngConfig config_;
  KernelEventPlan plan_;
  lttng::TraceExpectation expect_;
  pid_t pid_ = 0;
  bool attached_ = false;
  std::string trace_dir_;
  std::string session_;    // the open session, "" when none
  unsigned sessions_ = 0;  // sessions opened since attach()
  pid_t started_sessiond_ = 0;
  std::uint64_t discarded_events_ = 0;
  std::uint64_t lost_packets_ = 0;
  double open_ms_max_ = 0, close_ms_max_ = 0;
  lttng::TraceSummary trace_;
  bool drained_ = false;
};

}  // namespace tracebench::lttng_kernel
