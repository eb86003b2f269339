// The eBPF adapter: one libbpf skeleton per program family (tracers/ebpf/bpf),
// one program per action, attached while the harness has the tracer enabled.
//
// Options (AttachSpec.options, all strings; unknown keys are an error):
//   attach       tracepoint|raw_tp|tp_btf|uprobe|uretprobe|usdt|fentry|fexit|kprobe|perf_event
//                (default from the probe kind: syscall->tracepoint,
//                user function->uprobe, usdt->usdt, kernel function->fentry,
//                profile->perf_event)
//   profile_hz   perf_event: samples per second of the firing thread's CPU
//                time (a cpu-clock event, period 1e9/hz ns; default 10000)
//   wakeup       default|no_wakeup|force     ringbuf: bpf_ringbuf_submit() flags
//   consumer     epoll|spin                  ringbuf/perfbuf consumer thread
//   consumer_cpu CPU of the consumer thread (default 0)
//   poll_ms      epoll timeout of the consumer (default 10)
//   buffer_kb    ringbuf size (power of two, default 4096) or perf buffer
//                size per CPU (power of two pages, default 256)
//   record_bytes bytes per ringbuf/perfbuf record, 8..4096, multiple of 8
//                (default: the spec's payload_bytes rounded up, or 64)
//   hash_map     percpu|shared   map type of the hash action (default percpu,
//                what bpftrace's @[tid] = count() uses)
//   hash_entries max entries of the hash map (default 10240)
//   ecbs         programs on the probe point, count action (default 1)
//   extra_predicate true|false  whether the extra programs' tgid filter holds
//   stats        on|off   kernel run-time stats (BPF_ENABLE_STATS) while
//                attached (default off: they add two clock reads per run;
//                on for the action "empty", which is counted from them)
// See tracers/ebpf/README.md.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bpf_objects.h"
#include "site_links.h"
#include "consumer.h"
#include "tracebench/tracer.h"
#include "tracers/common/other_process.h"
#include "tracers/common/proc.h"

struct bpf_link;

namespace tracebench::ebpf {

// The adapter's `--option ebpf.<key>=<value>` keys.
const OptionSchema& option_schema();

class EbpfTracer final : public Tracer {
 public:
  EbpfTracer() = default;
  ~EbpfTracer() override { teardown(); }

  std::string_view name() const override { return "ebpf"; }
  std::string_view description() const override {
    return "eBPF programs (libbpf skeletons) on tracepoints, raw/BTF tracepoints, uprobes, USDT, "
           "fentry/fexit and kprobes";
  }
  Availability available() override;
  std::vector<std::string> actions() const override {
    return {"count", "empty", "hash", "update", "ringbuf", "perfbuf"};  // first = default
  }
  bool supports(const ProbePoint& probe) const override;
  bool attaches_many_sites() const override { return true; }
  const OptionSchema& option_schema() const override { return ebpf::option_schema(); }
  ModelDescription model() const override;  // model.cc
  std::map<std::string, std::string> versions() const override;

  Status validate(const AttachSpec& spec) const override;
  // The spec's attach type as attach_type_availability() found it here.
  Availability available_for(const AttachSpec& spec) const override;
  Status attach(const AttachSpec& spec) override;
  Status enable() override;
  Status disable() override;
  Status drain() override;
  EventCounts counts() override;
  std::vector<ConsumerTask> consumer_tasks() const override;
  // The last pass over the ring or perf buffer runs in drain(); the map
  // actions have no consumer (their counters are read once, to verify).
  bool reads_on_caller() const override { return cfg_.action == "ringbuf" || cfg_.action == "perfbuf"; }
  nlohmann::json details() const override;
  void teardown() noexcept override;

  // Per attach type: whether a program of that type loads, attaches and
  // counts 3 events on the running kernel, found by trying (once per
  // process, cached), with the libbpf/kernel error when it does not.
  // Also reported in details()["attach_types"] for `tracebench env`.
  static const std::map<std::string, Availability>& attach_type_availability();

  // Program ids loaded by this instance (for leak checks).
  std::vector<std::uint32_t> program_ids() const { return prog_ids_; }
  // BPF link ids created by enable() (USDT links are composite: no id).
  std::vector<std::uint32_t> link_ids() const { return link_ids_; }

 private:
  Status parse_options(const AttachSpec& spec);
  bool consumer_shares_cpu_ = false;  // the consumer is pinned to the measured CPU
  Status resolve_target();
  Status resolve_multi_offsets();
  // Links `prog` to the resolved target.
  Status attach_link(bpf_program* prog, const std::string& name, bpf_link** out);
  // The probe point's other sites (a many-probe workload), or every site
  // through one uprobe_multi link.
  Status attach_sites();
  void destroy_links();  // every link this adapter holds
  Status detach();       // disable()'s work, under its lock
  std::uint64_t sum_percpu(bpf_map* map, std::uint32_t key) const;
  struct KernelStats {
    bool ok = false;
    std::uint64_t run_cnt = 0, run_time_ns = 0, recursion_misses = 0;
  };
  KernelStats read_kernel_stats() const;

  std::mutex teardown_mu_;
  AttachSpec spec_;
  LoadConfig cfg_;
  // Resolved options.
  std::string wakeup_ = "default";
  ConsumerConfig consumer_cfg_;
  bool stats_ = true;
  std::size_t buffer_kb_ = 0;
  // ringbuf/perfbuf records copy the workload's buffer (else generated).
  bool copy_payload_ = false;
  // pid_filter: whose hits the probe is for.  self: this process's (the
  // kernel's filter at the link, the program's tgid check); other_kernel /
  // other_program: another process of this binary (other_), filtered at the
  // link (the kernel installs the probe in that process alone) or by the
  // program (installed in every process, the tgid compared on every hit),
  // so this process's hits are all rejected.  The other process's calls at
  // the first enable() are the proof the probe is live (other_counted_).
  enum class PidFilter { kSelf, kOtherKernel, kOtherProgram };
  PidFilter pid_filter_ = PidFilter::kSelf;
  common::OtherProcess other_;
  static constexpr std::uint64_t kOtherCalls = 1000;
  bool other_checked_ = false;
  std::uint64_t other_counted_ = 0;
  Status check_other_process();
  EventCounts filtered_counts();
  // Resolved target.
  int pid_ = 0;
  std::string binary_;       // uprobe/usdt: /proc/<pid>/exe
  std::string target_desc_;  // "syscalls:sys_enter_getpid", ...
  std::string usdt_provider_, usdt_name_, kernel_func_;
  std::string tp_category_, tp_name_;  // attach=tracepoint: the tracefs event
  // attach=uprobe_multi: the file and the offsets of every site in it.
  std::string multi_path_;
  std::vector<std::uint64_t> multi_offsets_;

  std::unique_ptr<LoadedObject> obj_;
  bpf_link* link_ = nullptr;
  // ecbs > 1: the extra programs on the same hook, each its own object
  // (maps, .rodata) and link; their tgid filter never holds with
  // extra_predicate=false.
  int ecbs_ = 1;
  bool extra_false_ = false;
  struct Extra {
    std::unique_ptr<LoadedObject> obj;
    bpf_link* link = nullptr;
  };
  std::vector<Extra> extras_;
  SiteLinks sites_;  // more_sites' links, or the one uprobe_multi link
  std::unique_ptr<Consumer> consumer_;
  int stats_fd_ = -1;
  std::string stats_error_;
  std::vector<std::uint32_t> prog_ids_;
  std::vector<std::uint32_t> link_ids_;
  bool attached_ = false;
  std::uint64_t enables_ = 0;
  // Profile probes (attach=perf_event): the cpu-clock event of the enabled
  // window (the link owns and closes it), its period, the thread it samples,
  // and what its clock counted: the firings it made and the windows.
  std::uint64_t profile_period_ns_ = 100000;
  int profile_fd_ = -1;
  int profile_tid_ = 0;
  common::TimerFirings timer_;
  double attach_seconds_ = 0;  // link creation time summed over enable()s
  double detach_seconds_ = 0;  // and their destruction over disable()s
  std::uint64_t disables_ = 0;
  std::int64_t irq_work_at_enable_ = -1;
  std::int64_t irq_work_while_enabled_ = 0;
};

// Mounts tracefs at /sys/kernel/tracing if no tracefs is mounted (libbpf's
// tracepoint attach reads event ids there), like libtracefs does.  Returns
// whether this process mounted it.
Status ensure_tracefs(bool* mounted_by_us);

// Sum of the "IWI" (IRQ work interrupts) row of /proc/interrupts, -1 if absent.
std::int64_t irq_work_interrupts();

}  // namespace tracebench::ebpf
