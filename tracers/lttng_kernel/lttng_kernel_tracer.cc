#include "lttng_kernel_tracer.h"

#include "tracers/common/names.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lttng/lttng.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>

#include "tracebench/kallsyms.h"
#include "tracebench/system.h"
#include "tracers/lttng/ctl_call.h"
#include "tracers/lttng/ctl_status.h"
#include "tracers/lttng/sessiond.h"

namespace tracebench::lttng_kernel {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

lttng_domain kernel_domain() {
  lttng_domain dom;
  std::memset(&dom, 0, sizeof dom);
  dom.type = LTTNG_DOMAIN_KERNEL;
  dom.buf_type = LTTNG_BUFFER_GLOBAL;
  return dom;
}

// The names of a list of events (`list` returns their count, or a negative
// error), from a bounded call; `error` prefixes the reason of a failure.
Status event_names(const std::string& error, const std::function<int(lttng_event**)>& list,
                   std::vector<std::string>* names) {
  std::string all;
  TB_TRY(lttng::bounded_call(
      error, lttng::kCtlTimeout,
      [&](std::string* out) {
        lttng_event* events = nullptr;
        int n = list(&events);
        if (n < 0) return Status::error(error + ": " + lttng_strerror(n));
        for (int i = 0; i < n; ++i) out->append(events[i].name).push_back('\0');
        std::free(events);
        return Status::ok();
      },
      &all));
  for (std::size_t at = 0, end; (end = all.find('\0', at)) != std::string::npos; at = end + 1)
    names->push_back(all.substr(at, end - at));
  return Status::ok();
}

// The syscalls the kernel tracer instruments (its syscall table), or an
// error when the daemon has no kernel tracer.
Status kernel_syscalls(std::vector<std::string>* names) {
  return event_names(
      "the session daemon has no kernel tracer", [](lttng_event** e) { return lttng_list_syscalls(e); }, names);
}

// The kernel tracepoints LTTng has probes for (its loaded probe modules).
Status kernel_tracepoints(std::vector<std::string>* names) {
  lttng_domain dom = kernel_domain();
  lttng_handle* handle = lttng_create_handle(nullptr, &dom);
  if (!handle) return Status::error("lttng_kernel: cannot create a kernel-domain handle");
  Status s = event_names(
      "lttng_kernel: list kernel tracepoints", [&](lttng_event** e) { return lttng_list_tracepoints(handle, e); },
      names);
  lttng_destroy_handle(handle);
  return s;
}

constexpr const char* kChannel = "tracebench";

}  // namespace

Status plan_events(const ProbePoint& probe, const std::string& action, KernelEventPlan* out) {
  KernelEventPlan p;
  if (action != "record" && action != "function" && action != "default") {
    return Status::error("lttng_kernel: unknown action '" + action + "' (known: record, function)");
  }
  bool function = action == "function";
  if (probe.kind == ProbeKind::kKmodTracepoint) {
    // "tracebench:tracebench_fixed": LTTng names kernel events without the system.
    auto colon = probe.target.find(':');
    if (function || colon == std::string::npos) {
      return Status::error("lttng_kernel: " + probe.name +
                           (function ? ": action function applies to syscalls and kernel functions"
                                     : ": tracepoint target is not system:event"));
    }
    p.kind = KernelEventPlan::Kind::kTracepoint;
    p.name = probe.target.substr(colon + 1);
  } else if (probe.kind == ProbeKind::kSyscall && !function) {
    p.kind = KernelEventPlan::Kind::kSyscall;
    p.name = probe.target;
  } else if (probe.kind == ProbeKind::kSyscall || probe.kind == ProbeKind::kKernelFunction) {
    Status s = kernel_function_for(probe, &p.symbol);
    if (!s) return Status::error("lttng_kernel: " + s.message());
    p.kind = function ? KernelEventPlan::Kind::kKretprobe : KernelEventPlan::Kind::kKprobe;
    p.name = p.symbol;
    // A kprobe is not scoped by LTTng's process trackers: on a syscall's
    // entry function other processes' calls are recorded too.
    p.exact = probe.kind == ProbeKind::kKernelFunction;
  } else {
    return Status::error("lttng_kernel: probe " + probe.name +
                         " is not a syscall, kernel function or module tracepoint");
  }
  if (p.name.size() >= LTTNG_SYMBOL_NAME_LEN) return Status::error("lttng_kernel: name too long: " + p.name);
  *out = p;
  return Status::ok();
}

Status parse_kernel_spec_options(const AttachSpec& spec, lttng::LttngConfig* out) {
  return lttng::parse_spec_options(spec, out, /*user_space=*/false);
}

std::string kernel_tracer_missing() {
  std::error_code ec;
  if (fs::exists("/sys/module/lttng_tracer", ec)) return "";
  utsname u{};
  ::uname(&u);
  std::string release = u.release;
  if (!fs::exists("/proc/modules", ec)) {
    return "kernel " + release +
           " cannot load modules (no /proc/modules) and LTTng's kernel tracer is "
           "lttng-modules; run it in the VM lab: tracebench vm --lttng-modules";
  }
  fs::path dir = "/lib/modules/" + release;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("lttng-tracer.ko", 0) == 0) return "";
  }
  return "lttng-modules are not installed for kernel " + release + " (no lttng-tracer.ko under " + dir.string() +
         "); Debian's lttng-modules-dkms, or the VM lab: tracebench vm --lttng-modules";
}

LttngKernelTracer::~LttngKernelTracer() { teardown(); }

std::string_view LttngKernelTracer::description() const {
  return "LTTng kernel domain (lttng-modules) through liblttng-ctl: a syscall's entry+exit events, a kprobe or a "
         "kretprobe, the companion module's tracepoints, a recording session per traced block scoped to the "
         "process, the CTF trace read back with babeltrace2";
}

Availability LttngKernelTracer::available() {
  if (!lttng::ctf_plugin_present()) {
    return Availability::no("babeltrace2's ctf plugin is missing (apt-get install libbabeltrace2-0)");
  }
  if (std::string why = kernel_tracer_missing(); !why.empty()) return Availability::no(why);
  bool alive = false;
  if (Status s = lttng::probe_sessiond(&alive); !s) return Availability::no(s.message());
  if (alive) {
    std::vector<std::string> names;
    Status s = kernel_syscalls(&names);
    if (!s) return Availability::no(s.message() + " (a daemon started with --no-kernel, or by a non-root user)");
    return Availability::yes();
  }
  if (lttng::find_sessiond_binary().empty()) {
    return Availability::no("no lttng-sessiond is running and none is installed (apt-get install lttng-tools)");
  }
  if (::geteuid() != 0) return Availability::no("the kernel tracer needs a root lttng-sessiond; run as root");
  return Availability::yes();
}

bool LttngKernelTracer::supports(const ProbePoint& probe) const {
  return probe.kind == ProbeKind::kSyscall || probe.kind == ProbeKind::kKernelFunction ||
         probe.kind == ProbeKind::kKmodTracepoint;
}

std::map<std::string, std::string> LttngKernelTracer::versions() const {
  std::map<std::string, std::string> v = {{"liblttng-ctl", TRACEBENCH_LTTNG_CTL_VERSION},
                                          {"babeltrace2", lttng::babeltrace2_version()}};
  std::string ver = read_file_trimmed("/sys/module/lttng_tracer/version");
  if (!ver.empty()) v["lttng-modules"] = ver;
  return v;
}

Status LttngKernelTracer::validate(const AttachSpec& spec) const {
  lttng::LttngConfig config;
  TB_TRY(parse_kernel_spec_options(spec, &config));
  KernelEventPlan plan;
  return plan_events(spec.probe, spec.action, &plan);
}

Status LttngKernelTracer::attach(const AttachSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (attached_ || started_sessiond_) return Status::error("lttng_kernel: already attached (teardown() first)");
  lttng::LttngConfig config;
  TB_TRY(parse_kernel_spec_options(spec, &config));
  KernelEventPlan plan;
  TB_TRY(plan_events(spec.probe, spec.action, &plan));
  config_ = config;
  plan_ = plan;
  pid_ = spec.pid > 0 ? spec.pid : ::getpid();
  expect_ = lttng::TraceExpectation{};
  switch (plan_.kind) {
    case KernelEventPlan::Kind::kSyscall:
      expect_.event_name = "syscall_entry_" + plan_.name;
      expect_.paired_event_name = "syscall_exit_" + plan_.name;
      // The exit event carries the return value: getpid's is the pid.
      if (plan_.name == "getpid") expect_.int_fields.push_back({expect_.paired_event_name, "ret", pid_});
      if (plan_.name == "getppid" && pid_ == ::getpid()) {
        expect_.int_fields.push_back({expect_.paired_event_name, "ret", ::getppid()});
      }
      break;
    case KernelEventPlan::Kind::kKprobe: expect_.event_name = plan_.name; break;
    case KernelEventPlan::Kind::kKretprobe:
      expect_.event_name = plan_.name + "_entry";
      expect_.paired_event_name = plan_.name + "_exit";
      break;
    case KernelEventPlan::Kind::kTracepoint:
      expect_.event_name = plan_.name;
      expect_.kmod_pattern = true;
      if (plan_.name == "tracebench_payload") expect_.payload_bytes = spec.payload_bytes;
      break;
  }
  // A kprobe's events carry the probed address (`ip`): the function's.
  std::uint64_t address = 0;
  if (!plan_.symbol.empty() && kallsyms_lookup(plan_.symbol, &address) && address) {
    expect_.int_fields.push_back({expect_.event_name, "ip", static_cast<std::int64_t>(address)});
    if (!expect_.paired_event_name.empty()) {
      expect_.int_fields.push_back({expect_.paired_event_name, "ip", static_cast<std::int64_t>(address)});
    }
  }
  trace_ = lttng::TraceSummary{};
  discarded_events_ = lost_packets_ = 0;
  sessions_ = 0;
  open_ms_max_ = close_ms_max_ = 0;
  drained_ = false;

  if (std::string why = kernel_tracer_missing(); !why.empty()) return Status::error("lttng_kernel: " + why);
  TB_TRY(lttng::use_sessiond(/*kernel=*/true, &started_sessiond_));
  std::vector<std::string> syscalls;
  Status s = kernel_syscalls(&syscalls);
  if (!s) return Status::error("lttng_kernel: " + s.message());
  if (plan_.kind == KernelEventPlan::Kind::kSyscall &&
      std::find(syscalls.begin(), syscalls.end(), plan_.name) == syscalls.end()) {
    return Status::error("lttng_kernel: the kernel tracer has no syscall event '" + plan_.name +
                         "' (see `lttng list --kernel --syscall`)");
  }
  if (plan_.kind == KernelEventPlan::Kind::kTracepoint) {
    std::vector<std::string> tracepoints;
    TB_TRY(kernel_tracepoints(&tracepoints));
    if (std::find(tracepoints.begin(), tracepoints.end(), plan_.name) == tracepoints.end()) {
      return Status::error("lttng_kernel: LTTng has no probe for tracepoint '" + plan_.name +
                           "' (lttng-probe-tracebench is built by scripts/vm/build-lttng-modules.sh and loaded by "
                           "lttng-sessiond --extra-kmod-probes=tracebench; is the companion module loaded?)");
    }
  }
  std::string tmpl = std::string(lttng::kTempDirPrefix) + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return errno_status("mkdtemp " + tmpl, errno);
  trace_dir_ = tmpl;
  attached_ = true;
  // One session now, torn down at once: what can fail (the channel, the
  // probe's symbol, the tracker) fails here rather than in enable().
  TB_TRY(open_session());
  TB_TRY(close_session());
  std::error_code ec;
  fs::remove_all(fs::path(trace_dir_) / "0", ec);
  return Status::ok();
}

Status LttngKernelTracer::open_session() {
  auto t0 = Clock::now();
  std::string name = common::owned_name("k" + std::to_string(sessions_));
  std::string out = trace_dir_ + "/" + std::to_string(sessions_);
  ++sessions_;
  bool created = false;
  Status s = lttng::create_local_session("lttng_kernel", name, out, &created);
  if (created) session_ = name;  // destroy_session() destroys it from here on
  TB_TRY(s);

  lttng_domain dom = kernel_domain();
  std::unique_ptr<lttng_handle, void (*)(lttng_handle*)> handle(lttng_create_handle(session_.c_str(), &dom),
                                                                lttng_destroy_handle);
  if (!handle) return Status::error("lttng_kernel: cannot create a handle for " + session_);

  TB_TRY(lttng::track_only("lttng_kernel", session_, LTTNG_DOMAIN_KERNEL, pid_));

  lttng_channel* chan = lttng::channel_for(dom, config_, kChannel);
  if (!chan) return Status::error("lttng_kernel: cannot create a channel description");
  Status enabled = lttng::ctl_call("lttng_kernel: enable channel " + std::string(kChannel),
                                   [&] { return lttng_enable_channel(handle.get(), chan); });
  lttng_channel_destroy(chan);
  TB_TRY(enabled);

  lttng_event* ev = lttng_event_create();
  if (!ev) return Status::error("lttng_kernel: out of memory");
  std::snprintf(ev->name, sizeof ev->name, "%s", plan_.name.c_str());
  switch (plan_.kind) {
    case KernelEventPlan::Kind::kSyscall: ev->type = LTTNG_EVENT_SYSCALL; break;
    case KernelEventPlan::Kind::kTracepoint: ev->type = LTTNG_EVENT_TRACEPOINT; break;
    case KernelEventPlan::Kind::kKprobe:
    case KernelEventPlan::Kind::kKretprobe:
      // `--probe` is a kprobe, `--function` a kretprobe; both take the
      // location from attr.probe (attr.ftrace is the function tracer's).
      ev->type = plan_.kind == KernelEventPlan::Kind::kKprobe ? LTTNG_EVENT_PROBE : LTTNG_EVENT_FUNCTION;
      std::snprintf(ev->attr.probe.symbol_name, sizeof ev->attr.probe.symbol_name, "%s", plan_.symbol.c_str());
      break;
  }
  Status event = lttng::ctl_call("lttng_kernel: enable event " + plan_.name, [&] {
    return lttng_enable_event_with_exclusions(handle.get(), ev, kChannel, nullptr, 0, nullptr);
  });
  lttng_event_destroy(ev);
  TB_TRY(event);
  TB_TRY(lttng::ctl_call("lttng_kernel: start " + session_, [&] { return lttng_start_tracing(session_.c_str()); }));
  open_ms_max_ = std::max(open_ms_max_, lttng::ms_since(t0));
  return Status::ok();
}

Status LttngKernelTracer::close_session() {
  if (session_.empty()) return Status::ok();
  auto t0 = Clock::now();
  // Waits until the consumer daemon has written every sub-buffer out.  Like
  // every control call it runs in a child process (lttng/ctl_call.h), whose
  // getpid() for the command's credentials the session does not track.
  Status st = lttng::ctl_call(
      "lttng_kernel: stop " + session_, [&] { return lttng_stop_tracing(session_.c_str()); }, lttng::kStopTimeout);
  if (st) {
    lttng_domain dom = kernel_domain();
    lttng_handle* handle = lttng_create_handle(session_.c_str(), &dom);
    std::vector<lttng::ChannelFacts> chans;
    if (handle) st = lttng::list_channels("lttng_kernel: list channels of " + session_, handle, &chans);
    bool found = false;
    for (const auto& c : chans) {
      if (std::strcmp(c.name, kChannel) != 0 || !c.counters) continue;
      found = true;
      discarded_events_ += c.discarded_events;
      lost_packets_ += c.lost_packets;
      config_.subbuf_size = c.subbuf_size;  // what LTTng used
      config_.num_subbuf = c.num_subbuf;
    }
    if (handle) lttng_destroy_handle(handle);
    if (st && !found)
      st = Status::error("lttng_kernel: no discarded/lost counters for channel " + std::string(kChannel));
  }
  destroy_session();
  close_ms_max_ = std::max(close_ms_max_, lttng::ms_since(t0));
  return st;
}

void LttngKernelTracer::destroy_session() noexcept {
  if (session_.empty()) return;
  // Unregisters the probes; the trace stays on disk.
  (void)lttng::ctl_call("lttng_kernel: destroy session " + session_,
                        [&] { return lttng_destroy_session(session_.c_str()); });
  session_.clear();
}

Status LttngKernelTracer::enable() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!attached_) return Status::error("lttng_kernel: enable() before attach()");
  if (!session_.empty()) return Status::ok();
  drained_ = false;
  Status s = open_session();
  if (!s) destroy_session();
  return s;
}

Status LttngKernelTracer::disable() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!attached_) return Status::error("lttng_kernel: disable() before attach()");
  return close_session();
}

Status LttngKernelTracer::drain() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!attached_) return Status::error("lttng_kernel: drain() before attach()");
  TB_TRY(close_session());
  TB_TRY(lttng::read_traces(trace_dir_, expect_, &trace_));
  drained_ = true;
  // What the trace holds (payloads that differ, foreign events, entries and
  // exits that do not pair up) is reported in counts(); the judge decides.
  return Status::ok();
}

std::vector<ConsumerTask> LttngKernelTracer::consumer_tasks() const {
  std::vector<ConsumerTask> out;
  for (const auto& d : lttng::sessiond_family()) out.push_back({d.comm, static_cast<int>(d.pid), 0});
  return out;
}

EventCounts LttngKernelTracer::counts() {
  std::lock_guard<std::mutex> lock(mu_);
  EventCounts c;
  c.recorded = trace_.events;
  c.lost = discarded_events_;
  if (!expect_.paired_event_name.empty() && discarded_events_) {
    // Fires = (entries + exits + discarded) / 2, so the fires whose first
    // event was lost are (exits + discarded - entries) / 2.
    std::uint64_t both = trace_.paired_events + discarded_events_;
    c.lost = both > trace_.events ? (both - trace_.events) / 2 : 0;
  }
  // Overwrite mode loses whole sub-buffers (counted as packets), and kprobes
  // on a syscall function see other processes too.
  c.exact = plan_.exact && !config_.overwrite;
  lttng::report_trace(trace_, expect_, expect_.payload_bytes.value_or(0), &c);
  if (!expect_.paired_event_name.empty()) {
    // Every fire writes two events; with nothing discarded they pair up.
    std::uint64_t in_channel = trace_.events + trace_.paired_events + discarded_events_;
    bool pairs = discarded_events_ == 0 ? trace_.events == trace_.paired_events : in_channel % 2 == 0;
    if (plan_.exact && !config_.overwrite && !pairs) {
      c.tracer_errors += 1;
      c.tracer_error_detail += (c.tracer_error_detail.empty() ? "" : "; ") + std::to_string(trace_.events) + " " +
                               expect_.event_name + " and " + std::to_string(trace_.paired_events) + " " +
                               expect_.paired_event_name + " events with " + std::to_string(discarded_events_) +
                               " discarded do not pair up";
    }
  }
  return c;
}

nlohmann::json LttngKernelTracer::details() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json j;
  lttng::put_channel_details(&j, config_);
  if (!attached_ && sessions_ == 0) return j;  // never attached: the default channel only
  static const char* kinds[] = {"syscall", "kprobe", "kretprobe", "tracepoint"};
  j["instrumentation"] = kinds[static_cast<int>(plan_.kind)];
  j["event"] = expect_.event_name;
  if (!expect_.paired_event_name.empty()) j["paired_event"] = expect_.paired_event_name;
  if (!plan_.symbol.empty()) j["symbol"] = plan_.symbol;
  j["sessions"] = sessions_;
  j["session_open_ms_max"] = open_ms_max_;
  j["session_close_ms_max"] = close_ms_max_;
  j["sessiond_started_by_adapter"] = started_sessiond_ != 0;
  j["discarded_events"] = discarded_events_;
  j["lost_packets"] = lost_packets_;
  j["trace"] = lttng::to_json(trace_);
  return j;
}

void LttngKernelTracer::teardown() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  destroy_session();
  if (!trace_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(trace_dir_, ec);
    trace_dir_.clear();
  }
  // A daemon this process started is kept for the next attach and stopped at
  // exit (lttng::use_sessiond()); it unloads the modules it loaded then.
  started_sessiond_ = 0;
  attached_ = false;
}

// Leftovers (sessions tracebench-<pid>-k<n>, trace directories, a daemon this
// adapter started) have the user-space adapter's names: its cleanup removes them.
TRACEBENCH_REGISTER_TRACER(lttng_kernel, [] { return std::make_unique<LttngKernelTracer>(); });

}  // namespace tracebench::lttng_kernel
