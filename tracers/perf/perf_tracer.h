// perf adapter: perf_event_open on a tracepoint (or a uprobe through the
// uprobe PMU) with PERF_SAMPLE_RAW|TID|TIME and period 1, scoped to the
// target process (one event per thread and CPU, inherit for later threads),
// written into one mmap ring per CPU that a consumer thread, pinned away from
// the measured CPU, drains while the workload runs.  With option ecbs=N,
// N events per (thread, CPU) on the same tracepoint: N handlers on one probe
// point, all writing into the same rings.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tracebench/tracer.h"
#include "tracers/common/other_process.h"
#include "tracers/common/proc.h"
#include "tracers/common/tracefs_leftovers.h"
#include "uprobe_sites.h"

namespace tracebench::perf {

struct PerfConfig {
  std::string event;              // "system:event" override for syscall probes
  bool id_filter = true;          // raw_syscalls: PERF_EVENT_IOC_SET_FILTER "id == N"
  std::size_t mmap_pages = 512;   // data pages per CPU ring (power of two)
  bool mmap_pages_given = false;  // the ring is the user's: blocks are not shrunk to fit it
  std::size_t wakeup_events = 0;  // 0 = wake the consumer at half a ring
  int consumer_cpu = -2;          // -2 = CPU 0 when there are >1 CPUs; -1 = unpinned
  std::string clock;              // "" = perf's local clock; monotonic, monotonic_raw, boottime, tai
  bool uprobe_pmu = false;        // uprobe=pmu: the uprobe PMU instead of a tracefs uprobe event
  bool at_return = false;         // at=return: a return probe (uretprobe) on the user function
  bool pid_other = false;         // pid_filter=other: the events on another process of this binary
  // sample=minimal: RAW|TID|TIME; sample=record: what `perf record -e <tp>`
  // asks for (IP|TID|TIME|CPU|PERIOD|RAW, sample_id_all), for comparing with it.
  bool record_layout = false;
  unsigned ecbs = 1;                 // handlers: perf events per (thread, CPU) on the tracepoint
  bool extra_predicate = true;       // the extra events record (true) or filter everything out (false)
  std::uint64_t profile_hz = 10000;  // profile probes: cpu-clock samples per second of CPU time
  bool profile_hz_given = false;
};

// The tracepoint filter of an extra event with extra_predicate=false:
// evaluated by the kernel on every hit, never true (no task has pid -1).
inline constexpr const char* kFalseFilter = "common_pid == -1";
inline constexpr unsigned kMaxEcbs = 32;

// The adapter's `--option perf.<key>=<value>` keys, and their parse into a PerfConfig.
const OptionSchema& option_schema();
// A spec's options: the values the plan parsed, when it carries them, else its raw options.
Status parse_spec_options(const AttachSpec& spec, PerfConfig* out);

class PerfTracer final : public Tracer {
 public:
  PerfTracer() = default;
  ~PerfTracer() override;

  std::string_view name() const override { return "perf"; }
  std::string_view description() const override;
  Availability available() override;
  std::vector<std::string> actions() const override { return {"count"}; }
  bool supports(const ProbePoint& probe) const override;
  bool attaches_many_sites() const override { return true; }
  const OptionSchema& option_schema() const override { return perf::option_schema(); }
  ModelDescription model() const override;  // model.cc
  std::map<std::string, std::string> versions() const override;

  Status validate(const AttachSpec& spec) const override;
  Status attach(const AttachSpec& spec) override;
  Status enable() override;
  Status disable() override;
  Status drain() override;
  std::uint64_t block_event_capacity() const override;
  EventCounts counts() override;
  std::vector<ConsumerTask> consumer_tasks() const override;
  nlohmann::json details() const override;
  void teardown() noexcept override;

  // For tests.
  std::size_t event_fds() const;
  int consumer_cpu() const { return consumer_cpu_; }

 private:
  struct Ring {
    int cpu = -1;
    // The ring belongs to the consumer thread's page-fault event on this
    // CPU (see drain()), open from attach() to teardown(); the traced events
    // write into it (SET_OUTPUT) and exist only while enabled.
    int flush_fd = -1;
    void* base = nullptr;
    std::size_t map_bytes = 0;
    std::vector<int> fds;           // traced events (per thread and handler), open while enabled
    std::vector<unsigned> handler;  // fds[i] is handler handler[i] (0 = the first)
  };

  Status open_events(const AttachSpec& spec);
  // open_events()'s steps.
  Status resolve_event(const ProbePoint& p, pid_t pid, std::string* file, std::uint64_t* offset);
  perf_event_attr event_attr();
  Status open_rings(const perf_event_attr& a);
  Status open_traced();
  void close_traced() noexcept;
  Status open_traced_event(Ring& r, pid_t tid, const perf_event_attr& attr, unsigned h, bool* gone);
  void consumer_main();
  void read_ring(Ring& ring);
  void flush_rings();
  void stop_consumer() noexcept;

  // Entry points lock this: the harness's signal watcher may call teardown()
  // while the main thread is inside another call.
  mutable std::recursive_mutex api_mu_;
  PerfConfig config_;
  std::vector<Ring> rings_;
  std::uint32_t type_ = 0;
  std::uint64_t config_id_ = 0;
  bool check_type_ = true;      // tracepoints: RAW common_type must match
  std::size_t tid_offset_ = 4;  // in a sample's body: where tid and the RAW size are
  std::size_t raw_size_offset_ = 16;
  bool exact_ = true;
  bool attached_ = false;
  std::string event_label_;
  // The uprobe PMU reads attr.config1 as a pointer to the path again each
  // time an inherited event is created (at every clone of a traced thread),
  // so the string must live as long as the events.
  std::string uprobe_path_;
  std::string uprobe_event_;  // tracefs uprobe event we created (group tracebench)
  static constexpr const char* kUprobeGroup = common::kDynamicEventGroup;  // tracefs_leftovers.h
  bool user_function_ = false;
  MoreSites more_sites_;  // a many-probe workload's further sites
  // pid_filter=other: the process the events are opened on, and whether it
  // made its calls (at the first enable()).
  common::OtherProcess other_;
  bool other_called_ = false;
  static constexpr std::uint64_t kOtherCalls = 1000;
  EventCounts other_process_counts(EventCounts c) const;
  std::size_t page_size_ = 4096;
  int consumer_cpu_ = -1;
  // What open_traced() opens at every enable().
  perf_event_attr attr_{};
  std::string filter_;
  pid_t pid_ = 0;
  // Per handler: {hits, lost} read from traced events before closing them.
  std::array<std::uint64_t, kMaxEcbs> closed_hits_{};
  std::array<std::uint64_t, kMaxEcbs> closed_lost_{};
  std::size_t opened_fds_ = 0;                       // traced events opened by the last open_traced()
  std::array<std::size_t, kMaxEcbs> handler_fds_{};  // of those, per handler
  std::uint64_t enables_ = 0;                        // enable() calls that opened them

  std::thread consumer_;
  int wake_fd_ = -1;
  pid_t consumer_tid_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t drain_requested_ = 0;
  std::uint64_t drain_completed_ = 0;
  bool stop_ = false;
  bool started_ = false;

  std::atomic<std::uint64_t> samples_{0};  // the first handler's (every sample when ecbs=1)
  std::atomic<std::uint64_t> lost_{0};
  // Option ecbs: the sample id (PERF_EVENT_IOC_ID; an inherited event
  // reports its parent's) of every traced event opened, to its handler.
  // Samples carry it (PERF_SAMPLE_IDENTIFIER) when the extras record.
  bool by_id_ = false;
  std::mutex ids_mu_;
  std::unordered_map<std::uint64_t, unsigned> ids_;
  // Lost samples are not told apart in the rings (a ring's PERF_RECORD_LOST
  // sums every event's losses): per handler they are the kernel's count of
  // each event (PERF_FORMAT_LOST, kernel_lost_).
  std::array<std::atomic<std::uint64_t>, kMaxEcbs> handler_samples_{};  // [0] unused: samples_
  std::atomic<std::uint64_t> lost_records_{0};
  std::atomic<std::uint64_t> foreign_{0};  // samples of another type (must stay 0)
  std::atomic<std::uint64_t> flush_samples_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> wakeups_{0};
  std::atomic<std::uint64_t> throttles_{0};  // PERF_RECORD_THROTTLE seen
  // From read(2) on every event fd (PERF_FORMAT_LOST), taken in drain(): the
  // kernel's own hit count and lost-sample count, a cross-check of the rings.
  std::array<std::uint64_t, kMaxEcbs> kernel_hits_{};  // per handler
  std::array<std::uint64_t, kMaxEcbs> kernel_lost_{};
  std::vector<char> scratch_;  // consumer-only: records that wrap
  // A profile probe: a cpu-clock event of the attaching (firing) thread
  // with a sampling period; its read(2) value is the thread's CPU time in
  // ns, so the events' firings are that over the period, summed over the
  // enabled windows, each event's window one (its timer's phase) and each
  // switch back into the thread another.
  bool profile_ = false;
  pid_t profile_tid_ = 0;
  std::uint64_t profile_period_ns_ = 0;
  common::TimerFirings timer_;
};

}  // namespace tracebench::perf
