// The kprobes adapter (VM lab kernels): one class over three ways of
// placing a kprobe (a tracefs kprobe event, a perf kprobe PMU event, a BPF
// program on it).  Longer than the suite's ~600-line guide (README, Contributing), on purpose: the
// three share symbol resolution, placement checks (debugfs kprobes/list) and
// teardown, and differ only in attach and read-back, side by side here.
#include "kprobes_tracer.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tracebench/kallsyms.h"
#include "tracers/common/names.h"
#include "tracers/common/tracefs_leftovers.h"
#include "tracers/common/proc.h"
#include "tracers/common/tracefs_cxx.h"

namespace tracebench::kprobes {
namespace {

using common::read_file;

constexpr const char* kGroup = common::kDynamicEventGroup;  // leftovers found by tracefs_leftovers.cc
constexpr const char* kKprobesList = "/sys/kernel/debug/kprobes/list";
constexpr const char* kOptimizationSysctl = "/proc/sys/debug/kprobes-optimization";
constexpr const char* kKprobePmu = "/sys/bus/event_source/devices/kprobe";

std::atomic<int> g_seq{0};

Status write_file(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno_status("open " + path, errno);
  ssize_t n = write(fd, value.data(), value.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) return errno_status("write " + path, err);
  return Status::ok();
}

std::string tracing_dir() {
  const char* d = tracefs_tracing_dir();
  return d ? d : "";
}

// Size of a function: distance to the next higher symbol in /proc/kallsyms
// (0 when unknown).  Bounds the offset=body search to the function itself.
std::uint64_t function_size(const std::string& sym) {
  std::ifstream in("/proc/kallsyms");
  std::string line;
  std::uint64_t start = 0, next = ~0ull;
  std::vector<std::uint64_t> addrs;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string addr, type, name;
    f >> addr >> type >> name;
    std::uint64_t a = std::strtoull(addr.c_str(), nullptr, 16);
    if (name == sym && start == 0) start = a;
    addrs.push_back(a);
  }
  if (start == 0) return 0;
  for (std::uint64_t a : addrs)
    if (a > start && a < next) next = a;
  return next == ~0ull ? 0 : next - start;
}

int read_int_file(const std::string& path, int fallback) {
  std::string s;
  if (!read_file(path, &s)) return fallback;
  try {
    return std::stoi(s);
  } catch (...) { return fallback; }
}

int perf_kprobe_type() { return read_int_file(std::string(kKprobePmu) + "/type", -1); }

// Bit of the "retprobe" flag in perf_event_attr.config ("config:0").
int perf_retprobe_bit() {
  std::string s;
  if (!read_file(std::string(kKprobePmu) + "/format/retprobe", &s)) return -1;
  std::size_t c = s.find(':');
  if (c == std::string::npos) return -1;
  try {
    return std::stoi(s.substr(c + 1));
  } catch (...) { return -1; }
}

// Counting program for BPF_PROG_TYPE_KPROBE: one u64 per CPU in a
// BPF_MAP_TYPE_PERCPU_ARRAY, incremented on every hit.
int load_count_program(int map_fd, std::string* log) {
  struct bpf_insn insns[] = {
      // *(u32 *)(r10 - 4) = 0
      {BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0},
      // r2 = r10; r2 += -4
      {BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0},
      {BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4},
      // r1 = map (ld_imm64, pseudo map fd)
      {BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd},
      {0, 0, 0, 0, 0},
      // r0 = bpf_map_lookup_elem(r1, r2)
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem},
      // if r0 == 0 goto exit
      {BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0},
      // r1 = *(u64 *)(r0 + 0); r1 += 1; *(u64 *)(r0 + 0) = r1
      {BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0},
      {BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1},
      {BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 0, 0},
      // r0 = 0; exit
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  static char buf[8192];
  buf[0] = 0;
  LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_level = 1, .log_size = sizeof(buf), .log_buf = buf);
  int fd =
      bpf_prog_load(BPF_PROG_TYPE_KPROBE, "tb_kprobe_count", "GPL", insns, sizeof(insns) / sizeof(insns[0]), &opts);
  if (fd < 0) {
    int err = errno;
    // Retry without a log: some kernels reject the log for tiny programs.
    LIBBPF_OPTS(bpf_prog_load_opts, quiet);
    fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "tb_kprobe_count", "GPL", insns, sizeof(insns) / sizeof(insns[0]), &quiet);
    if (fd < 0) {
      *log = buf;
      errno = err;
    }
  }
  return fd;
}

}  // namespace

const OptionSchema& option_schema() {
  using T = OptionSpec::Type;
  static const OptionSchema schema = {
      {.name = "offset",
       .type = T::kUint,
       .help = "byte offset into the function; `body` is the first instruction boundary after the ftrace call "
               "site (probes at a function's entry are ftrace-based on x86, `placement: ftrace`)",
       .default_value = "0",
       .max = 4096,
       .words = {"body"}},
      {.name = "optimize",
       .type = T::kBool,
       .help = "sets `debug.kprobes-optimization` for the run (restored at teardown): with `offset=body`, off "
               "gives an int3 probe and on a jump-optimized one where the code allows it",
       .default_help = "the sysctl is left as it is"},
      {.name = "buffer_kb",
       .type = T::kUint,
       .help = "per-CPU buffer of the instance in KiB",
       .default_value = "4096",
       .min = 4,
       .max = 1u << 20,
       .sizes_buffer = true},
      {.name = "maxactive",
       .type = T::kUint,
       .help = "kretprobe instances (0 = the kernel's default)",
       .default_value = "0",
       .max = 4096},
  };
  return schema;
}

Status parse_spec_options(const AttachSpec& spec, KprobesConfig* out) {
  OptionValues v;
  TB_TRY(tracebench::option_values("kprobes", option_schema(), spec, &v));
  KprobesConfig c;
  // The schema's number (decimal, or 0x hex), never the text again: "010" is 10.
  c.offset = v.is_number("offset") ? std::to_string(v.number("offset")) : v.text("offset");
  if (v.has("optimize")) c.optimize = v.on("optimize") ? 1 : 0;
  c.buffer_kb = v.number("buffer_kb");
  c.maxactive = static_cast<int>(v.number("maxactive"));
  *out = c;
  return Status::ok();
}

Status resolve_symbol(const ProbePoint& probe, std::string* symbol) {
  Status s = kernel_function_for(probe, symbol);
  return s ? s : Status::error("kprobes: " + s.message());
}

std::string probe_mode(const std::string& symbol, std::uint64_t offset, bool retprobe) {
  std::string list;
  if (!read_file(kKprobesList, &list)) return "unknown";
  // Lines: "<addr>  k|r  <symbol>+0x<off>  [module]  [FLAGS]...".  The kernel
  // may move an entry probe past an ENDBR instruction (IBT kernels list
  // "+0x4" for a probe asked at +0), so an entry probe also matches a
  // listed offset up to 16 when there is no exact match.
  std::string exact, near;
  std::istringstream in(list);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string addr, type, where;
    f >> addr >> type >> where;
    if ((type == "r") != retprobe) continue;
    std::size_t plus = where.rfind("+0x");
    if (plus == std::string::npos || where.compare(0, plus, symbol) != 0 || plus != symbol.size()) continue;
    std::uint64_t off = std::strtoull(where.c_str() + plus + 3, nullptr, 16);
    // Placement, whether or not the probe is armed right now ([DISABLED]).
    std::string mode = "int3";
    if (line.find("[GONE]") != std::string::npos)
      mode = "gone";
    else if (line.find("[FTRACE]") != std::string::npos)
      mode = "ftrace";
    else if (line.find("[OPTIMIZED]") != std::string::npos)
      mode = "optimized";
    std::string& slot = off == offset ? exact : near;
    if (off != offset && !(offset == 0 && off <= 16)) continue;
    if (slot.empty() || slot == "gone" || mode == "optimized") slot = mode;
  }
  if (!exact.empty()) return exact;
  return near.empty() ? "absent" : near;
}

KprobesTracer::KprobesTracer() = default;
KprobesTracer::~KprobesTracer() { teardown(); }

std::string_view KprobesTracer::description() const {
  return "kprobe/kretprobe on a kernel function via tracefs kprobe_events (private instance) "
         "or the perf kprobe PMU + a counting BPF program; reports ftrace/optimized/int3 placement";
}

Availability KprobesTracer::available() {
  std::string dir = tracing_dir();
  bool tracefs_ok = !dir.empty() && access((dir + "/kprobe_events").c_str(), W_OK) == 0;
  bool pmu_ok = perf_kprobe_type() >= 0;
  if (!tracefs_ok && !pmu_ok)
    return Availability::no(
        "CONFIG_KPROBES/CONFIG_KPROBE_EVENTS is not set in the running kernel (no kprobe_events "
        "in tracefs, no kprobe PMU); use `tracebench vm` to run on a kernel that has them");
  return Availability::yes();
}

bool KprobesTracer::supports(const ProbePoint& probe) const {
  return probe.kind == ProbeKind::kKernelFunction || probe.kind == ProbeKind::kSyscall;
}

std::map<std::string, std::string> KprobesTracer::versions() const {
  std::map<std::string, std::string> v;
  v["libbpf"] = std::to_string(libbpf_major_version()) + "." + std::to_string(libbpf_minor_version());
#ifdef TRACEBENCH_LIBTRACEFS_VERSION
  v["libtracefs"] = TRACEBENCH_LIBTRACEFS_VERSION;
#endif
  return v;
}

Status KprobesTracer::validate(const AttachSpec& spec) const {
  const std::string& a = spec.action;
  if (a != "tracefs_kprobe" && a != "tracefs_kretprobe" && a != "bpf_kprobe" && a != "bpf_kretprobe" && a != "default")
    return Status::error("kprobes: unknown action '" + a +
                         "' (tracefs_kprobe, tracefs_kretprobe, bpf_kprobe, bpf_kretprobe)");
  if (!supports(spec.probe))
    return Status::error("kprobes: cannot attach to '" + spec.probe.name + "': only kernel functions and syscalls");
  KprobesConfig config;
  return parse_spec_options(spec, &config);
}

Status KprobesTracer::attach(const AttachSpec& spec) {
  if (attached_) return Status::error("kprobes: attach() called twice without teardown()");
  TB_TRY(validate(spec));  // action, probe, options
  const std::string& a = spec.action;
  TB_TRY(parse_spec_options(spec, &config_));
  Availability av = available();
  if (!av.ok) return Status::error(av.reason);
  TB_TRY(resolve_symbol(spec.probe, &symbol_));
  spec_ = spec;
  bpf_ = a.rfind("bpf_", 0) == 0;
  retprobe_ = a.find("kretprobe") != std::string::npos;
  // Anything can call a syscall; only the workload calls the module's target.
  exact_ = spec.probe.kind == ProbeKind::kKernelFunction;
  attached_ = true;  // from here teardown() undoes partial work

  if (config_.optimize >= 0) {
    saved_optimization_ = read_int_file(kOptimizationSysctl, -1);
    if (saved_optimization_ < 0) {
      teardown();
      return Status::error(std::string("kprobes: option optimize needs ") + kOptimizationSysctl +
                           " (CONFIG_OPTPROBES)");
    }
    Status s = write_file(kOptimizationSysctl, config_.optimize ? "1\n" : "0\n");
    if (!s) {
      teardown();
      return s;
    }
  }
  Status s = bpf_ ? attach_bpf() : attach_tracefs();
  if (!s) {
    teardown();
    return s;
  }
  return Status::ok();
}

// offset=body: the first instruction boundary after the function's ftrace
// call site that the kernel accepts; found by trying, as the kernel checks
// instruction boundaries itself (EILSEQ otherwise).
template <typename Create>
static Status place_probe(const std::string& offset_opt, const std::string& symbol, bool retprobe, Create create,
                          std::uint64_t* placed) {
  if (offset_opt != "body") {
    std::uint64_t off = std::strtoull(offset_opt.c_str(), nullptr, 10);  // decimal: parse_options wrote it
    TB_TRY(create(off));
    *placed = off;
    return Status::ok();
  }
  if (retprobe) return Status::error("kprobes: offset=body applies to kprobes, not kretprobes");
  std::string last;
  std::uint64_t size = function_size(symbol);
  if (size == 0) size = 16;  // addresses hidden (kptr_restrict): stay near the entry
  for (std::uint64_t off = 1; off < size && off <= 64; ++off) {
    Status s = create(off);
    if (s) {
      *placed = off;
      return Status::ok();
    }
    last = s.message();
  }
  return Status::error("kprobes: no probe-able offset inside " + symbol + " after its entry: " + last);
}

Status KprobesTracer::create_tracefs_probe(std::uint64_t offset) {
  std::string addr = symbol_ + (offset ? "+" + std::to_string(offset) : "");
  // The module's target gets its arguments recorded (seq, len) like a real
  // probe would; syscall entry functions take a pt_regs pointer.
  std::string fmt;
  // ($argN only exists at a function's entry.)
  if (spec_.probe.target == "tracebench_kmod_target" && (retprobe_ || offset == 0))
    fmt = retprobe_ ? "ret=$retval:u64" : "seq=$arg1:u64 len=$arg3:u32";
  else
    fmt = retprobe_ ? "ret=$retval:s64" : "";
  tracefs_dynevent* ev = retprobe_ ? tracefs_kretprobe_alloc(kGroup, event_.c_str(), addr.c_str(), fmt.c_str(),
                                                             static_cast<unsigned>(config_.maxactive))
                                   : tracefs_kprobe_alloc(kGroup, event_.c_str(), addr.c_str(), fmt.c_str());
  if (!ev) return errno_status("kprobes: allocate kprobe " + addr, errno);
  if (tracefs_dynevent_create(ev) != 0) {
    int err = errno;
    tracefs_dynevent_free(ev);
    const std::string last = last_tracefs_error(nullptr);
    const std::string hint = last.empty() ? "" : " (" + last + ")";
    return errno_status(
        "kprobes: create " + std::string(retprobe_ ? "r:" : "p:") + kGroup + "/" + event_ + " " + addr + hint, err);
  }
  if (config_.offset == "body" && probe_mode(symbol_, offset, retprobe_) == "ftrace") {
    // A body probe must not sit on the ftrace call site (that measures ftrace).
    tracefs_dynevent_destroy(ev, true);
    tracefs_dynevent_free(ev);
    return Status::error("kprobes: " + addr + " is the ftrace call site");
  }
  dynevent_ = ev;
  return Status::ok();
}

Status KprobesTracer::attach_tracefs() {
  int n = g_seq.fetch_add(1);
  event_ = common::owned_event_name("kp" + std::to_string(n));
  instance_name_ = common::owned_name("kp" + std::to_string(n));
  TB_TRY(place_probe(
      config_.offset, symbol_, retprobe_, [this](std::uint64_t off) { return create_tracefs_probe(off); }, &offset_));
  instance_ = tracefs_instance_create(instance_name_.c_str());
  if (!instance_) return errno_status("kprobes: create tracefs instance " + instance_name_, errno);
  std::string kb = std::to_string(config_.buffer_kb);
  if (tracefs_instance_file_write(instance_, "buffer_size_kb", kb.c_str()) <= 0)
    return errno_status("kprobes: set buffer_size_kb in " + instance_name_, errno);
  const char* systems[] = {kGroup, nullptr};
  tep_ = tracefs_local_events_system(nullptr, systems);
  if (!tep_) return errno_status("kprobes: parse event formats of " + std::string(kGroup), errno);
  if (!tep_find_event_by_name(tep_, kGroup, event_.c_str()))
    return Status::error("kprobes: event " + std::string(kGroup) + ":" + event_ + " not found after creating it");
  return Status::ok();
}

Status KprobesTracer::open_perf_kprobe(std::uint64_t offset) {
  int type = perf_kprobe_type();
  if (type < 0)
    return Status::error(std::string("kprobes: no kprobe PMU (") + kKprobePmu +
                         "); the kernel lacks CONFIG_KPROBE_EVENTS");
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = static_cast<__u32>(type);
  if (retprobe_) {
    int bit = perf_retprobe_bit();
    if (bit < 0) return Status::error("kprobes: kprobe PMU has no retprobe format bit");
    attr.config |= 1ull << bit;
  }
  attr.config1 = reinterpret_cast<std::uintptr_t>(symbol_.c_str());  // kprobe_func
  attr.config2 = offset;                                             // probe_offset
  attr.disabled = 1;
  attr.sample_period = 1;
  attr.wakeup_events = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0)
    return errno_status("kprobes: perf_event_open(kprobe " + symbol_ + "+" + std::to_string(offset) +
                            (retprobe_ ? ", retprobe" : "") + ")",
                        errno);
  if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd_) != 0) {
    int err = errno;
    close(fd);
    return errno_status("kprobes: PERF_EVENT_IOC_SET_BPF", err);
  }
  if (config_.offset == "body" && probe_mode(symbol_, offset, retprobe_) == "ftrace") {
    close(fd);
    return Status::error("kprobes: " + symbol_ + "+" + std::to_string(offset) + " is the ftrace call site");
  }
  perf_fd_ = fd;
  return Status::ok();
}

Status KprobesTracer::attach_bpf() {
  ncpus_ = libbpf_num_possible_cpus();
  if (ncpus_ <= 0) return Status::error("kprobes: cannot count possible CPUs");
  LIBBPF_OPTS(bpf_map_create_opts, mopts);
  map_fd_ = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "tb_kp_counts", sizeof(__u32), sizeof(__u64), 1, &mopts);
  if (map_fd_ < 0) return errno_status("kprobes: create BPF map tb_kp_counts", errno);
  std::string log;
  prog_fd_ = load_count_program(map_fd_, &log);
  if (prog_fd_ < 0)
    return errno_status(
        "kprobes: load BPF program tb_kprobe_count" + (log.empty() ? std::string() : " (verifier: " + log + ")"),
        errno);
  TB_TRY(place_probe(
      config_.offset, symbol_, retprobe_, [this](std::uint64_t off) { return open_perf_kprobe(off); }, &offset_));
  // The kprobe is armed for as long as the perf event exists, enabled or not
  // (and the BPF program runs on every hit), so the baseline blocks must run
  // without it: enable() opens it, disable() closes it.
  close(perf_fd_);
  perf_fd_ = -1;
  return Status::ok();
}

void KprobesTracer::wait_for_placement() {
  // The kernel optimizes armed probes from a delayed work item; wait (outside
  // the measured block) until the placement settles so a traced block
  // measures one mechanism.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  for (;;) {
    mode_ = probe_mode(symbol_, offset_, retprobe_);
    if (mode_ != "int3" || config_.optimize == 0 || read_int_file(kOptimizationSysctl, 0) == 0 ||
        std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status KprobesTracer::enable() {
  if (!attached_) return Status::error("kprobes: enable() before attach()");
  if (bpf_) {
    if (perf_fd_ < 0) TB_TRY(open_perf_kprobe(offset_));
    if (ioctl(perf_fd_, PERF_EVENT_IOC_ENABLE, 0) != 0) return errno_status("kprobes: PERF_EVENT_IOC_ENABLE", errno);
  } else {
    if (tracefs_event_enable(instance_, kGroup, event_.c_str()) != 0)
      return errno_status("kprobes: enable " + std::string(kGroup) + ":" + event_ + " in " + instance_name_, errno);
  }
  enables_++;
  wait_for_placement();
  return Status::ok();
}

Status KprobesTracer::disable() {
  if (!attached_) return Status::error("kprobes: disable() before attach()");
  if (bpf_) {
    if (perf_fd_ < 0) return Status::ok();
    int rc = ioctl(perf_fd_, PERF_EVENT_IOC_DISABLE, 0);
    int err = errno;
    close(perf_fd_);  // disarms the kprobe
    perf_fd_ = -1;
    if (rc != 0) return errno_status("kprobes: PERF_EVENT_IOC_DISABLE", err);
    return Status::ok();
  }
  if (tracefs_event_disable(instance_, kGroup, event_.c_str()) != 0)
    return errno_status("kprobes: disable " + event_, errno);
  // Consume now so the buffer never wraps across repetitions.
  return read_tracefs();
}

Status KprobesTracer::read_tracefs() {
  struct Ctx {
    const char* name;
    std::uint64_t n = 0;
  } ctx{event_.c_str()};
  auto cb = [](tep_event* ev, tep_record*, int, void* p) -> int {
    auto* c = static_cast<Ctx*>(p);
    if (strcmp(ev->name, c->name) == 0) c->n++;
    return 0;
  };
  if (tracefs_iterate_raw_events(tep_, instance_, nullptr, 0, cb, &ctx) != 0)
    return errno_status("kprobes: read the raw buffers of " + instance_name_, errno);
  recorded_ += ctx.n;
  return Status::ok();
}

Status KprobesTracer::drain() {
  if (!attached_) return Status::error("kprobes: drain() before attach()");
  if (bpf_) {
    std::vector<__u64> per_cpu(static_cast<std::size_t>(ncpus_), 0);
    __u32 key = 0;
    if (bpf_map_lookup_elem(map_fd_, &key, per_cpu.data()) != 0)
      return errno_status("kprobes: read BPF map tb_kp_counts", errno);
    std::uint64_t sum = 0;
    for (__u64 v : per_cpu) sum += v;
    recorded_ = sum;
    // Hits the kernel skipped because a BPF program was already running.
    bpf_prog_info info{};
    __u32 len = sizeof(info);
    if (bpf_obj_get_info_by_fd(prog_fd_, &info, &len) == 0) lost_ = info.recursion_misses;
    return Status::ok();
  }
  // Lost = ring-buffer overruns of our instance plus kprobe misses of our event.
  std::uint64_t overrun = 0;
  int ncpu = static_cast<int>(sysconf(_SC_NPROCESSORS_CONF));
  for (int cpu = 0; cpu < ncpu; ++cpu) {
    std::string path = "per_cpu/cpu" + std::to_string(cpu) + "/stats";
    char* s = tracefs_instance_file_read(instance_, path.c_str(), nullptr);
    if (!s) continue;
    const char* o = strstr(s, "overrun:");
    if (o) overrun += std::strtoull(o + 8, nullptr, 10);
    free(s);
  }
  std::uint64_t missed = 0;
  std::string profile;
  if (read_file(tracing_dir() + "/kprobe_profile", &profile)) {
    std::istringstream in(profile);
    std::string name;
    std::uint64_t hits = 0, miss = 0;
    while (in >> name >> hits >> miss)
      if (name == event_) missed = miss;
  }
  lost_ = overrun + missed;
  return Status::ok();
}

EventCounts KprobesTracer::counts() {
  EventCounts c;
  c.recorded = recorded_;
  c.lost = lost_;
  c.exact = exact_;
  return c;
}

nlohmann::json KprobesTracer::details() const {
  nlohmann::json j;
  j["via"] = bpf_ ? "perf_kprobe_pmu+bpf" : "tracefs_kprobe_events";
  j["probe"] = retprobe_ ? "kretprobe" : "kprobe";
  j["symbol"] = symbol_;
  j["offset"] = offset_;
  j["placement"] = mode_;  // ftrace | optimized | int3 | ...
  j["kprobes_optimization"] = read_int_file(kOptimizationSysctl, -1);
  if (!bpf_) {
    j["instance"] = instance_name_;
    j["event"] = std::string(kGroup) + ":" + event_;
  }
  return j;
}

void KprobesTracer::teardown() noexcept {
  if (perf_fd_ >= 0) {
    ioctl(perf_fd_, PERF_EVENT_IOC_DISABLE, 0);
    close(perf_fd_);
    perf_fd_ = -1;
  }
  if (prog_fd_ >= 0) close(prog_fd_);
  prog_fd_ = -1;
  if (map_fd_ >= 0) close(map_fd_);
  map_fd_ = -1;
  if (instance_) {
    tracefs_event_disable(instance_, nullptr, nullptr);
    tracefs_instance_destroy(instance_);
    tracefs_instance_free(instance_);
    instance_ = nullptr;
  }
  if (dynevent_) {
    tracefs_dynevent_destroy(dynevent_, true);
    tracefs_dynevent_free(dynevent_);
    dynevent_ = nullptr;
  }
  if (tep_) {
    tep_free(tep_);
    tep_ = nullptr;
  }
  if (saved_optimization_ >= 0) {
    (void)write_file(kOptimizationSysctl, std::to_string(saved_optimization_) + "\n");
    saved_optimization_ = -1;
  }
  attached_ = false;
}

TRACEBENCH_REGISTER_TRACER(kprobes, [] { return std::make_unique<KprobesTracer>(); });

}  // namespace tracebench::kprobes
