// Ftrace adapter: static tracefs events, trace_marker, uprobe events and the
// function tracer, always inside a private tracefs instance
// "tracebench-<pid>[-<n>]" driven through libtracefs; the events are read
// back from the raw per-CPU buffers and parsed with libtraceevent.  With
// option ecbs=N the event is enabled in N - 1 extra instances
// "tracebench-<pid>-[<n>-]h<i>" too: N handlers on one probe point.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tracebench/tracer.h"
#include "more_site_events.h"

struct tracefs_instance;
struct tracefs_dynevent;
struct tep_handle;

namespace tracebench::ftrace {

// Parsed AttachSpec.options; see tracers/ftrace/README.md.
struct FtraceConfig {
  std::size_t buffer_kb = 0;  // 0 = kernel default for a new instance
  std::size_t subbuf_kb = 0;  // 0 = kernel default (one page)
  std::string clock = "local";
  bool overwrite = true;           // mode=overwrite|discard
  std::string event;               // "system:event" override for syscalls
  bool pid_filter = true;          // set_event_pid (+ event-fork)
  bool id_filter = true;           // raw_syscalls: filter "id == __NR_x"
  bool consume_on_disable = true;  // read=disable|end
  unsigned ecbs = 1;               // handlers: instances with the event enabled
  bool extra_predicate = true;     // the extra instances record (true) or filter all out (false)
  bool extra_predicate_given = false;
  bool at_return = false;  // at=entry|return: a user function's uprobe or uretprobe
};

// The filter of an extra instance with extra_predicate=false: evaluated by
// the kernel on every event of the traced threads, never true (no task has
// pid -1).
inline constexpr const char* kFalseFilter = "common_pid == -1";
inline constexpr unsigned kMaxEcbs = 32;

// The adapter's `--option ftrace.<key>=<value>` keys.
const OptionSchema& option_schema();
// A spec's options as a configuration: the values the plan parsed, when it
// carries them, else its raw options checked against the schema (unknown
// keys are an error).
Status parse_spec_options(const AttachSpec& spec, FtraceConfig* out);

// The most payload bytes one trace_marker write keeps on the running kernel
// (4054 on 6.18 with 4 KiB sub-buffers: the ring buffer's largest event minus
// the print entry's header), found by trying once per process in a
// throw-away instance; 0 when it cannot be found.  A marker payload above it
// is truncated on every event, and verification fails.
std::size_t max_payload_bytes();

// Kernel function tracer in a throw-away private instance, found by trying.
Availability probe_function_tracer();
// Each facility the adapter uses (static events, trace_marker, uprobe events,
// function tracer), tried in a throw-away instance: {"name": {"ok", "reason"}}.
nlohmann::json probe_features();

class FtraceTracer final : public Tracer {
 public:
  FtraceTracer();
  ~FtraceTracer() override;

  std::string_view name() const override { return "ftrace"; }
  std::string_view description() const override;
  Availability available() override;
  std::vector<std::string> actions() const override { return {"count", "payload"}; }
  bool supports(const ProbePoint& probe) const override;
  bool attaches_many_sites() const override { return true; }  // an uprobe event per site (more_site_events.h)
  const OptionSchema& option_schema() const override { return ftrace::option_schema(); }
  ModelDescription model() const override;  // model.cc
  std::map<std::string, std::string> versions() const override;

  Status validate(const AttachSpec& spec) const override;
  std::size_t max_payload_bytes(const ProbePoint& probe, const std::string& action) const override;
  Status attach(const AttachSpec& spec) override;
  Status enable() override;
  Status disable() override;
  Status plan_block(std::uint64_t events_per_block) override;
  Status drain() override;
  EventCounts counts() override;
  // The instance's buffer is read (libtracefs, libtraceevent) in disable()
  // (consume_on_disable) and drain(): what trace-cmd's reader does, with the
  // payload check.
  bool reads_on_caller() const override { return true; }
  nlohmann::json details() const override;
  std::string marker_file() const override;
  void teardown() noexcept override;

  // For tests: the instance this tracer owns ("" before attach()).
  const std::string& instance_name() const { return instance_name_; }
  const std::string& event_system() const { return system_; }
  const std::string& event_name() const { return event_; }
  // The extra instances of option ecbs (handlers 2..N), in order.
  std::vector<std::string> extra_instance_names() const;

 private:
  // One of the ecbs - 1 extra handlers: the same event enabled in another
  // instance, with the same pid (and id) filters, or the always-false filter.
  struct Extra {
    tracefs_instance* instance = nullptr;
    std::string name;
    int toggle_fd = -1;
    std::uint64_t recorded = 0;
    std::uint64_t other = 0;
    std::uint64_t lost = 0;
  };

  Status read_back();  // consume the raw buffers, update counts
  Status read_lost(tracefs_instance* inst, const std::string& name, std::uint64_t* lost) const;
  // attach()'s steps, in order.
  Status create_instance(int seq);
  Status setup_event(const AttachSpec& spec);
  Status configure_buffer(const AttachSpec& spec);
  Status setup_filters(const AttachSpec& spec);
  Status load_event_format();
  Status open_toggle();
  Status setup_uprobe(const AttachSpec& spec);
  Status setup_pid_filter(pid_t pid);
  Status add_extra(const std::string& name, const std::string& filter);
  void destroy_instance(tracefs_instance* inst, bool disable_event) noexcept;

  // The harness may call teardown() from its signal watcher thread while the
  // main thread is inside another call; every entry point takes this lock.
  mutable std::recursive_mutex mu_;
  FtraceConfig config_;
  AttachSpec spec_;
  tracefs_instance* instance_ = nullptr;
  std::string instance_name_;
  std::vector<Extra> extras_;  // option ecbs: handlers 2..N
  tracefs_dynevent* uprobe_ = nullptr;
  MoreSiteEvents more_sites_;  // a many-probe workload's further sites' events
  tep_handle* tep_ = nullptr;
  std::string system_;  // "syscalls", "ftrace", "tracebench", ...
  std::string event_;   // "sys_enter_getpid", "print", "tb123_fn"
  int event_id_ = -1;
  // enable()/disable() toggle with pwrite(2) on this fd (the event's
  // "enable", or "tracing_on" for markers) so that the toggle itself is not a
  // write(2) the syscalls:sys_enter_write event would record.
  int toggle_fd_ = -1;
  bool marker_ = false;    // trace_marker probe: enable = tracing_on
  bool function_ = false;  // kernel function tracer
  bool enabled_ = false;
  bool exact_ = true;

  std::uint64_t recorded_ = 0;
  std::uint64_t other_events_ = 0;  // records of another type (must stay 0)
  std::uint64_t payload_verified_ = 0;
  std::uint64_t payload_bad_events_ = 0;    // marker records not matching the pattern
  std::uint64_t payload_short_events_ = 0;  // kernel kept fewer bytes than written
  std::uint64_t payload_checked_events_ = 0;
  std::uint64_t payload_kept_bytes_ = 0;  // length kept in the first short record
  std::string payload_problem_;           // first mismatch or truncation, in words
  std::string first_other_;               // first record of another event
  std::uint64_t reads_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t lost_before_reset_ = 0;                 // function tracer: lost before a current_tracer reset
  std::map<std::string, std::string> applied_;          // what was written into tracefs
  nlohmann::json features_ = nlohmann::json::object();  // from available(), by trying
};

}  // namespace tracebench::ftrace
