// The perf adapter: one class over perf_event_open.  Longer than the suite's
// ~600-line guide (README, Contributing), on purpose: opening the events (tracepoint, tracefs or PMU
// uprobe, per thread or per CPU), the mmap rings, the consumer thread that
// drains them and the counts judged against the workload share the same
// per-ring state and are read together.
#include "perf_tracer.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>

#include "tracebench/handler_count.h"
#include "tracebench/parse.h"
#include "tracebench/system.h"
#include "tracers/common/names.h"
#include "tracers/common/proc.h"
#include "tracers/common/return_probe.h"

extern "C" const char* tracefs_tracing_dir(void);  // libtracefs; mounts tracefs if needed

namespace tracebench::perf {
namespace {

using common::address_to_file_offset;
using common::read_text;

long sys_perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

std::uint32_t uprobe_pmu_type() {
  std::string t = read_text("/sys/bus/event_source/devices/uprobe/type");
  return t.empty() ? 0 : static_cast<std::uint32_t>(std::atoi(t.c_str()));
}

// Where the uprobe PMU takes a reference counter's offset in `config`
// (its format file: "config:32-63"); -1 when this kernel's PMU has none.
int uprobe_pmu_ref_ctr_shift() {
  const std::string f = read_text("/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset");
  int lo = -1, hi = -1;
  if (std::sscanf(f.c_str(), "config:%d-%d", &lo, &hi) != 2 || lo < 0 || lo > 63) return -1;
  return lo;
}

// The bit of `config` that makes the uprobe PMU's probe a return probe (its
// format file: "config:0"); -1 when this kernel's PMU has none.
int uprobe_pmu_retprobe_bit() {
  const std::string f = read_text("/sys/bus/event_source/devices/uprobe/format/retprobe");
  int bit = -1;
  if (std::sscanf(f.c_str(), "config:%d", &bit) != 1 || bit < 0 || bit > 63) return -1;
  return bit;
}

int clock_id(const std::string& name) {
  if (name == "monotonic") return CLOCK_MONOTONIC;
  if (name == "monotonic_raw") return CLOCK_MONOTONIC_RAW;
  if (name == "boottime") return CLOCK_BOOTTIME;
  if (name == "tai") return CLOCK_TAI;
  if (name == "realtime") return CLOCK_REALTIME;
  return -1;
}

}  // namespace

const OptionSchema& option_schema() {
  using T = OptionSpec::Type;
  static const OptionSchema schema = {
      {.name = "event",
       .type = T::kText,
       .help = "tracepoint for syscall probes (e.g. `raw_syscalls:sys_enter`)",
       .default_help = "`syscalls:sys_enter_<target>`",
       .format = "system:event",
       .check = check_system_event},
      {.name = "id_filter",
       .type = T::kBool,
       .help = "`raw_syscalls`: `PERF_EVENT_IOC_SET_FILTER \"id == __NR_<target>\"`; off makes counts inexact",
       .default_value = "on"},
      {.name = "mmap_pages",
       .type = T::kUint,
       .help = "data pages per CPU ring; the consumer thread empties it beside the firing thread and falls behind on "
               "a busy machine, so with the default a traced block fires at most what half the ring holds in samples "
               "of at most 128 bytes (4096 per MiB: the harness shrinks the block to it); 2 MiB per CPU holds 8192, "
               "near a 10 ms quick block of the cheapest probes (uprobes, ~10,000 events); given, the ring is yours "
               "and blocks keep their size",
       .default_value = "512",
       .min = 1,
       .max = 1u << 16,
       .power_of_two = true,
       .sizes_buffer = true},
      {.name = "wakeup_events",
       .type = T::kUint,
       .help = "wake the consumer every N samples; 0 = watermark at half a ring",
       .default_value = "0",
       .max = 1u << 30},
      {.name = "consumer_cpu",
       .type = T::kUint,
       .help = "consumer thread affinity; none = unpinned",
       .default_help = "the first online CPU outside the attaching thread's affinity; unpinned on 1 CPU",
       .max = 4095,
       .words = {"none"}},
      {.name = "clock",
       .type = T::kChoice,
       .help = "`use_clockid` for `PERF_SAMPLE_TIME`",
       .default_help = "perf's local clock",
       .words = {"monotonic", "monotonic_raw", "boottime", "tai", "realtime"}},
      {.name = "uprobe",
       .type = T::kChoice,
       .help = "how a user-function probe is created (see above)",
       .default_value = "tracefs",
       .words = {"tracefs", "pmu"}},
      common::at_option("on a user function: a uprobe at its entry, or a return probe (`r:` in "
                        "`uprobe_events`; the uprobe PMU's `retprobe` bit), which fires when the function returns"),
      {.name = "pid_filter",
       .type = T::kChoice,
       .help = "whose hits a user-function probe is for: `self`, or another process of this binary that calls the "
               "probed function 1000 times at the first enable (the proof the probe is live); the events are then "
               "opened on that process's threads, so the kernel installs the breakpoint there alone (as `perf "
               "record -p PID`) and no hit of the measured process is recorded",
       .default_value = "self",
       .words = {"self", "other"}},
      {.name = "sample",
       .type = T::kChoice,
       .help = "sample layout: RAW|TID|TIME, or perf record's IP|TID|TIME|CPU|PERIOD|RAW (the "
               "cross-check uses it)",
       .default_value = "minimal",
       .words = {"minimal", "record"}},
      ecbs_option("handlers on the probe point: `ecbs` perf events per (thread, CPU) on the tracepoint, the extra "
                  "ones writing into the same rings (a handler-count sweep for `tracebench model fit`)",
                  kMaxEcbs),
      extra_predicate_option("with ecbs > 1: the extra events record every hit too (`true`; samples then carry "
                             "`PERF_SAMPLE_IDENTIFIER` and are counted per event, each checked equal to the first), "
                             "or carry the filter `common_pid == -1`, evaluated on every hit and never true "
                             "(`false`, each checked to have no hit)"),
      {.name = "profile_hz",
       .type = T::kUint,
       .help = "profile probes: samples per second of the firing thread's CPU time, a `cpu-clock` event with "
               "`sample_period` 1e9/hz ns (`perf record -e cpu-clock -c`)",
       .default_value = "10000",
       .min = 1,
       .max = 100000},
  };
  return schema;
}

Status parse_spec_options(const AttachSpec& spec, PerfConfig* out) {
  OptionValues v;
  TB_TRY(tracebench::option_values("perf", option_schema(), spec, &v));
  PerfConfig c;
  if (v.has("event")) c.event = v.text("event");
  c.id_filter = v.on("id_filter");
  c.mmap_pages = v.number("mmap_pages");
  c.mmap_pages_given = v.given("mmap_pages");
  c.wakeup_events = v.number("wakeup_events");
  if (v.has("consumer_cpu"))
    c.consumer_cpu = v.is_number("consumer_cpu") ? static_cast<int>(v.number("consumer_cpu")) : -1;
  if (v.has("clock")) c.clock = v.text("clock");
  c.uprobe_pmu = v.text("uprobe") == "pmu";
  c.at_return = v.text("at") == "return";
  c.pid_other = v.text("pid_filter") == "other";
  c.record_layout = v.text("sample") == "record";
  c.ecbs = static_cast<unsigned>(v.number("ecbs"));
  c.extra_predicate = v.text("extra_predicate") == "true";
  c.profile_hz = v.number("profile_hz");
  c.profile_hz_given = v.given("profile_hz");
  *out = std::move(c);
  return Status::ok();
}

PerfTracer::~PerfTracer() { teardown(); }

std::string_view PerfTracer::description() const {
  return "perf_event_open on a tracepoint or uprobe, sample period 1, RAW|TID|TIME into per-CPU mmap "
         "rings drained by a pinned consumer thread (a profile probe: the firing thread's cpu-clock, sample period "
         "1e9/profile_hz ns)";
}

Availability PerfTracer::available() {
  int id = tracepoint_id("syscalls", "sys_enter_getpid");
  if (id < 0)
    return Availability::no(
        "cannot read the tracepoint id of syscalls:sys_enter_getpid from tracefs "
        "(mount -t tracefs nodev /sys/kernel/tracing; needs CONFIG_FTRACE_SYSCALLS)");
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_TRACEPOINT;
  a.config = static_cast<std::uint64_t>(id);
  a.sample_period = 1;
  a.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  a.disabled = 1;
  long fd = sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Availability::no("perf_event_open(tracepoint syscalls:sys_enter_getpid): " + std::string(strerror(err)) +
                            "; kernel.perf_event_paranoid=" + read_text("/proc/sys/kernel/perf_event_paranoid") +
                            " (run as root or with CAP_PERFMON)");
  }
  close(static_cast<int>(fd));
  return Availability::yes();
}

bool PerfTracer::supports(const ProbePoint& probe) const {
  switch (probe.kind) {
    case ProbeKind::kSyscall:
    case ProbeKind::kKmodTracepoint: return true;
    case ProbeKind::kUserFunction: return probe.address != 0;
    case ProbeKind::kUsdt: return probe.target.find(':') != std::string::npos;
    case ProbeKind::kProfile: return true;
    default: return false;
  }
}

std::map<std::string, std::string> PerfTracer::versions() const {
  return {{"perf_event_attr_size", std::to_string(sizeof(perf_event_attr))}};
}

std::size_t PerfTracer::event_fds() const {
  std::size_t n = 0;
  for (const auto& r : rings_) n += r.fds.size();
  return n;
}

Status PerfTracer::validate(const AttachSpec& spec) const {
  if (!supports(spec.probe))
    return Status::error("perf does not support probe " + spec.probe.name + " (" +
                         std::string(to_string(spec.probe.kind)) + ")");
  PerfConfig config;
  TB_TRY(parse_spec_options(spec, &config));
  if (spec.action != "default" && spec.action != "count")
    return Status::error("perf action '" + spec.action + "' unknown; actions: count");
  if (!config.event.empty() && spec.probe.kind != ProbeKind::kSyscall)
    return Status::error("perf option event= applies to syscall probes only");
  TB_TRY(common::check_at_return("perf", config.at_return, spec.probe));
  if (config.pid_other && (spec.probe.kind != ProbeKind::kUserFunction || spec.probe.address == 0 ||
                           !spec.probe.more_sites.empty() || config.ecbs > 1 || (spec.pid > 0 && spec.pid != getpid())))
    return Status::error(
        "perf: pid_filter=other needs one user function with a known address (the other process "
        "calls it), one handler, in the process that runs tracebench: user sites such as site_nop "
        "or call, not " +
        spec.probe.name);
  if (config.ecbs > 1 && !spec.probe.more_sites.empty())
    return Status::error("perf option ecbs=" + std::to_string(config.ecbs) + " applies to one site; " +
                         spec.probe.name + " has " + std::to_string(1 + spec.probe.more_sites.size()) +
                         " (an event each)");
  const bool profile = spec.probe.kind == ProbeKind::kProfile;
  if (config.profile_hz_given && !profile)
    return Status::error("perf option profile_hz applies to profile probes only");
  if (profile && config.ecbs > 1)
    return Status::error("perf: ecbs=" + std::to_string(config.ecbs) +
                         " cannot apply to a profile probe: more cpu-clock events would be more timers, not more "
                         "handlers on one");
  if (profile)
    TB_TRY(common::check_profile_rate("perf", config.profile_hz,
                                      read_text("/proc/sys/kernel/perf_event_max_sample_rate")));
  // The tracepoint option event names must exist before anything is
  // attached (the plan calls validate()); without tracefs attach says so.
  if (!config.event.empty() && tracefs_tracing_dir()) {
    const auto colon = config.event.find(':');
    if (tracepoint_id(config.event.substr(0, colon), config.event.substr(colon + 1)) < 0)
      return Status::error("perf: tracepoint " + config.event + " (option event) does not exist on this kernel (see " +
                           tracefs_tracing_dir() + "/available_events)");
  }
  return Status::ok();
}

Status PerfTracer::attach(const AttachSpec& spec) {
  std::lock_guard<std::recursive_mutex> api_lock(api_mu_);
  if (attached_) return Status::error("perf: attach() called twice; teardown() first");
  TB_TRY(validate(spec));  // probe, options, action
  PerfConfig config;
  TB_TRY(parse_spec_options(spec, &config));
  config_ = config;
  page_size_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  samples_ = lost_ = lost_records_ = foreign_ = flush_samples_ = bytes_ = wakeups_ = throttles_ = 0;
  kernel_hits_ = kernel_lost_ = closed_hits_ = closed_lost_ = {};
  for (auto& n : handler_samples_) n = 0;
  handler_fds_ = {};
  {
    std::lock_guard<std::mutex> lock(ids_mu_);
    ids_.clear();
  }
  opened_fds_ = enables_ = 0;
  other_called_ = false;
  exact_ = true;
  check_type_ = true;
  profile_ = spec.probe.kind == ProbeKind::kProfile;
  profile_tid_ = profile_ ? static_cast<pid_t>(syscall(SYS_gettid)) : 0;
  profile_period_ns_ = profile_ ? 1000000000ull / config_.profile_hz : 0;
  timer_ = common::TimerFirings(profile_period_ns_);

  std::vector<int> cpus = online_cpus();
  if (cpus.empty()) return Status::error("cannot read /sys/devices/system/cpu/online");
  if (config_.consumer_cpu == -2) {
    consumer_cpu_ = common::cpu_away_from_this_thread();
  } else {
    consumer_cpu_ = config_.consumer_cpu;
  }
  if (consumer_cpu_ >= 0) TB_TRY(common::check_consumer_cpu("perf", consumer_cpu_));

  // The consumer exists before any event is opened, so it is never inherited
  // into the traced set; it only owns the per-CPU flush events.
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return errno_status("eventfd", errno);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
    drain_requested_ = drain_completed_ = 0;
  }
  std::promise<pid_t> tid_promise;
  auto tid_future = tid_promise.get_future();
  started_ = false;
  consumer_ = std::thread([this, &tid_promise] {
    tid_promise.set_value(static_cast<pid_t>(syscall(SYS_gettid)));
    consumer_main();
  });
  consumer_tid_ = tid_future.get();

  Status st = open_events(spec);
  if (!st) {
    teardown();
    return st;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;
  }
  cv_.notify_all();
  attached_ = true;
  return Status::ok();
}

Status PerfTracer::open_events(const AttachSpec& spec) {
  const ProbePoint& p = spec.probe;
  pid_t pid = spec.pid ? spec.pid : getpid();
  std::string uprobe_file;
  std::uint64_t uprobe_offset = 0;
  TB_TRY(resolve_event(p, pid, &uprobe_file, &uprobe_offset));
  std::string filter;
  if (p.kind == ProbeKind::kSyscall && event_label_.rfind("raw_syscalls:", 0) == 0 && config_.id_filter) {
    long nr = syscall_number(p.target);
    if (nr < 0) return Status::error("no syscall number known for '" + p.target + "'; pass --option id_filter=off");
    filter = "id == " + std::to_string(nr);
    exact_ = true;
  }
  perf_event_attr a = event_attr();
  const bool user = p.kind == ProbeKind::kUserFunction || p.kind == ProbeKind::kUsdt;
  if (user && config_.uprobe_pmu) {
    uprobe_path_ = uprobe_file;
    a.config1 = reinterpret_cast<std::uint64_t>(uprobe_path_.c_str());
    a.config2 = uprobe_offset;
  }
  attr_ = a;
  filter_ = filter;
  if (config_.pid_other) {
    TB_TRY(other_.start(p.address));
    pid = other_.pid();
  }
  pid_ = pid;
  user_function_ = p.kind == ProbeKind::kUserFunction;
  if (user_function_) TB_TRY(more_sites_.create(pid, p.more_sites, a, config_.uprobe_pmu, config_.at_return));
  TB_TRY(open_rings(a));
  // Opened once here so that attach() reports what cannot be traced, then
  // closed: an open but disabled event is not an untraced workload (a
  // perf uprobe keeps its breakpoint in the code, a tracepoint its probe
  // registered), and the baseline blocks must run untraced.
  TB_TRY(open_traced());
  close_traced();
  closed_hits_ = closed_lost_ = {};
  return Status::ok();
}

// The event the probe point is: its type, config and label (type_,
// config_id_, event_label_); a user probe's file and offset in *file and
// *offset (the uprobe PMU takes them as config1/config2).
Status PerfTracer::resolve_event(const ProbePoint& p, pid_t pid, std::string* file, std::uint64_t* offset) {
  std::string& uprobe_file = *file;
  std::uint64_t& uprobe_offset = *offset;
  std::uint64_t semaphore = 0;
  const bool user = p.kind == ProbeKind::kUserFunction || p.kind == ProbeKind::kUsdt;
  if (p.kind == ProbeKind::kUsdt)
    TB_TRY(common::usdt_site(pid, p.target, &uprobe_file, &uprobe_offset, &semaphore));
  else if (p.kind == ProbeKind::kUserFunction)
    TB_TRY(address_to_file_offset(pid, p.address, &uprobe_file, &uprobe_offset));
  std::string where;  // the uprobe's place, as uprobe_events writes it
  if (user) TB_TRY(common::uprobe_location(uprobe_file, uprobe_offset, semaphore, &where));
  if (profile_) {
    // The firing thread's CPU clock, a sample every period: its samples'
    // RAW is empty (the kernel writes a 4-byte size and nothing).
    type_ = PERF_TYPE_SOFTWARE;
    config_id_ = PERF_COUNT_SW_CPU_CLOCK;
    check_type_ = false;
    event_label_ =
        "cpu-clock of thread " + std::to_string(profile_tid_) + " every " + std::to_string(profile_period_ns_) + " ns";
  } else if (user && config_.uprobe_pmu) {
    type_ = uprobe_pmu_type();
    if (!type_)
      return Status::error("no uprobe PMU (/sys/bus/event_source/devices/uprobe/type); needs CONFIG_UPROBE_EVENTS");
    config_id_ = 0;
    if (semaphore) {
      const int shift = uprobe_pmu_ref_ctr_shift();
      if (shift < 0 || (shift > 0 && semaphore >> (64 - shift)))
        return Status::error(
            "the uprobe PMU of this kernel takes no reference counter (format/ref_ctr_offset; "
            "Linux 4.20 or later): the SDT note's semaphore cannot be raised; use uprobe=tracefs");
      config_id_ = semaphore << shift;
    }
    if (config_.at_return) {
      const int bit = uprobe_pmu_retprobe_bit();
      if (bit < 0)
        return Status::error("the uprobe PMU of this kernel has no retprobe bit (format/retprobe): use uprobe=tracefs");
      config_id_ |= 1ull << bit;
    }
    check_type_ = false;  // the RAW type of a PMU uprobe is allocated on open
    event_label_ = std::string(config_.at_return ? "uretprobe-pmu:" : "uprobe-pmu:") + where;
  } else if (user) {
    // One uprobe event in tracefs (group "tracebench"), opened as a
    // tracepoint by every per-thread/per-CPU event: all of them share one
    // trace_uprobe, so a traced thread exiting does not disturb the others
    // (with the uprobe PMU each event owns a uprobe consumer, and hits of the
    // remaining threads were missed while an exiting thread's consumers went).
    TB_TRY(create_uprobe_event(p.target, where, config_.at_return, &uprobe_event_));
    int id = tracepoint_id(kUprobeGroup, uprobe_event_);
    if (id < 0) return Status::error("uprobe event " + std::string(kUprobeGroup) + ":" + uprobe_event_ + " has no id");
    type_ = PERF_TYPE_TRACEPOINT;
    config_id_ = static_cast<std::uint64_t>(id);
    event_label_ = std::string(kUprobeGroup) + ":" + uprobe_event_ + " (" + where + ")";
  } else {
    std::string system, event;
    if (p.kind == ProbeKind::kSyscall) {
      std::string ev = config_.event.empty() ? "syscalls:sys_enter_" + p.target : config_.event;
      system = ev.substr(0, ev.find(':'));
      event = ev.substr(ev.find(':') + 1);
    } else {
      auto colon = p.target.find(':');
      if (colon == std::string::npos) return Status::error("tracepoint target '" + p.target + "' is not system:event");
      system = p.target.substr(0, colon);
      event = p.target.substr(colon + 1);
    }
    int id = tracepoint_id(system, event);
    if (id < 0)
      return Status::error("tracepoint " + system + ":" + event +
                           " does not exist on this kernel "
                           "(see /sys/kernel/tracing/available_events)");
    type_ = PERF_TYPE_TRACEPOINT;
    config_id_ = static_cast<std::uint64_t>(id);
    event_label_ = system + ":" + event;
    if (system == "raw_syscalls") exact_ = false;
  }
  return Status::ok();
}

// The traced events' attributes (but a PMU uprobe's file and offset): the
// sample layout (tid_offset_, raw_size_offset_, by_id_), the wakeups, the
// clock.
perf_event_attr PerfTracer::event_attr() {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = type_;
  a.config = config_id_;
  a.sample_period = profile_ ? profile_period_ns_ : 1;
  a.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  // Sample body in sample_type order: [ip] pid tid time [cpu res] [period] raw.
  tid_offset_ = 4;
  raw_size_offset_ = 16;
  if (config_.record_layout) {
    a.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
    a.sample_id_all = 1;
    tid_offset_ = 8 + 4;
    raw_size_offset_ = 8 + 8 + 8 + 8 + 8;
  }
  // Extra handlers that record are told apart by the sample id, first in the
  // sample body.  Without them (ecbs=1, or extras that never record) the
  // layout stays the one-handler layout.
  by_id_ = config_.ecbs > 1 && config_.extra_predicate;
  if (by_id_) {
    a.sample_type |= PERF_SAMPLE_IDENTIFIER;
    tid_offset_ += 8;
    raw_size_offset_ += 8;
  }
  a.read_format = PERF_FORMAT_LOST;  // read(): {hits, lost samples}
  a.disabled = 1;
  a.inherit = 1;  // threads created after attach() get their own child events
  if (config_.wakeup_events) {
    a.wakeup_events = static_cast<std::uint32_t>(config_.wakeup_events);
  } else {
    a.watermark = 1;
    a.wakeup_watermark = static_cast<std::uint32_t>(config_.mmap_pages * page_size_ / 2);
  }
  if (!config_.clock.empty()) {
    a.use_clockid = 1;
    a.clockid = clock_id(config_.clock);
  }
  return a;
}

// Per CPU: the ring, on the consumer's flush event (a page fault of the
// consumer on this CPU, fired after the workload stopped so that a pending
// PERF_RECORD_LOST is written out).  A software event, not a syscall
// tracepoint: a BPF program that another tool attaches to a syscall
// tracepoint and that returns 0 suppresses perf delivery on that tracepoint.
Status PerfTracer::open_rings(const perf_event_attr& a) {
  for (int cpu : online_cpus()) {
    Ring ring;
    ring.cpu = cpu;
    rings_.push_back(ring);
    Ring& r = rings_.back();
    perf_event_attr f = a;
    f.type = PERF_TYPE_SOFTWARE;
    f.config = PERF_COUNT_SW_PAGE_FAULTS;
    f.config1 = f.config2 = 0;
    f.read_format = 0;
    f.inherit = 0;
    long ffd = sys_perf_event_open(&f, consumer_tid_, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (ffd < 0) return errno_status("perf_event_open(flush event, cpu " + std::to_string(cpu) + ")", errno);
    r.flush_fd = static_cast<int>(ffd);
    r.map_bytes = (1 + config_.mmap_pages) * page_size_;
    void* m = mmap(nullptr, r.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r.flush_fd, 0);
    if (m == MAP_FAILED) {
      r.base = nullptr;
      return errno_status(
          "mmap perf ring (" + std::to_string(config_.mmap_pages) + " pages; see /proc/sys/kernel/perf_event_mlock_kb)",
          errno);
    }
    r.base = m;
  }
  return Status::ok();
}

// One traced event of `tid` on the ring's CPU into the ring, as handler h;
// *gone when the thread exited meanwhile (nothing opened).
Status PerfTracer::open_traced_event(Ring& r, pid_t tid, const perf_event_attr& attr, unsigned h, bool* gone) {
  perf_event_attr a = attr;
  long fd = sys_perf_event_open(&a, tid, r.cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    if (errno == ESRCH) {
      *gone = true;
      return Status::ok();
    }
    int err = errno;
    return Status::error("perf_event_open(" + event_label_ + ", tid " + std::to_string(tid) + ", cpu " +
                         std::to_string(r.cpu) + (h ? ", handler " + std::to_string(h + 1) : "") +
                         "): " + strerror(err) + (err == EACCES || err == EPERM ? " (needs root or CAP_PERFMON)" : ""));
  }
  r.fds.push_back(static_cast<int>(fd));
  r.handler.push_back(h);
  ++handler_fds_[h];
  if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, r.flush_fd) < 0)
    return errno_status("PERF_EVENT_IOC_SET_OUTPUT", errno);
  const std::string& filter = h > 0 && !config_.extra_predicate ? std::string(kFalseFilter) : filter_;
  if (!filter.empty() && ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) < 0)
    return errno_status("PERF_EVENT_IOC_SET_FILTER '" + filter + "' on " + event_label_, errno);
  if (config_.ecbs > 1) {
    std::uint64_t id = 0;
    if (ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id) < 0) return errno_status("PERF_EVENT_IOC_ID", errno);
    std::lock_guard<std::mutex> lock(ids_mu_);
    ids_[id] = h;
  }
  return Status::ok();
}

Status PerfTracer::open_traced() {
  std::vector<pid_t> tids;
  if (profile_)
    tids.push_back(profile_tid_);  // the firing thread's clock alone
  else
    for (pid_t t : process_threads(pid_))
      if (t != consumer_tid_) tids.push_back(t);
  if (tids.empty()) return Status::error("pid " + std::to_string(pid_) + " has no threads in /proc");
  handler_fds_ = {};
  for (auto& r : rings_) {
    for (pid_t tid : tids) {
      // Handler 0, then the extra handlers of option ecbs on the same
      // tracepoint, thread and CPU, then a many-probe workload's further
      // sites (handler 0 too: a call of any site is one event), into the
      // same ring.
      bool gone = false;
      for (unsigned h = 0; h < config_.ecbs && !gone; ++h) TB_TRY(open_traced_event(r, tid, attr_, h, &gone));
      for (const perf_event_attr& site : more_sites_.attrs())
        if (!gone) TB_TRY(open_traced_event(r, tid, site, 0, &gone));
    }
    if (r.fds.empty()) return Status::error("no thread of pid " + std::to_string(pid_) + " could be traced");
  }
  opened_fds_ = event_fds();
  return Status::ok();
}

// Disables and closes the traced events, keeping their {hits, lost} counts;
// their records stay in the rings for the consumer.  Every event is disabled
// before any count is read: reading one event's count is a read(2), which
// an event of the read syscall on another ring (CPU) still enabled would
// record (two extra reads per window with two rings).
void PerfTracer::close_traced() noexcept {
  for (auto& r : rings_) {
    for (int fd : r.fds) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  }
  for (auto& r : rings_) {
    for (std::size_t i = 0; i < r.fds.size(); ++i) {
      std::uint64_t v[2] = {0, 0};
      if (read(r.fds[i], v, sizeof v) == static_cast<ssize_t>(sizeof v)) {
        closed_hits_[r.handler[i]] += v[0];
        closed_lost_[r.handler[i]] += v[1];
        if (profile_) timer_.clock_read(v[0]);  // a cpu-clock event counts ns of the thread's CPU time
      }
      close(r.fds[i]);
    }
    r.fds.clear();
    r.handler.clear();
  }
  if (profile_) timer_.disabled();
}

Status PerfTracer::enable() {
  std::lock_guard<std::recursive_mutex> api_lock(api_mu_);
  if (!attached_) return Status::error("perf: enable() before attach()");
  bool closed = true;
  for (auto& r : rings_) closed = closed && r.fds.empty();
  if (closed) {
    ++enables_;
    if (profile_) timer_.enabled();
    Status st = open_traced();
    if (!st) {
      close_traced();
      return st;
    }
  }
  for (auto& r : rings_)
    for (int fd : r.fds)
      if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) return errno_status("PERF_EVENT_IOC_ENABLE", errno);
  if (config_.pid_other && !other_called_) {
    other_called_ = true;
    if (Status s = other_.call(kOtherCalls); !s) return Status::error("perf: " + s.message());
  }
  return Status::ok();
}

Status PerfTracer::disable() {
  std::lock_guard<std::recursive_mutex> api_lock(api_mu_);
  if (!attached_) return Status::error("perf: disable() before attach()");
  close_traced();
  return Status::ok();
}

void PerfTracer::read_ring(Ring& r) {
  if (!r.base) return;
  auto* meta = static_cast<perf_event_mmap_page*>(r.base);
  char* data = static_cast<char*>(r.base) + page_size_;
  const std::uint64_t size = config_.mmap_pages * page_size_;
  std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  std::uint64_t tail = meta->data_tail;
  // Option ecbs: samples go to their handler by event id.
  std::unique_lock<std::mutex> ids_lock(ids_mu_, std::defer_lock);
  if (config_.ecbs > 1 && head != tail) ids_lock.lock();
  auto handler_of = [this](std::uint64_t id) -> int {
    auto it = ids_.find(id);
    return it == ids_.end() ? -1 : static_cast<int>(it->second);
  };
  if (head != tail) bytes_.fetch_add(head - tail, std::memory_order_relaxed);
  while (tail < head) {
    std::uint64_t off = tail % size;
    auto* h = reinterpret_cast<perf_event_header*>(data + off);
    std::size_t len = h->size;
    if (len < sizeof(perf_event_header)) break;  // corrupt; stop rather than spin
    const char* rec = data + off;
    if (off + len > size) {  // wraps around the end of the ring
      scratch_.resize(len);
      std::size_t first = static_cast<std::size_t>(size - off);
      memcpy(scratch_.data(), data + off, first);
      memcpy(scratch_.data() + first, data, len - first);
      rec = scratch_.data();
    }
    auto* hdr = reinterpret_cast<const perf_event_header*>(rec);
    if (hdr->type == PERF_RECORD_SAMPLE) {
      // u32 pid, tid; u64 time; u32 raw size; raw data (common_type first),
      // with ip, cpu and period in between under sample=record.
      std::uint32_t tid = 0, raw_size = 0;
      const char* body = rec + sizeof(perf_event_header);
      memcpy(&tid, body + tid_offset_, 4);
      memcpy(&raw_size, body + raw_size_offset_, 4);
      std::uint16_t common_type = 0;
      if (raw_size >= 2) memcpy(&common_type, body + raw_size_offset_ + 4, 2);
      int h = 0;
      if (by_id_) {
        std::uint64_t id = 0;
        memcpy(&id, body, 8);
        h = handler_of(id);
      }
      if (static_cast<pid_t>(tid) == consumer_tid_) {
        flush_samples_.fetch_add(1, std::memory_order_relaxed);
      } else if ((check_type_ && common_type != config_id_ && !more_sites_.has_type(common_type)) || h < 0) {
        foreign_.fetch_add(1, std::memory_order_relaxed);
      } else if (h == 0) {
        samples_.fetch_add(1, std::memory_order_relaxed);
      } else {
        handler_samples_[h].fetch_add(1, std::memory_order_relaxed);
      }
    } else if (hdr->type == PERF_RECORD_THROTTLE) {
      throttles_.fetch_add(1, std::memory_order_relaxed);
    } else if (hdr->type == PERF_RECORD_LOST) {
      std::uint64_t n = 0;
      memcpy(&n, rec + sizeof(perf_event_header) + 8, 8);
      lost_.fetch_add(n, std::memory_order_relaxed);
      lost_records_.fetch_add(1, std::memory_order_relaxed);
    }
    tail += len;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

// Runs on the consumer thread after the workload is disabled: visit each CPU,
// fire the flush event there once so the kernel writes any pending LOST
// record into that ring, then come back to the consumer CPU.
void PerfTracer::flush_rings() {
  for (auto& r : rings_) {
    if (r.flush_fd < 0) continue;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(r.cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) continue;
    read_ring(r);  // make room first
    // A fresh anonymous page: its first write is exactly one page fault.
    void* page = mmap(nullptr, page_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) continue;
    if (ioctl(r.flush_fd, PERF_EVENT_IOC_ENABLE, 0) == 0) {
      *static_cast<volatile char*>(page) = 1;
      ioctl(r.flush_fd, PERF_EVENT_IOC_DISABLE, 0);
    }
    munmap(page, page_size_);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (consumer_cpu_ >= 0) {
    CPU_SET(consumer_cpu_, &set);
  } else {
    for (int c : online_cpus()) CPU_SET(c, &set);
  }
  sched_setaffinity(0, sizeof set, &set);
}

void PerfTracer::consumer_main() {
  if (consumer_cpu_ >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(consumer_cpu_, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return started_ || stop_; });
    if (stop_) return;
  }
  std::vector<pollfd> pfds;
  for (auto& r : rings_) pfds.push_back({r.flush_fd, POLLIN, 0});
  pfds.push_back({wake_fd_, POLLIN, 0});
  for (;;) {
    int n = poll(pfds.data(), pfds.size(), 200);
    if (n > 0) wakeups_.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t eventfd_value;
    if (pfds.back().revents & POLLIN) (void)!read(wake_fd_, &eventfd_value, sizeof eventfd_value);
    std::uint64_t want;
    bool stop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      want = drain_requested_;
      stop = stop_;
    }
    for (auto& r : rings_) read_ring(r);
    if (want != drain_completed_) {
      flush_rings();
      for (auto& r : rings_) read_ring(r);
      {
        std::lock_guard<std::mutex> lock(mu_);
        drain_completed_ = want;
      }
      cv_.notify_all();
    }
    if (stop) return;
  }
}

// A sample is at most 128 bytes: header, TID, time (24), the raw size word
// and a tracepoint or uprobe entry of up to 64 bytes (72), and with
// sample=record IP, CPU and period (24), with ecbs the identifier (8).  The
// extra handlers of ecbs write into the same rings.  A profile probe's
// samples are the timer's, not the block's events: no limit.
std::uint64_t PerfTracer::block_event_capacity() const {
  std::lock_guard<std::recursive_mutex> lock(api_mu_);
  if (config_.mmap_pages_given || profile_) return 0;
  const std::uint64_t handlers = config_.extra_predicate ? config_.ecbs : 1;
  return config_.mmap_pages * static_cast<std::uint64_t>(page_size_) / 2 / 128 / handlers;
}

Status PerfTracer::drain() {
  std::lock_guard<std::recursive_mutex> api_lock(api_mu_);
  if (!attached_) return Status::error("perf: drain() before attach()");
  std::unique_lock<std::mutex> lock(mu_);
  std::uint64_t want = ++drain_requested_;
  std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);
  if (!cv_.wait_for(lock, std::chrono::seconds(20), [&] { return drain_completed_ >= want; }))
    return Status::error("perf consumer did not finish draining within 20 s");
  lock.unlock();
  auto hits = closed_hits_, lost = closed_lost_;
  for (auto& r : rings_) {
    for (std::size_t i = 0; i < r.fds.size(); ++i) {
      std::uint64_t v[2] = {0, 0};
      if (read(r.fds[i], v, sizeof v) == static_cast<ssize_t>(sizeof v)) {
        hits[r.handler[i]] += v[0];
        lost[r.handler[i]] += v[1];
      }
    }
  }
  kernel_hits_ = hits;
  kernel_lost_ = lost;
  return Status::ok();
}

EventCounts PerfTracer::counts() {
  std::lock_guard<std::recursive_mutex> api_lock(api_mu_);
  EventCounts c;
  c.recorded = samples_.load();
  // With extra handlers the rings' lost records count every handler's
  // losses; the first handler's are the kernel's count of its events.
  c.lost = config_.ecbs > 1 ? kernel_lost_[0] : lost_.load();
  c.exact = exact_;
  c.consumer_wakeups = static_cast<std::int64_t>(wakeups_.load());
  if (config_.pid_other) return other_process_counts(c);
  if (profile_) {
    c.timer_fired = timer_.fired();
    c.timer_windows = timer_.windows();
  }
  // Option ecbs: every extra handler saw what the first saw (samples in the
  // rings + the kernel's lost count of its events), or with a false
  // predicate was never hit (the kernel's count of its events).  Where other activity reaches the event (inexact),
  // the events are enabled one after the other, so only the false ones can
  // be held to a number.
  const std::uint64_t first = c.recorded + c.lost;
  for (unsigned h = 1; h < config_.ecbs; ++h) {
    const std::uint64_t seen = handler_samples_[h].load() + kernel_lost_[h];
    const std::uint64_t want = config_.extra_predicate ? first : 0;
    std::uint64_t bad = 0;
    if ((config_.extra_predicate ? exact_ : true) && seen != want) bad += seen > want ? seen - want : want - seen;
    if (!config_.extra_predicate) bad += kernel_hits_[h];
    if (!bad) continue;
    if (c.tracer_errors == 0)
      c.tracer_error_detail = "handler " + std::to_string(h + 1) + " of " + std::to_string(config_.ecbs) +
                              " (extra_predicate=" + (config_.extra_predicate ? "true" : "false") + ") sampled " +
                              std::to_string(handler_samples_[h].load()) + " + lost " +
                              std::to_string(kernel_lost_[h]) + " with " + std::to_string(kernel_hits_[h]) +
                              " kernel hits, expected " + std::to_string(want) +
                              (config_.extra_predicate ? " as handler 1" : "");
    c.tracer_errors += bad;
  }
  return c;
}

// pid_filter=other: the events were the other process's alone, so none of
// this process's hits may be recorded, and all of the other's calls at the
// first enable() must have been (the proof the probe was live).
EventCounts PerfTracer::other_process_counts(EventCounts c) const {
  const std::uint64_t other = c.recorded + c.lost;
  c.probe_disabled = true;
  c.recorded = other > kOtherCalls ? other - kOtherCalls : 0;
  c.lost = 0;
  c.disabled_detail = "the probe is for process " + std::to_string(other_.pid()) +
                      " (its threads' events alone), which made " + std::to_string(other_called_ ? kOtherCalls : 0) +
                      " calls at the first enable: " + std::to_string(other) + " recorded";
  if (!other_called_ || other < kOtherCalls || lost_.load()) {
    c.tracer_errors = 1;
    c.tracer_error_detail = "the probe was not live for the other process: " + std::to_string(samples_.load()) +
                            " of its " + std::to_string(other_called_ ? kOtherCalls : 0) + " calls recorded, " +
                            std::to_string(lost_.load()) + " lost";
  }
  return c;
}

std::vector<ConsumerTask> PerfTracer::consumer_tasks() const {
  std::lock_guard<std::recursive_mutex> api_lock(api_mu_);
  if (consumer_tid_ == 0) return {};
  return {{"ring buffer reader", static_cast<int>(getpid()), static_cast<int>(consumer_tid_)}};
}

nlohmann::json PerfTracer::details() const {
  std::lock_guard<std::recursive_mutex> api_lock(api_mu_);
  nlohmann::json j = nlohmann::json::object();
  if (event_label_.empty()) return j;  // not attached
  j["event"] = event_label_;
  if (user_function_) j["sites"] = 1 + more_sites_.size();
  if (config_.pid_other) {
    j["pid_filter"] = "other";
    j["other_pid"] = other_.pid();
    j["other_calls"] = other_called_ ? kOtherCalls : 0;
  }
  j["rings"] = rings_.size();
  j["event_fds"] = opened_fds_;  // per enable(): threads x CPUs
  j["enables"] = enables_;
  j["mmap_pages"] = config_.mmap_pages;
  j["sample"] = std::string(by_id_ ? "IDENTIFIER|" : "") +
                (config_.record_layout ? "IP|TID|TIME|CPU|PERIOD|RAW (record)" : "RAW|TID|TIME (minimal)");
  j["consumer_cpu"] = consumer_cpu_;
  j["lost_records"] = lost_records_.load();
  j["foreign_samples"] = foreign_.load();
  j["flush_samples"] = flush_samples_.load();
  j["bytes_consumed"] = bytes_.load();
  j["consumer_wakeups"] = wakeups_.load();
  j["throttle_records"] = throttles_.load();
  if (profile_) {
    j["profile_period_ns"] = profile_period_ns_;
    j["timer_fired"] = timer_.fired();
    j["kernel_clock_ns"] = kernel_hits_[0];  // a cpu-clock event's count is its thread's CPU time
  } else {
    j["kernel_hits"] = kernel_hits_[0];  // the first handler's
  }
  j["kernel_lost_samples"] = kernel_lost_[0];
  put_handler_count(&j, config_.ecbs, config_.extra_predicate);
  if (config_.ecbs > 1) {
    // Per handler, the first then the extras: events per enable(), samples
    // and lost samples in the rings (by id), the kernel's hit counts.
    nlohmann::json fds = nlohmann::json::array(), samples = nlohmann::json::array(), lost = nlohmann::json::array(),
                   hits = nlohmann::json::array();
    for (unsigned h = 0; h < config_.ecbs; ++h) {
      fds.push_back(handler_fds_[h]);
      samples.push_back(h ? handler_samples_[h].load() : samples_.load());
      lost.push_back(kernel_lost_[h]);
      hits.push_back(kernel_hits_[h]);
    }
    j["handler_event_fds"] = fds;
    j["handler_samples"] = samples;
    j["handler_lost"] = lost;               // the kernel's lost samples of each handler's events
    j["ring_lost_samples"] = lost_.load();  // every handler's, from PERF_RECORD_LOST
    j["handler_kernel_hits"] = hits;
    if (!config_.extra_predicate) j["extra_filter"] = kFalseFilter;
  }
  return j;
}

void PerfTracer::stop_consumer() noexcept {
  if (consumer_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (wake_fd_ >= 0) {
      std::uint64_t one = 1;
      (void)!write(wake_fd_, &one, sizeof one);
    }
    consumer_.join();
  }
}

void PerfTracer::teardown() noexcept {
  std::lock_guard<std::recursive_mutex> api_lock(api_mu_);
  stop_consumer();
  for (auto& r : rings_) {
    for (int fd : r.fds) { ioctl(fd, PERF_EVENT_IOC_DISABLE, 0); }
    if (r.base) munmap(r.base, r.map_bytes);
    for (int fd : r.fds) close(fd);
    r.fds.clear();
    r.handler.clear();
    if (r.flush_fd >= 0) close(r.flush_fd);
  }
  rings_.clear();
  uprobe_path_.clear();  // only after every event fd is closed
  remove_uprobe_event(uprobe_event_);
  uprobe_event_.clear();
  more_sites_.clear();
  user_function_ = false;
  other_.stop();
  other_called_ = false;
  if (wake_fd_ >= 0) close(wake_fd_);
  wake_fd_ = -1;
  attached_ = false;
  consumer_tid_ = 0;
}

}  // namespace tracebench::perf

TRACEBENCH_REGISTER_TRACER(perf, [] { return std::make_unique<tracebench::perf::PerfTracer>(); });
