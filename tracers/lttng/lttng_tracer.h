// LTTng adapter, user-space domain: one recording session per benchmark
// driven through liblttng-ctl, the workload's LTTng-UST tracepoint as an
// event rule enabled in enable() and disabled in disable(), the trace read
// back with babeltrace2 in drain().  See README.md.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "channel_config.h"
#include "ctf_reader.h"
#include "tracebench/tracer.h"

struct lttng_handle;

namespace tracebench::lttng {

inline constexpr const char* kSessionPrefix = "tracebench-";
inline constexpr const char* kChannelName = "tracebench";
// The extra handlers' channels (option ecbs): tracebench_h2 .. tracebench_h<N>.
inline constexpr const char* kExtraChannelPrefix = "tracebench_h";
inline constexpr const char* kTempDirPrefix = "/tmp/tracebench-lttng-";

class LttngTracer final : public Tracer {
 public:
  LttngTracer() = default;
  ~LttngTracer() override;

  std::string_view name() const override { return "lttng"; }
  std::string_view description() const override;
  Availability available() override;
  std::vector<std::string> actions() const override { return {"record"}; }
  bool supports(const ProbePoint& probe) const override;
  const OptionSchema& option_schema() const override { return lttng::option_schema(true); }
  ModelDescription model() const override;  // model.cc
  std::map<std::string, std::string> versions() const override;

  Status validate(const AttachSpec& spec) const override;
  Status attach(const AttachSpec& spec) override;
  Status enable() override;
  Status disable() override;
  Status drain() override;
  std::uint64_t block_event_capacity() const override;
  std::uint64_t first_pass_events() const override;
  EventCounts counts() override;
  // The session daemon and its consumer daemons (which write the trace).
  std::vector<ConsumerTask> consumer_tasks() const override;
  nlohmann::json details() const override;
  void teardown() noexcept override;

  // For tests.
  const std::string& session_name() const { return session_; }
  const std::string& trace_dir() const { return trace_dir_; }
  pid_t started_sessiond() const { return started_sessiond_; }
  // The extra handlers' filter with extra_predicate=false (kFalseFilter);
  // a test sets one that holds to see that the filter is evaluated.
  void set_false_filter_for_test(std::string filter) { false_filter_ = std::move(filter); }

 private:
  // One handler on the tracepoint: a channel with its own event rule.
  struct Handler {
    std::string channel;
    std::string filter;  // "" = none (the rule records every event)
    std::uint64_t discarded_events = 0;
    std::uint64_t lost_packets = 0;
    TraceSummary trace;  // its channel's part of the trace
  };

  Status wait_for_registration();
  Status add_channel(const lttng_domain& dom, const std::string& name);
  Status set_event(const Handler& h, bool on);
  Status set_events(bool on);
  Status query_channels();
  void check_handlers(EventCounts* c) const;

  mutable std::mutex mu_;
  LttngConfig config_;
  std::string event_;  // "provider:event"
  TraceExpectation expect_;
  pid_t pid_ = 0;
  std::string session_;
  std::string trace_dir_;
  lttng_handle* handle_ = nullptr;
  pid_t started_sessiond_ = 0;
  bool session_created_ = false;
  bool started_ = false;
  bool event_enabled_ = false;
  bool drained_ = false;
  double registration_ms_ = 0;
  std::vector<Handler> handlers_;  // [0] is kChannelName's
  std::string false_filter_ = kFalseFilter;
  std::uint64_t discarded_events_ = 0;  // handlers_[0]'s
  std::uint64_t lost_packets_ = 0;
  TraceSummary trace_;                        // handlers_[0]'s events, the whole trace's size and read time
  std::uint64_t foreign_channel_events_ = 0;  // events of a channel that is no handler's
  std::string foreign_channel_;
};

// `tracebench cleanup`: sessions named tracebench-<pid> (user space) or
// tracebench-<pid>-k<n> (kernel) whose pid is gone, their
// /tmp/tracebench-lttng-<pid>-* directories, a session daemon a killed run
// started (leftovers.cc, shared with ../lttng_kernel).
std::vector<std::string> cleanup_leftovers(bool remove = true);

}  // namespace tracebench::lttng
