// The Ftrace adapter: one class over one tracefs instance (and, for option
// ecbs, the extra instances that enable the same event).  Longer than the
// suite's ~600-line guide (README, Contributing), on purpose: attach (static event, uprobe event or
// trace_marker, the pid and id filters), enable/disable, the read-back through
// libtraceevent and teardown all work on the same instance state and are
// read together; the options schema and the feature probes sit above it
// because `tracebench list` and `env` use them without an instance.
#include "ftrace_tracer.h"
#include "buffer_size.h"
#include "more_site_events.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tracers/common/tracefs_cxx.h"

#include "tracebench/handler_count.h"
#include "tracebench/payload_pattern.h"
#include "tracebench/parse.h"
#include "tracebench/system.h"
#include "tracers/common/names.h"
#include "tracers/common/tracefs_leftovers.h"
#include "tracers/common/proc.h"
#include "tracers/common/return_probe.h"

namespace tracebench::ftrace {
namespace {

using common::address_to_file_offset;
using common::read_text;

constexpr const char* kGroup = common::kDynamicEventGroup;  // leftovers found by tracefs_leftovers.cc

std::atomic<int> g_instance_seq{0};

// tb<pid>_<seq>_<symbol>, a C identifier of at most 63 characters.
std::string event_name_for(const std::string& base, int seq, const std::string& symbol) {
  std::string ev = base + std::to_string(seq) + "_";
  for (char c : symbol) ev += isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (ev.size() > 63) ev.resize(63);
  return ev;
}

// "/sys/kernel/tracing" (mounting tracefs if needed, as libtracefs does).
const char* tracing_dir() { return tracefs_tracing_dir(); }

Status write_instance_file(tracefs_instance* inst, const char* file, const std::string& value) {
  errno = 0;
  if (tracefs_instance_file_write(inst, file, value.c_str()) < 0) {
    int err = errno ? errno : EIO;
    std::string extra = last_tracefs_error(inst);
    return Status::error("write '" + value + "' to " +
                         std::string(tracefs_instance_get_name(inst) ? tracefs_instance_get_name(inst) : "") + "/" +
                         file + ": " + std::strerror(err) + (extra.empty() ? "" : " (" + extra + ")"));
  }
  return Status::ok();
}

// Function tracer support, by trying inside a throw-away instance.
Status try_function_tracer(tracefs_instance* inst, const std::string& function) {
  if (!function.empty()) {
    errno = 0;
    if (tracefs_function_filter(inst, function.c_str(), nullptr, TRACEFS_FL_RESET) < 0) {
      int err = errno ? errno : EIO;
      return Status::error("set_ftrace_filter '" + function + "': " + std::strerror(err) +
                           " (function tracer filter refused by this kernel; use the VM lab)");
    }
  }
  errno = 0;
  if (tracefs_tracer_set(inst, TRACEFS_TRACER_FUNCTION) < 0) {
    int err = errno ? errno : EIO;
    return Status::error(std::string("echo function > current_tracer: ") + std::strerror(err) +
                         " (the running kernel refuses the function tracer; use the VM lab)");
  }
  return Status::ok();
}

}  // namespace

// ---------------------------------------------------------------- marker limit

std::size_t max_payload_bytes() {
  // Found by trying once per process: one write far above any limit into the
  // trace_marker of a throw-away instance; the kernel returns what it kept.
  static const std::size_t limit = []() -> std::size_t {
    if (!tracing_dir()) return 0;
    std::string name = common::owned_name("markerlimit");
    tracefs_instance* inst = tracefs_instance_create(name.c_str());
    if (!inst) return 0;
    std::size_t kept = 0;
    if (tracefs_trace_on(inst) == 0) {
      char* path = tracefs_instance_get_file(inst, "trace_marker");
      int fd = path ? open(path, O_WRONLY | O_CLOEXEC) : -1;
      tracefs_put_tracing_file(path);
      if (fd >= 0) {
        std::vector<char> buf(64 * 1024);
        fill_payload(buf.data(), buf.size());
        ssize_t n = write(fd, buf.data(), buf.size());
        if (n > 0) kept = static_cast<std::size_t>(n);
        close(fd);
      }
    }
    tracefs_trace_off(inst);
    tracefs_instance_destroy(inst);
    tracefs_instance_free(inst);
    return kept;
  }();
  return limit;
}

// ---------------------------------------------------------------- options

const OptionSchema& option_schema() {
  using T = OptionSpec::Type;
  static const OptionSchema schema = {
      {.name = "buffer_kb",
       .type = T::kUint,
       .help = "per-CPU ring buffer size in KiB (`buffer_size_kb`; the kernel rounds up to whole sub-buffers)",
       .default_help = "sized per benchmark to hold one traced block, read back after it: events per block x record "
                       "bytes (+1/8, in whole sub-buffers), never below the kernel's default for a new instance "
                       "(1410 KiB on 6.18), at most 256 MiB per CPU and 1/8 of MemAvailable over every CPU's buffer; "
                       "with `read=end` the kernel's default",
       .min = 1,
       .max = 1u << 22,
       .sizes_buffer = true},
      {.name = "clock",
       .type = T::kText,
       .help = "trace clock; the instance's `trace_clock` lists the kernel's",
       .default_value = "local",
       .format = "a trace clock name (local, global, x86-tsc, mono, ...)",
       .check = [](const std::string& v) -> std::string {
         return v.find_first_of(" \n[]") == std::string::npos ? "" : "expected a trace clock name (local, global, ...)";
       }},
      {.name = "mode",
       .type = T::kChoice,
       .help = "`options/overwrite`: overwrite the oldest events, or drop new ones when full",
       .default_value = "overwrite",
       .words = {"overwrite", "discard"}},
      {.name = "event",
       .type = T::kText,
       .help = "the tracepoint a syscall probe uses (e.g. `raw_syscalls:sys_enter`)",
       .default_help = "`syscalls:sys_enter_<target>`",
       .format = "system:event",
       .check = check_system_event},
      {.name = "pid_filter",
       .type = T::kBool,
       .help = "`set_event_pid` = all threads of the target process + `options/event-fork` (threads created "
               "later are added by the kernel); off makes counts inexact",
       .default_value = "on"},
      {.name = "id_filter",
       .type = T::kBool,
       .help = "for `raw_syscalls:*`: event filter `id == __NR_<target>`; off records every syscall of the "
               "process (counts inexact)",
       .default_value = "on"},
      common::at_option("on a user function: an uprobe event at its entry (`p:` in `uprobe_events`) or a return "
                        "probe (`r:`, the kernel's uretprobe: it replaces the return address at entry and fires "
                        "when the function returns)"),
      {.name = "read",
       .type = T::kChoice,
       .help = "read the buffers back after every traced block (outside the timed region), or only in `drain()` "
               "(then a small `buffer_kb` loses events, which are counted)",
       .default_value = "disable",
       .words = {"disable", "end"}},
      ecbs_option("handlers on the probe point: the event enabled in `ecbs` instances, this one and `ecbs - 1` "
                  "extra instances `tracebench-<pid>-[<n>-]h<i>` with the same filters (a handler-count sweep for "
                  "`tracebench model fit`); event probes only, not `kMarker` or the function tracer",
                  kMaxEcbs),
      extra_predicate_option("with ecbs > 1: the extra instances record every event too (`true`, each checked to "
                             "hold what the first holds), or carry the event filter `common_pid == -1`, evaluated "
                             "on every event and never true (`false`, each checked empty)"),
  };
  return schema;
}

Status parse_spec_options(const AttachSpec& spec, FtraceConfig* out) {
  OptionValues v;
  TB_TRY(tracebench::option_values("ftrace", option_schema(), spec, &v));
  FtraceConfig c;
  if (v.has("buffer_kb")) c.buffer_kb = v.number("buffer_kb");
  c.clock = v.text("clock");
  c.overwrite = v.text("mode") == "overwrite";
  if (v.has("event")) c.event = v.text("event");
  c.pid_filter = v.on("pid_filter");
  c.id_filter = v.on("id_filter");
  c.consume_on_disable = v.text("read") == "disable";
  c.ecbs = static_cast<unsigned>(v.number("ecbs"));
  c.extra_predicate = v.text("extra_predicate") == "true";
  c.extra_predicate_given = v.given("extra_predicate");
  c.at_return = v.text("at") == "return";
  *out = std::move(c);
  return Status::ok();
}

// ---------------------------------------------------------------- probes

Availability probe_function_tracer() {
  if (!tracing_dir()) return Availability::no("tracefs is not mounted and could not be mounted");
  std::string name = common::owned_name("fprobe");
  tracefs_instance* inst = tracefs_instance_create(name.c_str());
  if (!inst) return Availability::no("cannot create a tracefs instance: " + std::string(std::strerror(errno)));
  Status st = try_function_tracer(inst, "");
  tracefs_tracer_clear(inst);
  tracefs_instance_destroy(inst);
  tracefs_instance_free(inst);
  if (!st) return Availability::no(st.message());
  return Availability::yes();
}

namespace {
extern "C" __attribute__((noinline, used)) void tb_ftrace_feature_probe_site(void) { asm volatile(""); }

nlohmann::json feature(const Status& st) {
  nlohmann::json j{{"ok", st.is_ok()}};
  if (!st) j["reason"] = st.message();
  return j;
}
}  // namespace

nlohmann::json probe_features() {
  nlohmann::json f = nlohmann::json::object();
  if (!tracing_dir()) return f;
  std::string name = common::owned_name("features");
  tracefs_instance* inst = tracefs_instance_create(name.c_str());
  if (!inst) return f;
  // Static event: enable and disable syscalls:sys_enter_getpid.
  {
    Status st = Status::ok();
    if (tracefs_event_enable(inst, "syscalls", "sys_enter_getpid") < 0)
      st = errno_status("enable syscalls:sys_enter_getpid", errno);
    tracefs_event_disable(inst, "syscalls", "sys_enter_getpid");
    f["static_events"] = feature(st);
  }
  // trace_marker: one write.
  {
    Status st = Status::ok();
    char* path = tracefs_instance_get_file(inst, "trace_marker");
    int fd = path ? open(path, O_WRONLY | O_CLOEXEC) : -1;
    if (fd < 0 || write(fd, "x", 1) != 1) st = errno_status("write trace_marker", errno);
    if (fd >= 0) close(fd);
    tracefs_put_tracing_file(path);
    f["trace_marker"] = feature(st);
  }
  // uprobe event on a function of this binary: create, destroy.
  {
    std::string file;
    std::uint64_t offset = 0;
    Status st = address_to_file_offset(getpid(), reinterpret_cast<std::uintptr_t>(&tb_ftrace_feature_probe_site), &file,
                                       &offset);
    if (st) {
      std::string ev = common::owned_event_name("features");
      tracefs_dynevent* d = tracefs_uprobe_alloc(kGroup, ev.c_str(), file.c_str(), offset, nullptr);
      errno = 0;
      if (!d || tracefs_dynevent_create(d) < 0) st = errno_status("create uprobe event " + ev, errno ? errno : EIO);
      if (d) {
        tracefs_dynevent_destroy(d, true);
        tracefs_dynevent_free(d);
      }
    }
    f["uprobe_events"] = feature(st);
  }
  f["function_tracer"] = feature(try_function_tracer(inst, ""));
  tracefs_tracer_clear(inst);
  tracefs_instance_destroy(inst);
  tracefs_instance_free(inst);
  return f;
}

// ---------------------------------------------------------------- tracer

FtraceTracer::FtraceTracer() { tracefs_set_loglevel(TEP_LOG_NONE); }
FtraceTracer::~FtraceTracer() { teardown(); }

std::string_view FtraceTracer::description() const {
  return "Linux Ftrace via libtracefs in a private instance: static events, trace_marker, uprobe "
         "events, function tracer; read back with libtraceevent";
}

Availability FtraceTracer::available() {
  if (geteuid() != 0) return Availability::no("ftrace needs root (tracefs is root-only); run as root");
  const char* dir = tracing_dir();
  if (!dir)
    return Availability::no(
        "tracefs is not mounted at /sys/kernel/tracing and mounting it failed: "
        "mount -t tracefs nodev /sys/kernel/tracing");
  std::string name = common::owned_name("probe");
  tracefs_instance* inst = tracefs_instance_create(name.c_str());
  if (!inst)
    return Availability::no("cannot create a tracefs instance (" + std::string(std::strerror(errno)) +
                            "); the kernel needs CONFIG_TRACING with instances");
  bool ok = tracefs_file_exists(inst, "trace_marker");
  tracefs_instance_destroy(inst);
  tracefs_instance_free(inst);
  if (!ok) return Availability::no("tracefs instance has no trace_marker");
  // Tried once per process (it creates and removes an instance and a uprobe).
  static const nlohmann::json features = probe_features();
  features_ = features;
  return Availability::yes();
}

std::size_t FtraceTracer::max_payload_bytes(const ProbePoint& probe, const std::string& action) const {
  if (probe.kind != ProbeKind::kMarker) return Tracer::max_payload_bytes(probe, action);
  std::size_t limit = ftrace::max_payload_bytes();  // one write into a throw-away instance, once per process
  return limit ? limit : Tracer::max_payload_bytes(probe, action);
}

bool FtraceTracer::supports(const ProbePoint& probe) const {
  switch (probe.kind) {
    case ProbeKind::kSyscall:
    case ProbeKind::kMarker:
    case ProbeKind::kKernelFunction:
    case ProbeKind::kKmodTracepoint: return true;
    case ProbeKind::kUserFunction: return probe.address != 0;
    case ProbeKind::kUsdt: return probe.target.find(':') != std::string::npos;
    default: return false;
  }
}

std::map<std::string, std::string> FtraceTracer::versions() const {
  std::map<std::string, std::string> v;
  v["libtracefs"] = TRACEBENCH_LIBTRACEFS_VERSION;
  v["libtraceevent"] = TRACEBENCH_LIBTRACEEVENT_VERSION;
  return v;
}

Status FtraceTracer::setup_pid_filter(pid_t pid) {
  // set_event_pid holds thread ids; list every current thread of the target
  // and let event-fork add threads created later.
  std::string tids;
  for (int t : process_threads(pid)) tids += std::to_string(t) + " ";
  if (tids.empty()) return Status::error("pid " + std::to_string(pid) + " has no threads in /proc");
  TB_TRY(write_instance_file(instance_, "set_event_pid", tids));
  if (tracefs_option_enable(instance_, TRACEFS_OPTION_EVENT_FORK) < 0)
    return errno_status("enable option event-fork in " + instance_name_, errno);
  if (function_) {
    if (Status s = write_instance_file(instance_, "set_ftrace_pid", tids); !s)
      return Status::error(s.message() + " (function tracing refused by this kernel; use the VM lab)");
    // set_ftrace_pid follows new threads only with function-fork.
    if (tracefs_option_enable(instance_, TRACEFS_OPTION_FUNCTION_FORK) < 0)
      return errno_status("enable option function-fork in " + instance_name_, errno);
  }
  applied_["set_event_pid"] = tids;
  return Status::ok();
}

Status FtraceTracer::setup_uprobe(const AttachSpec& spec) {
  pid_t pid = spec.pid ? spec.pid : getpid();
  std::string file;
  std::uint64_t offset = 0, semaphore = 0;
  const bool usdt = spec.probe.kind == ProbeKind::kUsdt;
  if (usdt)
    TB_TRY(common::usdt_site(pid, spec.probe.target, &file, &offset, &semaphore));
  else
    TB_TRY(address_to_file_offset(pid, spec.probe.address, &file, &offset));
  const std::string base = common::owned_event_name("");
  const std::string ev = event_name_for(base, g_instance_seq.fetch_add(1), spec.probe.target);
  std::string where;
  TB_TRY(common::uprobe_location(file, offset, semaphore, &where));
  errno = 0;
  int made = -1;
  if (semaphore) {
    // An SDT site guarded by its semaphore: the uprobe raises it while the
    // event is enabled (`path:0xOFFSET(0xSEMAPHORE)`, as perf probe writes
    // an sdt_ event).  libtracefs's uprobe has no reference counter: the
    // line goes to uprobe_events as is, and libtracefs takes the event back
    // to destroy it like the others.
    const std::string line = "p:" + std::string(kGroup) + "/" + ev + " " + where + "\n";
    if (tracefs_instance_file_append(nullptr, "uprobe_events", line.c_str()) == static_cast<int>(line.size())) {
      uprobe_ = tracefs_dynevent_get(TRACEFS_DYNEVENT_UPROBE, kGroup, ev.c_str());
      if (!uprobe_) {  // made but not taken back: removed here, not left behind
        const int err = errno ? errno : ENOENT;
        tracefs_instance_file_append(nullptr, "uprobe_events", ("-:" + std::string(kGroup) + "/" + ev + "\n").c_str());
        errno = err;
      }
    }
    made = uprobe_ ? 0 : -1;
  } else {
    Status st = make_uprobe_event(kGroup, ev, file, offset, config_.at_return, &uprobe_);
    if (!st)
      return Status::error("create uprobe " + std::string(kGroup) + ":" + ev + " at " + where + ": " + st.message() +
                           "; the kernel needs CONFIG_UPROBE_EVENTS");
    made = 0;
  }
  if (made < 0) {
    int err = errno ? errno : EIO;
    std::string extra = last_tracefs_error(nullptr);
    return Status::error("create uprobe " + std::string(kGroup) + ":" + ev + " at " + where + ": " +
                         std::strerror(err) + (extra.empty() ? "" : " (" + extra + ")") +
                         "; the kernel needs CONFIG_UPROBE_EVENTS (a semaphore: Linux 4.20 or later)");
  }
  // A many-probe workload: an event on each further site, named as this one.
  TB_TRY(more_sites_.create(pid, spec.probe.more_sites, kGroup, config_.at_return, [&](const ProbePoint::Site& site) {
    return event_name_for(base, g_instance_seq.fetch_add(1), site.symbol);
  }));
  system_ = kGroup;
  event_ = ev;
  applied_[usdt ? "usdt" : config_.at_return ? "uretprobe" : "uprobe"] = where;
  if (more_sites_.size()) applied_["more_sites"] = std::to_string(more_sites_.size());
  return Status::ok();
}

Status FtraceTracer::setup_event(const AttachSpec& spec) {
  const ProbePoint& p = spec.probe;
  switch (p.kind) {
    case ProbeKind::kSyscall: {
      std::string ev = config_.event.empty() ? "syscalls:sys_enter_" + p.target : config_.event;
      auto colon = ev.find(':');
      system_ = ev.substr(0, colon);
      event_ = ev.substr(colon + 1);
      break;
    }
    case ProbeKind::kKmodTracepoint: {
      auto colon = p.target.find(':');
      if (colon == std::string::npos)
        return Status::error("kmod tracepoint target '" + p.target + "' is not system:event");
      system_ = p.target.substr(0, colon);
      event_ = p.target.substr(colon + 1);
      break;
    }
    case ProbeKind::kMarker:
      system_ = "ftrace";
      event_ = "print";
      marker_ = true;
      break;
    case ProbeKind::kKernelFunction:
      system_ = "ftrace";
      event_ = "function";
      function_ = true;
      break;
    case ProbeKind::kUserFunction:
    case ProbeKind::kUsdt: TB_TRY(setup_uprobe(spec)); break;
    default: return Status::error("ftrace cannot attach to probe kind " + std::string(to_string(p.kind)));
  }
  if (!marker_ && !function_ && !tracefs_event_file_exists(instance_, system_.c_str(), event_.c_str(), "enable"))
    return Status::error("tracefs event " + system_ + ":" + event_ +
                         " does not exist on this kernel (see /sys/kernel/tracing/available_events)");
  return Status::ok();
}

namespace {

// The instance's trace clocks ("[local] global counter ..." in trace_clock;
// the top instance's when `inst` is null); they are the same in every instance.
Status check_clock(tracefs_instance* inst, const std::string& clock) {
  char* clocks = tracefs_instance_file_read(inst, "trace_clock", nullptr);
  std::string all = clocks ? clocks : "";
  free(clocks);
  std::istringstream in(all);
  std::string tok, list;
  bool found = false;
  while (in >> tok) {
    if (tok.front() == '[') tok = tok.substr(1, tok.size() - 2);
    list += (list.empty() ? "" : " ") + tok;
    found |= tok == clock;
  }
  if (found) return Status::ok();
  return Status::error("option clock=" + clock + " is not a trace clock of this kernel; have: " + list);
}

// What the options name must exist in this kernel before anything is
// attached (the plan calls validate()): the syscall probe's event and the
// trace clock.  Without tracefs the attach says so.
Status check_kernel_offers(const AttachSpec& spec, const FtraceConfig& config) {
  if (!tracing_dir()) return Status::ok();
  if (spec.probe.kind == ProbeKind::kSyscall) {
    const std::string ev = config.event.empty() ? "syscalls:sys_enter_" + spec.probe.target : config.event;
    const auto colon = ev.find(':');
    const std::string system = ev.substr(0, colon), event = ev.substr(colon + 1);
    if (!tracefs_event_file_exists(nullptr, system.c_str(), event.c_str(), "enable"))
      return Status::error("tracefs event " + ev + (config.event.empty() ? "" : " (option event)") +
                           " does not exist on this kernel (see " + tracing_dir() + "/available_events)");
  }
  return check_clock(nullptr, config.clock);
}

}  // namespace

Status FtraceTracer::validate(const AttachSpec& spec) const {
  if (!supports(spec.probe))
    return Status::error("ftrace does not support probe " + spec.probe.name + " (" +
                         std::string(to_string(spec.probe.kind)) + ")");
  FtraceConfig config;
  TB_TRY(parse_spec_options(spec, &config));
  std::string action = spec.action;
  if (action == "default") action = spec.probe.kind == ProbeKind::kMarker ? "payload" : "count";
  if (action != "count" && action != "payload")
    return Status::error("ftrace action '" + spec.action + "' unknown; actions: count, payload");
  if (action == "payload" && spec.probe.kind != ProbeKind::kMarker)
    return Status::error("ftrace action 'payload' needs a marker probe; use count");
  if (!config.event.empty() && spec.probe.kind != ProbeKind::kSyscall)
    return Status::error("ftrace option event= applies to syscall probes only");
  TB_TRY(common::check_at_return("ftrace", config.at_return, spec.probe));
  if ((config.ecbs > 1 || config.extra_predicate_given) && !spec.probe.more_sites.empty())
    return Status::error("ftrace option " +
                         (config.ecbs > 1 ? "ecbs=" + std::to_string(config.ecbs) : std::string("extra_predicate")) +
                         " applies to one site; " + spec.probe.name + " has " +
                         std::to_string(1 + spec.probe.more_sites.size()) + " (an event each)");
  if (config.ecbs > 1 || config.extra_predicate_given) {
    // N handlers = one event enabled in N instances; what is not an event
    // cannot be swept that way.
    const char* why = spec.probe.kind == ProbeKind::kMarker
                          ? "a trace_marker write is recorded by the one instance it is written to"
                      : spec.probe.kind == ProbeKind::kKernelFunction
                          ? "the function tracer is an instance's current_tracer, not an event"
                          : nullptr;
    if (why)
      return Status::error("ftrace option " +
                           (config.ecbs > 1 ? "ecbs=" + std::to_string(config.ecbs) : std::string("extra_predicate")) +
                           " applies to event probes (syscall, user function, kmod tracepoint), not " +
                           spec.probe.name + ": " + why);
  }
  return check_kernel_offers(spec, config);
}

Status FtraceTracer::attach(const AttachSpec& spec) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (instance_) return Status::error("ftrace: attach() called twice; teardown() first");
  TB_TRY(validate(spec));  // probe, options, action
  FtraceConfig config;
  TB_TRY(parse_spec_options(spec, &config));
  if (!tracing_dir()) return Status::error("tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing");

  config_ = config;
  spec_ = spec;
  recorded_ = lost_ = other_events_ = payload_verified_ = payload_bad_events_ = payload_short_events_ = reads_ =
      lost_before_reset_ = 0;
  payload_checked_events_ = payload_kept_bytes_ = 0;
  payload_problem_.clear();
  first_other_.clear();
  applied_.clear();

  const int seq = g_instance_seq.fetch_add(1);
  TB_TRY(create_instance(seq));
  auto fail = [this](Status st) {
    teardown();
    return st;
  };
  // Nothing is recorded until enable().
  if (tracefs_trace_off(instance_) < 0) return fail(errno_status("tracing_on=0 in " + instance_name_, errno));
  Status st = setup_event(spec);
  if (st) st = configure_buffer(spec);
  if (st) st = setup_filters(spec);
  if (st) st = load_event_format();
  // Option ecbs: the same event in ecbs - 1 more instances, named so the
  // leftovers cleanup knows them as this process's.
  for (unsigned i = 2; st && i <= config_.ecbs; ++i) {
    std::string name = common::owned_name((seq ? std::to_string(seq) + "-" : std::string()) + "h" + std::to_string(i));
    std::string filter = config_.extra_predicate ? (applied_.count("filter") ? applied_["filter"] : "") : kFalseFilter;
    st = add_extra(name, filter);
  }
  if (st) st = open_toggle();
  if (!st) return fail(st);
  applied_["instance"] = instance_name_;
  applied_["event"] = system_ + ":" + event_;
  applied_["clock"] = config_.clock;
  applied_["mode"] = config_.overwrite ? "overwrite" : "discard";
  applied_["buffer_kb"] = std::to_string(tracefs_instance_get_buffer_size(instance_, 0));
  if (!extras_.empty() && !config_.extra_predicate) applied_["extra_filter"] = kFalseFilter;
  return Status::ok();
}

// This process's instance number `seq`, created afresh.
Status FtraceTracer::create_instance(int seq) {
  instance_name_ = common::owned_name(seq ? std::to_string(seq) : "");
  if (tracefs_instance_exists(instance_name_.c_str())) {
    std::string n = instance_name_;
    instance_name_.clear();
    return Status::error("tracefs instance " + n + " already exists; run `tracebench cleanup`");
  }
  instance_ = tracefs_instance_create(instance_name_.c_str());
  if (!instance_) {
    int err = errno;
    instance_name_.clear();
    return errno_status("create tracefs instance", err);
  }
  return Status::ok();
}

// The instance's buffer size, clock and mode, and the function tracer
// defined (not enabled until enable()).
Status FtraceTracer::configure_buffer(const AttachSpec& spec) {
  if (config_.buffer_kb) TB_TRY(write_instance_file(instance_, "buffer_size_kb", std::to_string(config_.buffer_kb)));
  TB_TRY(check_clock(instance_, config_.clock));
  TB_TRY(write_instance_file(instance_, "trace_clock", config_.clock));
  if ((config_.overwrite ? tracefs_option_enable(instance_, TRACEFS_OPTION_OVERWRITE)
                         : tracefs_option_disable(instance_, TRACEFS_OPTION_OVERWRITE)) < 0)
    return errno_status("set option overwrite in " + instance_name_, errno);
  if (function_) {
    TB_TRY(try_function_tracer(instance_, spec.probe.target));
    tracefs_tracer_clear(instance_);  // defined but not enabled until enable()
  }
  return Status::ok();
}

// The pid filter (this process, or spec.pid) and, on raw_syscalls, the
// syscall id filter; exact_ says whether only the workload's events can be
// recorded.
Status FtraceTracer::setup_filters(const AttachSpec& spec) {
  exact_ = true;
  if (!marker_) {
    pid_t pid = spec.pid ? spec.pid : getpid();
    if (config_.pid_filter) {
      TB_TRY(setup_pid_filter(pid));
    } else {
      exact_ = false;  // other processes can hit the same event
    }
  }
  if (system_ == "raw_syscalls") {
    // raw_syscalls fire for every syscall; without an id filter the thread's
    // other syscalls are recorded too.
    bool filtered = false;
    if (config_.id_filter && spec.probe.kind == ProbeKind::kSyscall) {
      long nr = syscall_number(spec.probe.target);
      if (nr < 0)
        return Status::error("no syscall number known for '" + spec.probe.target + "'; pass --option id_filter=off");
      std::string filter = "id == " + std::to_string(nr);
      if (tracefs_event_file_write(instance_, system_.c_str(), event_.c_str(), "filter", filter.c_str()) < 0)
        return errno_status("set filter '" + filter + "' on " + system_ + ":" + event_, errno);
      applied_["filter"] = filter;
      filtered = true;
    }
    if (!filtered) exact_ = false;
  }
  return Status::ok();
}

// libtraceevent's handle with the formats of our event (after the uprobe
// exists), and the event's id.
Status FtraceTracer::load_event_format() {
  const char* systems[] = {system_.c_str(), "ftrace", nullptr};
  tep_ = tracefs_local_events_system(nullptr, systems);
  if (!tep_) return Status::error("libtraceevent: cannot parse the formats of system " + system_);
  tep_event* e = tep_find_event_by_name(tep_, system_.c_str(), event_.c_str());
  if (!e) return Status::error("libtraceevent: no format for " + system_ + ":" + event_);
  event_id_ = e->id;
  TB_TRY(more_sites_.load_ids(tep_, system_.c_str()));
  if (marker_ && !tep_find_field(e, "buf")) return Status::error("ftrace:print has no buf field");
  return Status::ok();
}

// The file enable() and disable() write: marker writes are gated by
// tracing_on, events by their enable file (the buffer itself then stays on).
Status FtraceTracer::open_toggle() {
  if (!marker_ && tracefs_trace_on(instance_) < 0) return errno_status("tracing_on=1 in " + instance_name_, errno);
  if (function_) return Status::ok();
  char* path = marker_ ? tracefs_instance_get_file(instance_, "tracing_on")
                       : tracefs_event_get_file(instance_, system_.c_str(), event_.c_str(), "enable");
  toggle_fd_ = path ? open(path, O_WRONLY | O_CLOEXEC) : -1;
  int err = errno;
  tracefs_put_tracing_file(path);
  if (toggle_fd_ < 0) return errno_status("open the enable file of " + system_ + ":" + event_, err);
  return more_sites_.open_toggles(instance_, system_.c_str());
}

Status FtraceTracer::add_extra(const std::string& name, const std::string& filter) {
  if (tracefs_instance_exists(name.c_str()))
    return Status::error("tracefs instance " + name + " already exists; run `tracebench cleanup`");
  tracefs_instance* inst = tracefs_instance_create(name.c_str());
  if (!inst) return errno_status("create tracefs instance " + name, errno);
  extras_.push_back(Extra{inst, name});  // teardown() removes it from here on
  if (tracefs_trace_off(inst) < 0) return errno_status("tracing_on=0 in " + name, errno);
  if (!tracefs_event_file_exists(inst, system_.c_str(), event_.c_str(), "enable"))
    return Status::error("tracefs event " + system_ + ":" + event_ + " is missing in instance " + name);
  // Configured as the first instance is, so the handlers differ only in their filter.
  if (config_.buffer_kb) TB_TRY(write_instance_file(inst, "buffer_size_kb", std::to_string(config_.buffer_kb)));
  TB_TRY(write_instance_file(inst, "trace_clock", config_.clock));
  if ((config_.overwrite ? tracefs_option_enable(inst, TRACEFS_OPTION_OVERWRITE)
                         : tracefs_option_disable(inst, TRACEFS_OPTION_OVERWRITE)) < 0)
    return errno_status("set option overwrite in " + name, errno);
  if (auto it = applied_.find("set_event_pid"); it != applied_.end()) {
    TB_TRY(write_instance_file(inst, "set_event_pid", it->second));
    if (tracefs_option_enable(inst, TRACEFS_OPTION_EVENT_FORK) < 0)
      return errno_status("enable option event-fork in " + name, errno);
  }
  if (!filter.empty() && tracefs_event_file_write(inst, system_.c_str(), event_.c_str(), "filter", filter.c_str()) < 0)
    return errno_status("set filter '" + filter + "' on " + system_ + ":" + event_ + " in " + name, errno);
  if (tracefs_trace_on(inst) < 0) return errno_status("tracing_on=1 in " + name, errno);
  char* path = tracefs_event_get_file(inst, system_.c_str(), event_.c_str(), "enable");
  int fd = path ? open(path, O_WRONLY | O_CLOEXEC) : -1;
  int err = errno;
  tracefs_put_tracing_file(path);
  if (fd < 0) return errno_status("open the enable file of " + system_ + ":" + event_ + " in " + name, err);
  extras_.back().toggle_fd = fd;
  return Status::ok();
}

std::vector<std::string> FtraceTracer::extra_instance_names() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& x : extras_) names.push_back(x.name);
  return names;
}

Status FtraceTracer::enable() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!instance_) return Status::error("ftrace: enable() before attach()");
  if (function_) {
    TB_TRY(try_function_tracer(instance_, ""));
  } else if (pwrite(toggle_fd_, "1", 1, 0) != 1) {
    return errno_status("enable " + system_ + ":" + event_ + " in " + instance_name_, errno);
  }
  enabled_ = true;
  TB_TRY(more_sites_.toggle(true));
  for (const auto& x : extras_)
    if (pwrite(x.toggle_fd, "1", 1, 0) != 1)
      return errno_status("enable " + system_ + ":" + event_ + " in " + x.name, errno);
  return Status::ok();
}

Status FtraceTracer::disable() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!instance_) return Status::error("ftrace: disable() before attach()");
  if (function_) {
    // Changing current_tracer resets the instance's buffer (and its stats),
    // so stop recording, read what the function tracer recorded, keep the
    // lost count, and only then switch back to nop.
    if (tracefs_trace_off(instance_) < 0) return errno_status("tracing_on=0 in " + instance_name_, errno);
    enabled_ = false;
    TB_TRY(read_back());
    lost_before_reset_ = lost_;
    if (tracefs_tracer_clear(instance_) < 0) return errno_status("current_tracer=nop in " + instance_name_, errno);
    if (tracefs_trace_on(instance_) < 0) return errno_status("tracing_on=1 in " + instance_name_, errno);
    return Status::ok();
  }
  if (pwrite(toggle_fd_, "0", 1, 0) != 1)
    return errno_status("disable " + system_ + ":" + event_ + " in " + instance_name_, errno);
  TB_TRY(more_sites_.toggle(false));
  for (const auto& x : extras_)
    if (pwrite(x.toggle_fd, "0", 1, 0) != 1)
      return errno_status("disable " + system_ + ":" + event_ + " in " + x.name, errno);
  enabled_ = false;
  if (config_.consume_on_disable) return read_back();
  return Status::ok();
}

namespace {
struct ReadContext {
  int event_id;
  const MoreSiteEvents* more;  // a many-probe workload's further sites' events
  bool marker;
  std::size_t payload;
  tep_format_field* buf_field;
  std::uint64_t recorded = 0, other = 0, checked = 0, verified = 0, bad = 0, short_events = 0;
  std::size_t kept = 0;       // length kept in the first truncated record
  std::string first_problem;  // the first mismatch or truncation, in words
  std::string first_other;    // the first record of another event
};

int on_record(tep_event* event, tep_record* record, int /*cpu*/, void* arg) {
  auto* ctx = static_cast<ReadContext*>(arg);
  if (event->id != ctx->event_id && !ctx->more->has_id(event->id)) {
    if (ctx->other++ == 0) ctx->first_other = std::string(event->system) + ":" + event->name;
    return 0;
  }
  ++ctx->recorded;
  if (ctx->marker && ctx->payload) {
    const char* data = static_cast<const char*>(record->data) + ctx->buf_field->offset;
    int avail_i = record->size - ctx->buf_field->offset;
    std::size_t avail = avail_i > 0 ? static_cast<std::size_t>(avail_i) : 0;
    // Kernel stores payload + "\n\0" (maybe padded); strlen bounds the text.
    std::size_t len = strnlen(data, avail);
    if (len > 0 && data[len - 1] == '\n') --len;
    ++ctx->checked;
    std::size_t good = payload_matching_prefix(data, std::min(len, ctx->payload));
    if (len != ctx->payload) {
      // The kernel kept another length than the workload wrote (the
      // marker's limit); never counted as verified.
      if (ctx->short_events++ == 0) ctx->kept = len;
      if (ctx->first_problem.empty())
        ctx->first_problem = "ftrace:print kept " + std::to_string(len) + " of " + std::to_string(ctx->payload) +
                             " bytes; the trace_marker limit here is " + std::to_string(ftrace::max_payload_bytes());
    } else if (good != len) {
      ++ctx->bad;
      if (ctx->first_problem.empty())
        ctx->first_problem = "ftrace:print byte " + std::to_string(good) + " differs from the payload pattern";
    } else {
      ctx->verified += len;
    }
  }
  return 0;
}
}  // namespace

Status FtraceTracer::read_back() {
  if (!instance_ || !tep_) return Status::error("ftrace: nothing attached to read back");
  ReadContext ctx{event_id_, &more_sites_, marker_, spec_.payload_bytes, nullptr};
  if (marker_) {
    tep_event* e = tep_find_event(tep_, event_id_);
    ctx.buf_field = e ? tep_find_field(e, "buf") : nullptr;
    if (!ctx.buf_field) return Status::error("ftrace:print has no buf field");
  }
  errno = 0;
  if (tracefs_iterate_raw_events(tep_, instance_, nullptr, 0, on_record, &ctx) < 0)
    return errno_status("read back the raw buffers of " + instance_name_, errno ? errno : EIO);
  ++reads_;
  recorded_ += ctx.recorded;
  if (other_events_ == 0 && ctx.other) first_other_ = ctx.first_other;
  other_events_ += ctx.other;
  payload_checked_events_ += ctx.checked;
  payload_verified_ += ctx.verified;
  payload_bad_events_ += ctx.bad;
  if (payload_short_events_ == 0 && ctx.short_events) payload_kept_bytes_ = ctx.kept;
  payload_short_events_ += ctx.short_events;
  if (payload_problem_.empty()) payload_problem_ = ctx.first_problem;
  std::uint64_t lost = 0;
  TB_TRY(read_lost(instance_, instance_name_, &lost));
  lost_ = lost_before_reset_ + lost;
  // The extra handlers' instances: only events (never a marker), counted apart.
  for (auto& x : extras_) {
    ReadContext xc{event_id_, &more_sites_, false, 0, nullptr};
    errno = 0;
    if (tracefs_iterate_raw_events(tep_, x.instance, nullptr, 0, on_record, &xc) < 0)
      return errno_status("read back the raw buffers of " + x.name, errno ? errno : EIO);
    x.recorded += xc.recorded;
    x.other += xc.other;
    TB_TRY(read_lost(x.instance, x.name, &x.lost));
  }
  return Status::ok();
}

// Events the kernel dropped since the instance was created: overwritten
// (overrun), never written because the buffer was full (dropped events) or
// lost to nested commits (commit overrun).
Status FtraceTracer::read_lost(tracefs_instance* inst, const std::string& name, std::uint64_t* lost) const {
  char* dir = tracefs_instance_get_dir(inst);
  if (!dir) return errno_status("locate the directory of " + name, errno);
  std::string base = std::string(dir) + "/per_cpu";
  tracefs_put_tracing_file(dir);
  DIR* d = opendir(base.c_str());
  if (!d) return errno_status("open " + base, errno);
  std::uint64_t total = 0;
  while (dirent* e = readdir(d)) {
    if (strncmp(e->d_name, "cpu", 3) != 0) continue;
    std::istringstream in(read_text(base + "/" + e->d_name + "/stats"));
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(0, colon);
      if (key == "overrun" || key == "commit overrun" || key == "dropped events")
        total += std::strtoull(line.c_str() + colon + 1, nullptr, 10);
    }
  }
  closedir(d);
  *lost = total;
  return Status::ok();
}

namespace {
// Bytes of one entry of `e` before any payload: the end of its last fixed
// field (common fields included).  A marker's `buf` is a zero-length array
// at the end, to which the caller adds the payload.
std::uint64_t fixed_entry_bytes(const tep_event* e) {
  std::uint64_t end = 0;
  for (const tep_format_field* list : {e->format.common_fields, e->format.fields})
    for (const tep_format_field* f = list; f; f = f->next)
      end = std::max<std::uint64_t>(end, static_cast<std::uint64_t>(f->offset) + static_cast<std::uint64_t>(f->size));
  return end;
}

std::uint64_t subbuf_bytes(tracefs_instance* inst) {
  // buffer_subbuf_size_kb exists from Linux 6.8 on; before, a sub-buffer is a page.
  char* text = tracefs_instance_file_read(inst, "buffer_subbuf_size_kb", nullptr);
  std::uint64_t kb = text ? std::strtoull(text, nullptr, 10) : 0;
  free(text);
  return kb ? kb * 1024 : static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}
}  // namespace

// Without buffer_kb, one block's records must fit the per-CPU buffer that
// disable() reads back after the block: at the kernel's default (1410 KiB on
// 6.18) a block of 1 KiB marker writes overwrote about half of itself.  The
// firing thread's events land in its CPU's buffer; the size applies to every
// CPU (the instance's buffer_size_kb), within auto_buffer_bound_kb().
Status FtraceTracer::plan_block(std::uint64_t events_per_block) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!instance_ || !tep_) return Status::error("ftrace: plan_block() before attach()");
  // The user's size holds; read=end keeps every block until drain(), which
  // no per-block size describes; the function tracer records other functions.
  if (config_.buffer_kb || !config_.consume_on_disable || function_) return Status::ok();
  const tep_event* e = tep_find_event(tep_, event_id_);
  if (!e) return Status::error("ftrace: no format for " + system_ + ":" + event_);
  std::uint64_t entry = fixed_entry_bytes(e) + (marker_ ? spec_.payload_bytes + 2 : 0);  // "\n" and NUL
  const std::uint64_t record = ring_record_bytes(entry);
  const std::uint64_t now_kb = static_cast<std::uint64_t>(tracefs_instance_get_buffer_size(instance_, 0));
  const unsigned cpus = static_cast<unsigned>(std::max(1L, sysconf(_SC_NPROCESSORS_CONF)));
  const std::uint64_t bound = auto_buffer_bound_kb(cpus, config_.ecbs);
  const std::uint64_t need = buffer_kb_for(events_per_block, record, subbuf_bytes(instance_), now_kb, UINT64_MAX);
  const std::uint64_t kb = std::min(need, std::max(bound, now_kb));
  applied_["buffer_kb_reason"] = std::to_string(events_per_block) + " events per block x " + std::to_string(record) +
                                 " B records" +
                                 (kb < need ? ", capped at the bound " + std::to_string(bound) + " KiB" : "");
  if (kb == now_kb) return Status::ok();
  TB_TRY(write_instance_file(instance_, "buffer_size_kb", std::to_string(kb)));
  for (const auto& x : extras_) TB_TRY(write_instance_file(x.instance, "buffer_size_kb", std::to_string(kb)));
  applied_["buffer_kb"] = std::to_string(tracefs_instance_get_buffer_size(instance_, 0));
  return Status::ok();
}

Status FtraceTracer::drain() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!instance_) return Status::error("ftrace: drain() before attach()");
  if (enabled_) TB_TRY(disable());
  return read_back();
}

EventCounts FtraceTracer::counts() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  EventCounts c;
  c.recorded = recorded_;
  c.lost = lost_;
  c.exact = exact_;
  // Records of another event in our instance should not exist.
  c.tracer_errors = other_events_;
  if (other_events_)
    c.tracer_error_detail = std::to_string(other_events_) + " records of another event than " + system_ + ":" + event_ +
                            " in " + instance_name_ + " (first: " + first_other_ + ")";
  // Option ecbs: every extra handler saw what the first saw (recorded or
  // lost), or with a false predicate nothing.  Where other activity reaches
  // the event (inexact), the instances' enable files flip one after the
  // other, so only the false ones can be held to a number.
  const std::uint64_t first = recorded_ + lost_;
  for (std::size_t i = 0; i < extras_.size(); ++i) {
    const Extra& x = extras_[i];
    const std::uint64_t seen = x.recorded + x.lost;
    const std::uint64_t want = config_.extra_predicate ? first : 0;
    std::uint64_t bad = x.other;
    if ((config_.extra_predicate ? exact_ : true) && seen != want) bad += seen > want ? seen - want : want - seen;
    if (!bad) continue;
    if (c.tracer_errors == 0)
      c.tracer_error_detail =
          "handler " + std::to_string(i + 2) + " of " + std::to_string(config_.ecbs) + " (instance " + x.name +
          ", extra_predicate=" + (config_.extra_predicate ? "true" : "false") + ") recorded " +
          std::to_string(x.recorded) + " + lost " + std::to_string(x.lost) + " (+ " + std::to_string(x.other) +
          " of another event), expected " + std::to_string(want) + (config_.extra_predicate ? " as handler 1" : "");
    c.tracer_errors += bad;
  }
  if (marker_ && spec_.payload_bytes) {
    // The print event holds the bytes the workload wrote to trace_marker.
    c.payload_source = PayloadSource::kWorkload;
    c.payload_checked_events = payload_checked_events_;
    c.payload_mismatched_events = payload_bad_events_;
    c.payload_truncated_events = payload_short_events_;
    c.payload_kept_bytes = payload_kept_bytes_;
    c.payload_mismatch_detail = payload_problem_;
    c.payload_verified = payload_verified_;
  }
  return c;
}

nlohmann::json FtraceTracer::details() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  nlohmann::json j = nlohmann::json::object();
  if (!features_.empty()) j["features"] = features_;
  if (applied_.empty()) return j;  // not attached
  for (const auto& [k, v] : applied_) j["config"][k] = v;
  j["read_passes"] = reads_;
  if (spec_.probe.kind == ProbeKind::kUserFunction) j["sites"] = 1 + more_sites_.size();
  j["other_records"] = other_events_;
  put_handler_count(&j, config_.ecbs, config_.extra_predicate);
  if (config_.ecbs > 1) {
    // Per handler, the first (this instance) then the extra instances.
    nlohmann::json rec = nlohmann::json::array({recorded_}), lost = nlohmann::json::array({lost_});
    nlohmann::json names = nlohmann::json::array({instance_name_});
    for (const auto& x : extras_) {
      rec.push_back(x.recorded);
      lost.push_back(x.lost);
      names.push_back(x.name);
    }
    j["handler_records"] = rec;
    j["handler_lost"] = lost;
    j["handler_instances"] = names;
  }
  if (marker_) {
    j["payload_bytes_per_event"] = spec_.payload_bytes;
    j["marker_max_payload_bytes"] = ftrace::max_payload_bytes();
  }
  return j;
}

std::string FtraceTracer::marker_file() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!instance_ || !marker_) return {};
  char* path = tracefs_instance_get_file(instance_, "trace_marker");
  std::string s = path ? path : "";
  tracefs_put_tracing_file(path);
  return s;
}

void FtraceTracer::destroy_instance(tracefs_instance* inst, bool disable_event) noexcept {
  tracefs_trace_off(inst);
  if (disable_event) tracefs_event_disable(inst, system_.c_str(), event_.c_str());
  if (function_) tracefs_tracer_clear(inst);
  // rmdir fails with EBUSY while a trace_marker / pipe is still open; the
  // workload closes its fd before teardown, retry briefly anyway.
  for (int i = 0; i < 50; ++i) {
    if (tracefs_instance_destroy(inst) == 0 || errno != EBUSY) break;
    usleep(20000);
  }
  tracefs_instance_free(inst);
}

void FtraceTracer::teardown() noexcept {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (toggle_fd_ >= 0) {
    close(toggle_fd_);
    toggle_fd_ = -1;
  }
  // Their enable files open would keep the instance (rmdir: EBUSY).
  more_sites_.clear();
  const bool event = !system_.empty() && !marker_ && !function_;
  // The extra handlers' instances first: the uprobe they enable goes below.
  for (auto& x : extras_) {
    if (x.toggle_fd >= 0) close(x.toggle_fd);
    destroy_instance(x.instance, event);
  }
  extras_.clear();
  if (instance_) {
    destroy_instance(instance_, event);
    instance_ = nullptr;
  }
  if (uprobe_) {
    tracefs_dynevent_destroy(uprobe_, true);
    tracefs_dynevent_free(uprobe_);
    uprobe_ = nullptr;
  }
  if (tep_) {
    tep_free(tep_);
    tep_ = nullptr;
  }
  enabled_ = false;
  marker_ = function_ = false;
  lost_before_reset_ = 0;
  event_id_ = -1;
  instance_name_.clear();
}

}  // namespace tracebench::ftrace

TRACEBENCH_REGISTER_TRACER(ftrace, [] { return std::make_unique<tracebench::ftrace::FtraceTracer>(); });
// Instances and dynamic events of dead runs of every tracefs-based adapter
// (ftrace, kprobes, perf's uprobes): one naming scheme, one cleanup.
TRACEBENCH_REGISTER_CLEANUP(tracefs, [](bool remove) { return tracebench::common::cleanup_tracefs_leftovers(remove); });
