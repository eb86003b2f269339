// The eBPF adapter: one class over libbpf skeletons.  Longer than the
// suite's ~600-line guide (README, Contributing), on purpose: target resolution per attach type,
// links, the kernel run statistics and the counts judged against the
// workload share the loaded object's state and are read together.  The
// options are in options.cc, the BPF objects in bpf_objects.cc, the ring
// consumer in consumer.cc.
#include "ebpf_tracer.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "bpf/tb_shared.h"
#include "libbpf_log.h"
#include "self_probe.h"
#include "tracebench/handler_count.h"
#include "tracebench/verification.h"
#include "tracers/common/proc.h"

#ifndef TB_BPFTOOL_VERSION
#define TB_BPFTOOL_VERSION "unknown"
#endif
#ifndef TB_BPF_CLANG_VERSION
#define TB_BPF_CLANG_VERSION "unknown"
#endif

namespace tracebench::ebpf {
namespace {

namespace fs = std::filesystem;

std::string errstr(int err) { return std::strerror(err < 0 ? -err : err); }

std::string with_libbpf(std::string msg) {
  std::string lib = libbpf_messages();
  if (!lib.empty()) msg += " [" + lib + "]";
  return msg;
}

// Syscalls a workload may name; raw_tp/tp_btf filter on the number.
long syscall_number(const std::string& name) {
  static const std::map<std::string, long> table = {
      {"getpid", SYS_getpid},
      {"getppid", SYS_getppid},
      {"gettid", SYS_gettid},
      {"getuid", SYS_getuid},
      {"read", SYS_read},
      {"write", SYS_write},
      {"pread64", SYS_pread64},
      {"pwrite64", SYS_pwrite64},
      {"close", SYS_close},
      {"openat", SYS_openat},
      {"futex", SYS_futex},
      {"nanosleep", SYS_nanosleep},
      {"sched_yield", SYS_sched_yield},
      {"clock_gettime", SYS_clock_gettime},
      {"ioctl", SYS_ioctl},
      {"lseek", SYS_lseek},
      {"fstat", SYS_fstat},
  };
  auto it = table.find(name);
  return it == table.end() ? -1 : it->second;
}

#if defined(__x86_64__)
constexpr const char* kSyscallPrefix = "__x64_sys_";
#elif defined(__aarch64__)
constexpr const char* kSyscallPrefix = "__arm64_sys_";
#else
constexpr const char* kSyscallPrefix = "sys_";
#endif

bool valid_ident(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

const char* tracefs_dir() {
  static const char* dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
  for (const char* d : dirs) {
    std::error_code ec;
    if (fs::exists(std::string(d) + "/events", ec)) return d;
  }
  return nullptr;
}

std::atomic<bool> g_mounted_tracefs{false};

}  // namespace

// IRQ work interrupts of all CPUs (/proc/interrupts "IWI"): how ring/perf
// buffer wakeups show up (each is an irq_work, a self-IPI).  -1 if unknown.
std::int64_t irq_work_interrupts() {
  FILE* f = std::fopen("/proc/interrupts", "re");
  if (!f) return -1;
  char line[4096];
  std::int64_t total = -1;
  while (std::fgets(line, sizeof line, f)) {
    char* p = line;
    while (*p == ' ') p++;
    if (std::strncmp(p, "IWI:", 4) != 0) continue;
    p += 4;
    total = 0;
    const long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    for (long c = 0; c < ncpu; c++) {
      char* end = nullptr;
      long long v = std::strtoll(p, &end, 10);
      if (end == p) break;
      total += v;
      p = end;
    }
    break;
  }
  std::fclose(f);
  return total;
}

Status ensure_tracefs(bool* mounted_by_us) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (mounted_by_us) *mounted_by_us = g_mounted_tracefs.load();
  if (tracefs_dir()) return Status::ok();
  if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0) {
    const int err = errno;
    return Status::error("tracefs is not mounted and mounting it at /sys/kernel/tracing failed (" + errstr(err) +
                         "); mount it with `mount -t tracefs nodev /sys/kernel/tracing` (needs root)");
  }
  g_mounted_tracefs = true;
  if (mounted_by_us) *mounted_by_us = true;
  return Status::ok();
}

bool EbpfTracer::supports(const ProbePoint& probe) const {
  switch (probe.kind) {
    case ProbeKind::kSyscall:
    case ProbeKind::kUserFunction:
    case ProbeKind::kUsdt:
    case ProbeKind::kKernelFunction:
    case ProbeKind::kKmodTracepoint:
    case ProbeKind::kProfile: return true;
    default: return false;
  }
}

std::map<std::string, std::string> EbpfTracer::versions() const {
  std::map<std::string, std::string> v;
  v["libbpf"] = libbpf_version_string();
  v["bpftool (build)"] = TB_BPFTOOL_VERSION;
  v["clang -target bpf (build)"] = TB_BPF_CLANG_VERSION;
  struct utsname u;
  if (uname(&u) == 0) v["kernel"] = u.release;
  return v;
}

Status EbpfTracer::validate(const AttachSpec& spec) const {
  // parse_options() fills the adapter's configuration; a scratch adapter
  // (nothing loaded, nothing attached) takes it here.
  EbpfTracer scratch;
  return scratch.parse_options(spec);
}

Availability EbpfTracer::available_for(const AttachSpec& spec) const {
  EbpfTracer scratch;
  if (!scratch.parse_options(spec)) return Availability::yes();  // validate() refuses it, saying why
  const std::string type = to_string(scratch.cfg_.attach);
  const auto& types = attach_type_availability();
  const auto it = types.find(type);
  if (it == types.end() || it->second.ok) return Availability::yes();
  return Availability::no("attach=" + type + " does not work on this kernel: " + it->second.reason);
}

// uprobe_multi takes a file and offsets in it: those of the sites' addresses
// in this process's mapping of its binary.
Status EbpfTracer::resolve_multi_offsets() {
  const ProbePoint& p = spec_.probe;
  multi_path_.clear();
  multi_offsets_.clear();
  std::vector<std::uintptr_t> addresses{p.address};
  for (const auto& site : p.more_sites) addresses.push_back(site.address);
  for (std::uintptr_t a : addresses) {
    std::string file;
    std::uint64_t offset = 0;
    if (a == 0) return Status::error("ebpf: attach=uprobe_multi needs the address of every site of " + p.name);
    TB_TRY(common::address_to_file_offset(getpid(), a, &file, &offset));
    if (!multi_path_.empty() && file != multi_path_)
      return Status::error("ebpf: the sites of " + p.name + " are in two files (" + multi_path_ + ", " + file +
                           "); an uprobe_multi link has one");
    multi_path_ = file;
    multi_offsets_.push_back(offset);
  }
  return Status::ok();
}

// One switch over the probe kinds (~100 lines), each a few lines from the
// probe point to the program's target (a tracepoint, a function, a file and
// offset): what each kind attaches to reads in one place.
Status EbpfTracer::resolve_target() {
  const ProbePoint& p = spec_.probe;
  pid_ = spec_.pid > 0 ? spec_.pid : static_cast<int>(getpid());
  cfg_.tgid = static_cast<std::uint32_t>(pid_);
  if (pid_filter_ != PidFilter::kSelf) {
    // The program counts the other process's hits; the link is that
    // process's (the kernel filters) or every process's (-1: the program
    // filters).  The binary is this one's: the other is a fork of it.
    TB_TRY(other_.start(p.address));
    cfg_.tgid = static_cast<std::uint32_t>(other_.pid());
  }
  const AttachType t = cfg_.attach;
  switch (p.kind) {
    case ProbeKind::kSyscall: {
      if (!valid_ident(p.target)) return Status::error("ebpf: probe '" + p.name + "' has no valid syscall name");
      cfg_.sys_nr = syscall_number(p.target);
      if (t == AttachType::kTracepoint) {
        bool mounted = false;
        TB_TRY(ensure_tracefs(&mounted));
        std::string ev = std::string(tracefs_dir()) + "/events/syscalls/sys_enter_" + p.target;
        std::error_code ec;
        if (!fs::exists(ev, ec))
          return Status::error("ebpf: no tracepoint syscalls:sys_enter_" + p.target + " (" + ev +
                               " missing; needs CONFIG_FTRACE_SYSCALLS)");
        target_desc_ = "syscalls:sys_enter_" + p.target;
        tp_category_ = "syscalls";
        tp_name_ = "sys_enter_" + p.target;
      } else if (t == AttachType::kRawTp || t == AttachType::kTpBtf) {
        if (cfg_.sys_nr < 0)
          return Status::error("ebpf: syscall '" + p.target +
                               "' is not in the adapter's syscall table, so raw_tp/tp_btf cannot "
                               "filter it; use attach=tracepoint");
        target_desc_ = "raw_syscalls:sys_enter (id == " + std::to_string(cfg_.sys_nr) + ")";
      } else if (t == AttachType::kKprobe) {
        kernel_func_ = kSyscallPrefix + p.target;
        target_desc_ = kernel_func_;
      } else {  // fentry/fexit: the first syscall entry function that has BTF
        clear_libbpf_messages();
        btf* vmlinux = btf__load_vmlinux_btf();
        if (!vmlinux)
          return Status::error(with_libbpf("ebpf: loading the kernel's BTF failed: " + errstr(errno) +
                                           " (needs CONFIG_DEBUG_INFO_BTF)"));
        std::string tried;
        for (std::string cand : {kSyscallPrefix + p.target, "__do_sys_" + p.target, "ksys_" + p.target}) {
          if (btf__find_by_name_kind(vmlinux, cand.c_str(), BTF_KIND_FUNC) >= 0) {
            kernel_func_ = cand;
            break;
          }
          tried += (tried.empty() ? "" : ", ") + cand;
        }
        btf__free(vmlinux);
        if (kernel_func_.empty()) return Status::error("ebpf: none of " + tried + " is a function in the kernel's BTF");
        target_desc_ = kernel_func_;
      }
      break;
    }
    case ProbeKind::kKernelFunction:
      if (!valid_ident(p.target))
        return Status::error("ebpf: probe '" + p.name + "' has no valid kernel function name");
      kernel_func_ = p.target;
      target_desc_ = kernel_func_;
      break;
    case ProbeKind::kKmodTracepoint: {  // "system:event" of a module's TRACE_EVENT
      const auto colon = p.target.find(':');
      if (colon == std::string::npos || !valid_ident(p.target.substr(0, colon)) ||
          !valid_ident(p.target.substr(colon + 1)))
        return Status::error("ebpf: tracepoint target must be system:event, not '" + p.target + "'");
      bool mounted = false;
      TB_TRY(ensure_tracefs(&mounted));
      tp_category_ = p.target.substr(0, colon);
      tp_name_ = p.target.substr(colon + 1);
      std::error_code ec;
      if (!fs::exists(std::string(tracefs_dir()) + "/events/" + tp_category_ + "/" + tp_name_, ec))
        return Status::error("ebpf: no tracepoint " + p.target + " in tracefs (is the module loaded?)");
      target_desc_ = p.target;
      break;
    }
    case ProbeKind::kProfile:
      // The thread that attaches is the one that fires (the harness's
      // measured thread); its CPU clock drives the samples.
      profile_tid_ = static_cast<int>(syscall(SYS_gettid));
      target_desc_ = fmt::format("cpu-clock of thread {} every {} ns", profile_tid_, profile_period_ns_);
      break;
    case ProbeKind::kUserFunction:
    case ProbeKind::kUsdt: {
      if (Status s = common::executable_of(pid_, &binary_); !s) return Status::error("ebpf: " + s.message());
      if (pid_filter_ != PidFilter::kSelf) pid_ = pid_filter_ == PidFilter::kOtherKernel ? other_.pid() : -1;
      if (p.kind == ProbeKind::kUserFunction) {
        if (p.target.empty()) return Status::error("ebpf: probe '" + p.name + "' has no symbol");
        target_desc_ = binary_ + ":" + p.target;
        if (!p.more_sites.empty()) target_desc_ += fmt::format(" and {} more function(s)", p.more_sites.size());
        if (t == AttachType::kUprobeMulti) TB_TRY(resolve_multi_offsets());
      } else {
        auto colon = p.target.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == p.target.size())
          return Status::error("ebpf: USDT target must be provider:name, not '" + p.target + "'");
        usdt_provider_ = p.target.substr(0, colon);
        usdt_name_ = p.target.substr(colon + 1);
        target_desc_ = binary_ + ":" + p.target;
      }
      break;
    }
    default: return Status::error("ebpf: unsupported probe kind");
  }
  cfg_.btf_target = kernel_func_;
  return Status::ok();
}

Status EbpfTracer::attach(const AttachSpec& spec) {
  teardown();
  spec_ = spec;
  cfg_ = LoadConfig{};
  consumer_cfg_ = ConsumerConfig{};
  usdt_provider_.clear();
  usdt_name_.clear();
  kernel_func_.clear();
  tp_category_.clear();
  tp_name_.clear();
  binary_.clear();
  target_desc_.clear();
  enables_ = 0;
  other_checked_ = false;
  other_counted_ = 0;
  profile_tid_ = 0;
  attach_seconds_ = 0;
  detach_seconds_ = 0;
  disables_ = 0;
  irq_work_while_enabled_ = 0;
  prog_ids_.clear();
  link_ids_.clear();
  stats_error_.clear();
  install_libbpf_log();

  Status st = parse_options(spec);
  if (st) st = resolve_target();
  timer_ = common::TimerFirings(cfg_.attach == AttachType::kPerfEvent ? profile_period_ns_ : 0);
  if (st && stats_) {
    // Scoped: the kernel keeps run stats while this fd is open (teardown).
    stats_fd_ = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (stats_fd_ < 0) {
      const int err = errno;
      stats_fd_ = -1;
      stats_error_ = "bpf_enable_stats(BPF_STATS_RUN_TIME): " + errstr(err);
      if (cfg_.action == "empty")
        st = Status::error("ebpf: action 'empty' needs kernel run stats, but " + stats_error_);
    }
  }
  if (st) st = load_program(cfg_, &obj_);
  for (int i = 1; st && i < ecbs_; ++i) {
    LoadConfig extra = cfg_;
    if (extra_false_) extra.tgid = 0xffffffffu;  // no task has it: the filter is compared and fails
    Extra e;
    st = load_program(extra, &e.obj);
    if (st) extras_.push_back(std::move(e));
  }
  if (st) {
    auto record_id = [this](const LoadedObject& o) {
      bpf_prog_info info{};
      __u32 len = sizeof info;
      if (bpf_obj_get_info_by_fd(bpf_program__fd(o.prog), &info, &len) == 0) prog_ids_.push_back(info.id);
    };
    record_id(*obj_);
    for (const Extra& e : extras_) record_id(*e.obj);
  }
  if (st && (cfg_.action == "ringbuf" || cfg_.action == "perfbuf")) {
    consumer_cfg_.kind = cfg_.action == "ringbuf" ? BufferKind::kRingbuf : BufferKind::kPerfbuf;
    consumer_cfg_.map_fd = bpf_map__fd(cfg_.action == "ringbuf" ? obj_->rb : obj_->pb);
    consumer_cfg_.record_bytes = cfg_.record_bytes;
    consumer_cfg_.workload_payload = copy_payload_;
    consumer_cfg_.payload_bytes = spec.payload_bytes;
    consumer_ = std::make_unique<Consumer>();
    st = consumer_->start(consumer_cfg_);
  }
  if (!st) {
    teardown();
    return st;
  }
  attached_ = true;
  return Status::ok();
}

Status EbpfTracer::attach_link(bpf_program* prog, const std::string& name, bpf_link** out) {
  clear_libbpf_messages();
  bpf_link* link = nullptr;
  const std::string what = std::string(to_string(cfg_.attach)) + " " + name + " to " + target_desc_;
  switch (cfg_.attach) {
    case AttachType::kTracepoint:
      link = bpf_program__attach_tracepoint(prog, tp_category_.c_str(), tp_name_.c_str());
      break;
    case AttachType::kRawTp: link = bpf_program__attach_raw_tracepoint(prog, "sys_enter"); break;
    case AttachType::kTpBtf:
    case AttachType::kFentry:
    case AttachType::kFexit: link = bpf_program__attach_trace(prog); break;
    case AttachType::kKprobe: link = bpf_program__attach_kprobe(prog, false, kernel_func_.c_str()); break;
    case AttachType::kUprobeMulti: return Status::error("ebpf: an uprobe_multi link is made by attach_sites()");
    case AttachType::kUprobe:
    case AttachType::kUretprobe: {
      LIBBPF_OPTS(bpf_uprobe_opts, opts);
      opts.func_name = spec_.probe.target.c_str();
      opts.retprobe = cfg_.attach == AttachType::kUretprobe;
      link = bpf_program__attach_uprobe_opts(prog, pid_, binary_.c_str(), 0, &opts);
      break;
    }
    case AttachType::kUsdt:
      link = bpf_program__attach_usdt(prog, pid_, binary_.c_str(), usdt_provider_.c_str(), usdt_name_.c_str(), nullptr);
      break;
    case AttachType::kPerfEvent: {
      // A software cpu-clock event sampling the firing thread with a fixed
      // period; libbpf enables it and, once linked, owns and closes it.
      perf_event_attr attr{};
      attr.size = sizeof attr;
      attr.type = PERF_TYPE_SOFTWARE;
      attr.config = PERF_COUNT_SW_CPU_CLOCK;
      attr.sample_period = profile_period_ns_;
      attr.disabled = 1;
      const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, profile_tid_, -1, -1, PERF_FLAG_FD_CLOEXEC));
      if (fd < 0) {
        const int err = errno;
        return Status::error("ebpf: perf_event_open(cpu-clock, period " + std::to_string(profile_period_ns_) +
                             " ns, thread " + std::to_string(profile_tid_) + "): " + errstr(err));
      }
      link = bpf_program__attach_perf_event(prog, fd);
      if (link)
        profile_fd_ = fd;
      else {
        const int err = errno;
        close(fd);
        errno = err;
      }
      break;
    }
  }
  if (!link) {
    const int err = errno;
    return Status::error(with_libbpf("ebpf: attaching " + what + ": " + errstr(err)));
  }
  *out = link;
  if (std::uint32_t id = link_id(bpf_link__fd(link))) link_ids_.push_back(id);
  return Status::ok();
}

Status EbpfTracer::attach_sites() {
  const ProbePoint& p = spec_.probe;
  if (cfg_.attach == AttachType::kUprobeMulti) {
    TB_TRY(sites_.attach_multi(obj_->prog, pid_, multi_path_, multi_offsets_));
  } else if (!p.more_sites.empty()) {
    std::vector<std::string> symbols;
    for (const auto& site : p.more_sites) symbols.push_back(site.symbol);
    TB_TRY(sites_.attach_each(obj_->prog, pid_, binary_, symbols, cfg_.attach == AttachType::kUretprobe));
  }
  for (std::uint32_t id : sites_.link_ids()) link_ids_.push_back(id);
  return Status::ok();
}

Status EbpfTracer::enable() {
  // The link is made and destroyed under the teardown lock: the signal
  // watcher's teardown destroyed a link disable() was destroying too.
  std::lock_guard<std::mutex> lock(teardown_mu_);
  if (!attached_) return Status::error("ebpf: enable() before a successful attach()");
  if (link_ || sites_.attached()) return Status::ok();
  if (consumer_) consumer_->resume();
  irq_work_at_enable_ = irq_work_interrupts();
  if (cfg_.attach == AttachType::kPerfEvent) timer_.enabled();
  auto t0 = std::chrono::steady_clock::now();
  Status st =
      cfg_.attach == AttachType::kUprobeMulti ? Status::ok() : attach_link(obj_->prog, obj_->program_name, &link_);
  if (st) st = attach_sites();
  for (std::size_t i = 0; st && i < extras_.size(); ++i)
    st = attach_link(extras_[i].obj->prog, extras_[i].obj->program_name + " #" + std::to_string(i + 2),
                     &extras_[i].link);
  if (!st) {
    destroy_links();  // all or none
    return st;
  }
  attach_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  enables_++;
  if (pid_filter_ != PidFilter::kSelf && !other_checked_) return check_other_process();
  return Status::ok();
}

// At the first enable(), the other process's calls: what the program counts
// of them is the proof the probe is live for it (counts() compares it with
// the calls made; this process's hits add nothing).
Status EbpfTracer::check_other_process() {
  other_checked_ = true;
  if (Status s = other_.call(kOtherCalls); !s) return Status::error("ebpf: " + s.message());
  other_counted_ = sum_percpu(obj_->count, 0);
  return Status::ok();
}

void EbpfTracer::destroy_links() {
  sites_.destroy();
  for (Extra& e : extras_) {
    if (e.link) bpf_link__destroy(e.link);
    e.link = nullptr;
  }
  if (link_) bpf_link__destroy(link_);
  link_ = nullptr;
  profile_fd_ = -1;  // closed with its link
}

Status EbpfTracer::disable() {
  std::lock_guard<std::mutex> lock(teardown_mu_);
  const auto t0 = std::chrono::steady_clock::now();
  const bool any = link_ || sites_.attached();
  Status st = detach();
  if (any) {
    detach_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    disables_++;
  }
  return st;
}

Status EbpfTracer::detach() {
  int extra_err = 0;
  for (Extra& e : extras_) {
    if (e.link && bpf_link__destroy(e.link) && !extra_err) extra_err = errno ? errno : EIO;
    e.link = nullptr;
  }
  if (extra_err) {
    destroy_links();
    return Status::error("ebpf: detaching an extra program: " + errstr(extra_err));
  }
  const bool sites_were_attached = sites_.attached();
  if (const int err = sites_.destroy()) {
    destroy_links();
    return Status::error("ebpf: detaching " + obj_->program_name + " from the sites: " + errstr(err));
  }
  if (sites_were_attached && !link_) {  // uprobe_multi: its one link was all
    const std::int64_t now = irq_work_interrupts();
    if (now >= 0 && irq_work_at_enable_ >= 0) irq_work_while_enabled_ += now - irq_work_at_enable_;
  }
  if (link_) {
    if (profile_fd_ >= 0) {
      // What the timer's clock counted in this window (ns of the thread's
      // CPU time): the firings its period made.
      std::uint64_t ns = 0;
      if (read(profile_fd_, &ns, sizeof ns) == static_cast<ssize_t>(sizeof ns)) timer_.clock_read(ns);
      timer_.disabled();
      profile_fd_ = -1;  // the link closes it
    }
    int err = bpf_link__destroy(link_);
    link_ = nullptr;
    const std::int64_t now = irq_work_interrupts();
    if (now >= 0 && irq_work_at_enable_ >= 0) irq_work_while_enabled_ += now - irq_work_at_enable_;
    if (err) return Status::error("ebpf: detaching " + obj_->program_name + ": " + errstr(err));
  }
  return Status::ok();
}

Status EbpfTracer::drain() {
  if (consumer_) return consumer_->drain();
  return Status::ok();
}

std::uint64_t EbpfTracer::sum_percpu(bpf_map* map, std::uint32_t key) const {
  const int ncpu = libbpf_num_possible_cpus();
  if (!map || ncpu <= 0) return 0;
  std::vector<std::uint64_t> vals(static_cast<std::size_t>(ncpu));
  if (bpf_map_lookup_elem(bpf_map__fd(map), &key, vals.data()) != 0) return 0;
  std::uint64_t sum = 0;
  for (auto v : vals) sum += v;
  return sum;
}

EbpfTracer::KernelStats EbpfTracer::read_kernel_stats() const {
  KernelStats s;
  if (!obj_ || !obj_->prog) return s;
  bpf_prog_info info{};
  __u32 len = sizeof info;
  // bpf_prog_get_info_by_fd() is libbpf >= 1.2; this is the same call.
  if (bpf_obj_get_info_by_fd(bpf_program__fd(obj_->prog), &info, &len) != 0) return s;
  s.ok = true;
  s.run_cnt = info.run_cnt;
  s.run_time_ns = info.run_time_ns;
  s.recursion_misses = info.recursion_misses;
  return s;
}

std::vector<ConsumerTask> EbpfTracer::consumer_tasks() const {
  if (!consumer_ || consumer_->tid() == 0) return {};
  return {{cfg_.action == "ringbuf" ? "ring buffer reader" : "perf buffer reader", static_cast<int>(getpid()),
           consumer_->tid(), consumer_cfg_.mode == ConsumerMode::kSpin}};
}

// A probe filtered to the other process (pid_filter): none of this
// process's hits may count, and all of the other's calls at the first
// enable() must have (the proof the probe was live).
EventCounts EbpfTracer::filtered_counts() {
  EventCounts c;
  c.probe_disabled = true;
  const std::uint64_t total = sum_percpu(obj_->count, 0);
  c.recorded = total - std::min(total, other_counted_);
  c.disabled_detail = fmt::format(
      "the probe is for process {} (filtered {}), which made {} calls at the first enable: {} counted", other_.pid(),
      pid_filter_ == PidFilter::kOtherKernel ? "at the link: installed there alone" : "by the program",
      other_checked_ ? kOtherCalls : 0, other_counted_);
  if (!other_checked_ || other_counted_ != kOtherCalls) {
    c.tracer_errors = 1;
    c.tracer_error_detail = fmt::format("the probe was not live for the other process: {} of its {} calls counted",
                                        other_counted_, other_checked_ ? kOtherCalls : 0);
  }
  return c;
}

EventCounts EbpfTracer::counts() {
  EventCounts c;
  if (!obj_) return c;
  const std::string& a = cfg_.action;
  const KernelStats ks = read_kernel_stats();
  if (cfg_.attach == AttachType::kPerfEvent) {
    c.timer_fired = timer_.fired();
    c.timer_windows = timer_.windows();
  }
  if (a == "empty") {
    // Nothing is recorded; the kernel's run count is the count.  The empty
    // program has no filter, so other processes' hits are included.
    c.recorded = ks.run_cnt;
    c.exact = false;
    return c;
  }
  if (pid_filter_ != PidFilter::kSelf) return filtered_counts();
  if (a == "count" || a == "update") {
    c.recorded = sum_percpu(obj_->count, 0);
  } else if (a == "hash") {
    const int fd = bpf_map__fd(obj_->hash);
    const int ncpu = cfg_.hash_shared ? 1 : libbpf_num_possible_cpus();
    std::vector<std::uint64_t> vals(static_cast<std::size_t>(ncpu > 0 ? ncpu : 1));
    std::uint32_t key = 0, next = 0;
    std::uint32_t* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
      if (bpf_map_lookup_elem(fd, &next, vals.data()) == 0)
        for (auto v : vals) c.recorded += v;
      key = next;
      prev = &key;
    }
  } else if (consumer_) {
    // Every record consumed counts, good or bad; the judge sees the bad ones.
    c.recorded = consumer_->records();
    c.payload_source = copy_payload_ ? PayloadSource::kWorkload : PayloadSource::kTracer;
    c.payload_checked_events = consumer_->records();
    c.payload_mismatched_events = consumer_->bad_records();
    c.payload_truncated_events = consumer_->truncated_records();
    c.payload_kept_bytes = consumer_->kept_bytes();
    c.payload_mismatch_detail = consumer_->first_problem();
    // Bytes the program generated itself are not the workload's.
    c.payload_verified = copy_payload_ ? consumer_->payload_verified() : 0;
    c.consumer_wakeups = consumer_->wakeups();
  }
  // ecbs > 1: each extra program counted every event (its filter holds) or
  // none (it never does); anything else is a handler that did not run.
  for (std::size_t i = 0; i < extras_.size(); ++i) {
    const std::uint64_t n = sum_percpu(extras_[i].obj->count, 0);
    const std::uint64_t want = extra_false_ ? 0 : c.recorded;
    if (n != want && !c.tracer_errors++)
      c.tracer_error_detail = fmt::format("program #{} on the hook counted {} events, the first {} ({})", i + 2, n,
                                          c.recorded, extra_false_ ? "its filter never holds: want 0" : "want equal");
  }
  c.lost = sum_percpu(obj_->drops, 0);
  // A copy of the workload's buffer that faulted was not recorded (lost),
  // and the fault is an error of the tracer.
  if (const std::uint64_t faults = sum_percpu(obj_->faults, 0)) {
    c.lost += faults;
    c.tracer_errors = faults;
    c.tracer_error_detail =
        "bpf_probe_read_user() of the workload's buffer failed " + std::to_string(faults) + " times";
  }
  // Runs the kernel skipped (recursion) were not recorded either; they cannot
  // be attributed to our process, so the count is no longer exact.
  if (ks.recursion_misses) {
    c.lost += ks.recursion_misses;
    c.exact = false;
  }
  return c;
}

// Long (~95 lines): every details() field in one place, before attach (what
// each attach type does here) and after (the run's configuration and
// counters, per handler).
nlohmann::json EbpfTracer::details() const {
  nlohmann::json j;
  if (!obj_) {
    // Not attached (`tracebench env`): what each attach type does here.
    nlohmann::json types = nlohmann::json::object();
    for (const auto& [name, av] : attach_type_availability()) {
      types[name] = av.ok ? nlohmann::json{{"ok", true}} : nlohmann::json{{"ok", false}, {"reason", av.reason}};
    }
    j["attach_types"] = types;
    return j;
  }
  j["attach"] = to_string(cfg_.attach);
  j["action"] = cfg_.action;
  j["program"] = obj_->program_name;
  j["family"] = std::string(family_of(cfg_.attach)) + ".bpf.c";
  j["target"] = target_desc_;
  if (spec_.probe.kind == ProbeKind::kUserFunction) j["sites"] = 1 + spec_.probe.more_sites.size();
  j["tgid_filter"] = cfg_.tgid;
  if (pid_filter_ != PidFilter::kSelf) {
    j["pid_filter"] = pid_filter_ == PidFilter::kOtherKernel ? "other_kernel" : "other_program";
    j["other_pid"] = other_.pid();
    j["other_calls"] = other_checked_ ? kOtherCalls : 0;
    j["other_calls_counted"] = other_counted_;
  }
  if (cfg_.attach == AttachType::kPerfEvent) {
    j["profile_period_ns"] = profile_period_ns_;
    j["timer_fired"] = timer_.fired();
  }
  // The handler-count sweep (`tracebench model fit` reads ecbs and extra_predicate).
  put_handler_count(&j, 1 + extras_.size(), !extra_false_);
  if (!extras_.empty()) {
    nlohmann::json per = nlohmann::json::array();
    per.push_back(sum_percpu(obj_->count, 0));
    for (const Extra& e : extras_) per.push_back(sum_percpu(e.obj->count, 0));
    j["handler_counts"] = per;
  }
  if (!prog_ids_.empty()) j["prog_id"] = prog_ids_.back();
  j["enables"] = enables_;
  if (enables_) j["attach_seconds_mean"] = attach_seconds_ / static_cast<double>(enables_);
  if (disables_) j["detach_seconds_mean"] = detach_seconds_ / static_cast<double>(disables_);
  nlohmann::json opts;
  if (cfg_.action == "ringbuf" || cfg_.action == "perfbuf") {
    opts["record_bytes"] = cfg_.record_bytes;
    j["record_payload"] = copy_payload_ ? "bpf_probe_read_user() of argument " + std::to_string(cfg_.payload_arg) +
                                              " (length: argument " + std::to_string(cfg_.payload_len_arg) + ")"
                                        : std::string("generated by the program");
    opts["buffer_kb"] = buffer_kb_;
    opts["consumer"] = consumer_cfg_.mode == ConsumerMode::kEpoll ? "epoll" : "spin";
    opts["consumer_cpu"] = consumer_cfg_.cpu;
    if (consumer_shares_cpu_)
      j["warnings"] = {
          "the consumer thread runs on the measured CPU (consumer_cpu=" + std::to_string(consumer_cfg_.cpu) +
          "): it drains the buffer between the workload's events, so its work is in the traced figure "
          "and no cross-CPU wakeup is paid; give ebpf.consumer_cpu another CPU to measure the "
          "producer's cost alone"};
    if (cfg_.action == "ringbuf") opts["wakeup"] = wakeup_;
  }
  if (cfg_.action == "hash") {
    opts["hash_map"] = cfg_.hash_shared ? "shared" : "percpu";
    opts["hash_entries"] = cfg_.hash_entries;
  }
  opts["stats"] = stats_ ? "on" : "off";
  j["options"] = opts;

  const KernelStats ks = read_kernel_stats();
  nlohmann::json kst;
  kst["enabled"] = stats_fd_ >= 0;
  if (stats_fd_ < 0)
    kst["reason"] = stats_ ? stats_error_
                           : "stats=off (default: BPF_ENABLE_STATS adds two clock reads per run; "
                             "pass stats=on to record run_cnt/run_time_ns)";
  if (ks.ok) {
    kst["run_cnt"] = ks.run_cnt;
    kst["run_time_ns"] = ks.run_time_ns;
    kst["recursion_misses"] = ks.recursion_misses;
    if (ks.run_cnt) kst["ns_per_run"] = static_cast<double>(ks.run_time_ns) / ks.run_cnt;
  }
  j["kernel_stats"] = kst;
  j["drops"] = sum_percpu(obj_->drops, 0);
  if (consumer_) {
    j["consumer"] = consumer_->details();
    // System-wide, so other activity adds a little; a wakeup per record
    // shows up as about one per event.
    j["irq_work_interrupts_while_enabled"] = irq_work_while_enabled_;
  }
  if (cfg_.action == "hash") {
    std::uint64_t n = 0;
    std::uint32_t key = 0, next = 0;
    std::uint32_t* prev = nullptr;
    const int fd = bpf_map__fd(obj_->hash);
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
      n++;
      key = next;
      prev = &key;
    }
    j["hash_keys"] = n;
  }
  j["tracefs_mounted_by_us"] = g_mounted_tracefs.load();
  return j;
}

void EbpfTracer::teardown() noexcept {
  // The harness's signal watcher may tear down from another thread while the
  // run unwinds; never free the same object twice.
  std::lock_guard<std::mutex> lock(teardown_mu_);
  destroy_links();
  if (consumer_) {
    consumer_->stop();
    consumer_.reset();
  }
  extras_.clear();
  obj_.reset();  // destroys the skeletons: programs and maps
  other_.stop();
  if (stats_fd_ >= 0) {
    close(stats_fd_);
    stats_fd_ = -1;
  }
  attached_ = false;
}

// --- availability, by trying ---------------------------------------------

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

Availability try_attach_type(AttachType t) {
  AttachSpec spec;
  spec.action = "count";
  spec.options["attach"] = to_string(t);
  spec.options["stats"] = "off";
  switch (t) {
    case AttachType::kUprobe:
    case AttachType::kUretprobe:
    case AttachType::kUprobeMulti:
      spec.probe = {"user:tb_ebpf_self_probe", ProbeKind::kUserFunction, kSelfProbeSymbol,
                    reinterpret_cast<std::uintptr_t>(&tb_ebpf_self_probe), ""};
      break;
    case AttachType::kUsdt:
      spec.probe = {std::string("usdt:") + kSelfProbeUsdt, ProbeKind::kUsdt, kSelfProbeUsdt, 0, ""};
      break;
    case AttachType::kPerfEvent:
      spec.probe = {"profile:cpu-clock", ProbeKind::kProfile, "cpu-clock", 0, ""};
      spec.options["profile_hz"] = "10000";
      break;
    default: spec.probe = {"syscall:getpid", ProbeKind::kSyscall, "getpid", 0, ""}; break;
  }
  EbpfTracer tracer;
  Status st = tracer.attach(spec);
  if (st) st = tracer.enable();
  constexpr int kFires = 3;
  const bool profile = spec.probe.kind == ProbeKind::kProfile;
  if (st && profile) {
    // ~2 ms of this thread's CPU time: about 20 of the timer's periods.
    const double until = thread_cpu_seconds() + 0.002;
    while (thread_cpu_seconds() < until) {}
  }
  if (st && !profile) {
    for (int i = 0; i < kFires; i++) {
      if (spec.probe.kind == ProbeKind::kSyscall)
        syscall(SYS_getpid);
      else
        tb_ebpf_self_probe(i);
    }
  }
  if (st) st = tracer.disable();
  if (st) st = tracer.drain();
  if (st && profile) {
    // The one judge's rule for a timer's firings (late expiries coalesce on
    // a stalled vCPU: fewer than the clock is no failure).
    const Verification v = judge_events(tracer.counts(), 0, 0, false, true);
    if (!v.passed()) st = Status::error("attached, but " + v.reason);
  } else if (st) {
    EventCounts c = tracer.counts();
    if (c.recorded != kFires)
      st = Status::error("attached, but counted " + std::to_string(c.recorded) + " of " + std::to_string(kFires) +
                         " events");
  }
  tracer.teardown();
  return st ? Availability::yes() : Availability::no(st.message());
}

}  // namespace

const std::map<std::string, Availability>& EbpfTracer::attach_type_availability() {
  static std::once_flag once;
  static std::map<std::string, Availability> result;
  std::call_once(once, [] {
    for (AttachType t : kAllAttachTypes) result[to_string(t)] = try_attach_type(t);
  });
  return result;
}

Availability EbpfTracer::available() {
  const auto& types = attach_type_availability();
  std::string reasons;
  for (const auto& [name, av] : types) {
    if (av.ok) return Availability::yes();
    reasons += (reasons.empty() ? "" : "; ") + name + ": " + av.reason;
  }
  return Availability::no("no BPF attach type works on this kernel (" + reasons +
                          "); run as root (CAP_BPF+CAP_PERFMON) on a kernel with CONFIG_BPF_EVENTS");
}

}  // namespace tracebench::ebpf

namespace {

// We never pin; remove anything pinned under /sys/fs/bpf/tracebench* anyway.
std::vector<std::string> cleanup_ebpf(bool remove) {
  std::vector<std::string> removed;
  std::error_code ec;
  const std::filesystem::path root = "/sys/fs/bpf";
  if (!std::filesystem::is_directory(root, ec)) return removed;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("tracebench", 0) != 0) continue;
    std::error_code rec;
    if (!remove || (std::filesystem::remove_all(e.path(), rec) > 0 && !rec)) removed.push_back(e.path().string());
  }
  return removed;
}

}  // namespace

TRACEBENCH_REGISTER_TRACER(ebpf, [] { return std::make_unique<tracebench::ebpf::EbpfTracer>(); });
TRACEBENCH_REGISTER_CLEANUP(ebpf, cleanup_ebpf);
