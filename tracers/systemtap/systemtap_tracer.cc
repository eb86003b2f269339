#include "systemtap_tracer.h"

#include <signal.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tracebench/handler_count.h"
#include "tracers/common/names.h"
#include "tracers/common/proc.h"
#include "tracers/common/return_probe.h"
#include "build_id.h"
#include "tracebench_kmod_abi.h"
#include "compile.h"

namespace fs = std::filesystem;

namespace tracebench::systemtap {

namespace {

Handlers handlers_of(const OptionValues& v) {
  return Handlers{.count = static_cast<unsigned>(v.number(kEcbsOption)),
                  .extra_holds = v.text(kExtraPredicateOption) == "true"};
}

}  // namespace

const OptionSchema& SystemtapTracer::option_schema() const {
  static const OptionSchema schema = {
      {.name = "ready_timeout_s",
       .type = OptionSpec::Type::kUint,
       .help = "seconds each enable() waits for staprun (stapbpf) to load the script and run its begin probe, and "
               "for its probe to be live (outside the timed region; a guest under TCG takes seconds)",
       .default_value = "120",
       .min = 1,
       .max = 3600},
      ecbs_option("probe handlers on the probe point (the count action): the extra ones are further probes of the "
                  "script on the same point, each with its own counter, filtering as `extra_predicate` says (a "
                  "handler-count sweep for `tracebench model fit`; each count is a script compiled of its own)",
                  kMaxHandlers),
      extra_predicate_option("with ecbs > 1: the extra handlers' filter holds (`true`: each counts every event, "
                             "checked) or never holds (`false`: a pid no task has, compared on every event)"),
      common::at_option("on a user function: `process(...).function(...)` at its entry, or its `.return` probe "
                        "(a uretprobe: the kernel replaces the return address at entry and fires when the "
                        "function returns)")};
  return schema;
}

Status SystemtapTracer::validate(const AttachSpec& spec) const {
  OptionValues v;
  TB_TRY(option_values(std::string(name()), option_schema(), spec, &v));
  if (spec.payload_bytes > 0) return Status::error("systemtap: the scripts record no payload (payload 0 only)");
  StapScript s;
  // The build-ids and the executable are known at attach(); any stands in here.
  return make_script(spec.probe, spec.action, ScriptTargets{.kmod_build_id = "0", .exe_path = "/", .exe_build_id = "0"},
                     &s, runtime_, handlers_of(v), v.text("at") == "return");
}

namespace {

// What the script is compiled against: the loaded companion module's
// build-id, or the probed process's executable (as the process sees its
// path) and that file's build-id.
Status script_targets(const ProbePoint& p, Runtime runtime, long pid, ScriptTargets* t) {
  if (p.kind == ProbeKind::kKernelFunction && runtime == Runtime::kModule) t->kmod_build_id = loaded_kmod_build_id();
  if (p.kind != ProbeKind::kUserFunction && p.kind != ProbeKind::kUsdt) return Status::ok();
  if (Status s = common::executable_of(static_cast<pid_t>(pid), &t->exe_path); !s)
    return Status::error("systemtap: " + s.message());
  t->exe_build_id = elf_build_id(t->exe_path);
  if (t->exe_build_id.empty())
    return Status::error("systemtap: " + t->exe_path +
                         " has no GNU build-id note: its uprobes' scripts are named by it (link with --build-id)");
  return Status::ok();
}

}  // namespace

Status SystemtapTracer::attach(const AttachSpec& spec) {
  teardown();
  counts_ = EventCounts{};
  sessions_ = 0;
  transport_failures_ = 0;
  self_fired_total_ = 0;
  restarts_ = 0;
  per_session_.clear();
  warnings_.clear();
  TB_TRY(validate(spec));
  OptionValues v;
  TB_TRY(option_values(std::string(name()), option_schema(), spec, &v));
  ready_timeout_s_ = static_cast<unsigned>(v.number("ready_timeout_s"));
  pid_ = spec.pid ? spec.pid : getpid();
  ScriptTargets targets;
  TB_TRY(script_targets(spec.probe, runtime_, pid_, &targets));
  TB_TRY(make_script(spec.probe, spec.action, targets, &script_, runtime_, handlers_of(v), v.text("at") == "return"));
  action_ = spec.action;
  records_read_ = 0;
  target_ = spec.probe.target;
  user_fn_ = spec.probe.kind == ProbeKind::kUserFunction ? spec.probe.address : 0;
  const HostFacts facts = probe_host();
  if (Availability a = judge(facts, runtime_); !a.ok) return Status::error("systemtap: " + a.reason);
  staprun_ = runtime_ == Runtime::kBpf ? facts.stapbpf : facts.staprun;
  if (!facts.module_dir.empty()) {
    ko_ = facts.module_dir + "/" + compiled_file(script_);
    if (access(ko_.c_str(), R_OK) != 0)
      return Status::error("systemtap: " + ko_ +
                           " was not compiled for this kernel (the VM lab compiles the scripts of every supported "
                           "workload, and with a `model` command the handler counts its sweep runs: tracebench "
                           "systemtap build --runtime " +
                           std::string(to_string(runtime_)) + " [--model-sweep])");
    module_source_ = "precompiled";
  } else {
    CompileTree tree;
    TB_TRY(prepare_tree(facts.build_tree, &tree));
    // The companion module's .ko is not known here (the VM lab passes it
    // to `tracebench systemtap build`): its probes compile there.
    TB_TRY(compile_module(tree, script_, CompileFiles{.exe = targets.exe_path}, &compile_seconds_, &compile_cached_));
    ko_ = tree.modules + "/" + compiled_file(script_);
    module_source_ = compile_cached_ ? "cached" : "compiled here";
  }
  syscall_nr_ = script_.takes_syscall_nr ? syscall_number(spec.probe.target) : -1;
  if (script_.liveness == Liveness::kSemaphore) {
    std::string provider, name;
    usdt_parts(spec.probe.target, &provider, &name);
    TB_TRY(semaphore_.locate(static_cast<pid_t>(pid_), targets.exe_path, provider, name));
  }
  if (script_.liveness == Liveness::kLiveThread) {
    if (pid_ != getpid())
      return Status::error(
          "systemtap: the BPF runtime's user-function probe sees itself live from a thread of the "
          "probed process: the process must be this one");
    live_thread_.start(reinterpret_cast<void (*)()>(user_fn_));
    params_ = {"-x", std::to_string(live_thread_.tid())};  // target(): the liveness thread, not counted
  } else if (runtime_ == Runtime::kBpf) {
    params_ = {"-x", std::to_string(pid_)};  // target(); a syscall's number is compiled in
  } else {
    params_ = {"tb_pid=" + std::to_string(pid_)};
    if (script_.takes_syscall_nr) params_.push_back("tb_nr=" + std::to_string(syscall_nr_));
  }
  char tmpl[64];
  std::snprintf(tmpl, sizeof tmpl, "/tmp/%s-XXXXXX", common::owned_name("stap").c_str());
  if (!mkdtemp(tmpl)) return Status::error("systemtap: mkdtemp " + std::string(tmpl) + " failed");
  dir_ = tmpl;
  return Status::ok();
}

namespace {

// Runs `attempt` every 2 ms until it says done, fails, or `timeout_s`
// passes; the timeout's error is `expired(attempts made)`.  The one wait
// loop of the adapter's liveness checks.
Status poll(unsigned timeout_s, const std::function<Status(bool* done)>& attempt,
            const std::function<std::string(std::uint64_t attempts)>& expired) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (std::uint64_t n = 1;; ++n) {
    bool done = false;
    TB_TRY(attempt(&done));
    if (done) return Status::ok();
    if (std::chrono::steady_clock::now() > deadline) return Status::error(expired(n));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// A probe on a module's function is placed when the runtime has relocated
// the module's addresses, which it does after the begin probe ran, in a
// worker (staprun's ready line comes first: events fired between the two
// were seen in the VM lab to go uncounted).  It is in the kernel's kprobe
// list ("<addr> k <symbol>+0x0 <module>") once placed, and armed when
// that line has no [DISABLED].
Status wait_kprobe_listed(const std::string& symbol, unsigned timeout_s) {
  const std::string list = "/sys/kernel/debug/kprobes/list", want = " " + symbol + "+0x0";
  return poll(
      timeout_s,
      [&](bool* armed) {
        if (access(list.c_str(), R_OK) != 0)
          return Status::error("systemtap: cannot read " + list + " to see the probe on " + symbol +
                               " placed (mount -t debugfs none /sys/kernel/debug)");
        const std::string text = common::read_text(list);
        const auto at = text.find(want);
        const std::string line = at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
        *armed = !line.empty() && line.find("DISABLED") == std::string::npos && line.find("GONE") == std::string::npos;
        return Status::ok();
      },
      [&](std::uint64_t) {
        return "systemtap: the probe on " + symbol + " was not placed within " + std::to_string(timeout_s) +
               " s of the script's start (" + list + ")";
      });
}

// Fires one event of the probe from this thread (the script's pid filter
// sees it): the syscall, the user function (called as the workloads call
// it, without arguments), or the module's target through its ioctl.
class SelfFire {
 public:
  SelfFire(long syscall_nr, std::uintptr_t user_fn) : nr_(syscall_nr), fn_(user_fn) {}
  ~SelfFire() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status fire() {
    if (nr_ >= 0) {
      ::syscall(nr_);
      return Status::ok();
    }
    if (fn_ != 0) {
      reinterpret_cast<void (*)()>(fn_)();
      return Status::ok();
    }
    if (fd_ < 0 && (fd_ = ::open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC)) < 0)
      return Status::error(std::string("systemtap: open ") + TB_KMOD_DEVICE_PATH + ": " + std::strerror(errno));
    tb_kmod_fire f{};
    f.event_id = TB_KMOD_EV_TARGET;
    f.count = 1;
    f.batch = 1;
    if (::ioctl(fd_, TB_KMOD_IOC_FIRE, &f) != 0)
      return Status::error(std::string("systemtap: fire the module's target: ") + std::strerror(errno));
    return Status::ok();
  }

 private:
  long nr_;
  std::uintptr_t fn_;
  int fd_ = -1;
};

// The numbers of a live count line ("12" or, with extra handlers that
// hold, "12 12 11").
std::vector<std::uint64_t> live_counts(const std::string& text) {
  std::vector<std::uint64_t> v;
  std::istringstream in(text);
  for (std::uint64_t n; in >> n;) v.push_back(n);
  return v;
}

// Fires events until every counter of the script's live count is above 0:
// the probes are live (the begin probe's line and the kprobe list come
// before it, and events fired in between went uncounted in the VM lab).
// `counted` gets the counts then: events of this start, not of the workload.
Status wait_counting(const std::string& module, SelfFire* self, unsigned timeout_s,
                     std::vector<std::uint64_t>* counted) {
  const std::string live = "/proc/systemtap/" + module + "/" + kLiveCountFile;
  return poll(
      timeout_s,
      [&](bool* counting) {
        TB_TRY(self->fire());
        *counted = live_counts(common::read_text(live));
        *counting =
            !counted->empty() && std::none_of(counted->begin(), counted->end(), [](std::uint64_t c) { return c == 0; });
        return Status::ok();
      },
      [&](std::uint64_t fired) {
        return "systemtap: the script counted none of " + std::to_string(fired) + " events fired at its probe within " +
               std::to_string(timeout_s) + " s (" + live + ")";
      });
}

// The BPF runtime: stapbpf runs the begin probe and attaches the programs;
// the script prints kLiveLine on the first kLiveSyscallNr it sees from the
// target, which only an attached program can.  Those calls are not the
// workload's syscall: nothing is taken off the count.
Status wait_bpf_live(const std::string& dir, unsigned timeout_s) {
  return poll(
      timeout_s,
      [&](bool* live) {
        ::syscall(kLiveSyscallNr);
        *live = common::read_text(dir + "/out.txt").find(kLiveLine) != std::string::npos;
        return Status::ok();
      },
      [&](std::uint64_t made) {
        return "systemtap: stapbpf's probe saw none of " + std::to_string(made) + " syscalls " +
               std::to_string(kLiveSyscallNr) + " made within " + std::to_string(timeout_s) + " s (no '" + kLiveLine +
               "' in its output)";
      });
}

// Waits for the USDT site's semaphore to be raised: the runtime raises it
// once it has placed the site's probe in the process.
Status wait_semaphore(const UsdtSemaphore& sem, unsigned timeout_s) {
  return poll(
      timeout_s,
      [&](bool* raised) {
        unsigned v = 0;
        TB_TRY(sem.read(&v));
        *raised = v > 0;
        return Status::ok();
      },
      [&](std::uint64_t) {
        return "systemtap: the USDT site's semaphore was not raised within " + std::to_string(timeout_s) +
               " s of the script's start (its probe was not placed in this process)";
      });
}

}  // namespace

Status SystemtapTracer::enable() {
  if (dir_.empty()) return Status::error("systemtap: enable() before attach()");
  TB_TRY(session_.start(staprun_, ko_, params_, dir_, ready_timeout_s_, runtime_));
  self_counted_.clear();
  if (script_.liveness != Liveness::kLiveCount) {
    Status s = wait_live(ready_timeout_s_);
    if (!s) session_.kill_now();
    return s;
  }
  SelfFire self(script_.takes_syscall_nr ? syscall_nr_ : -1, user_fn_);
  // A session whose probe counted nothing at all was seen in the VM lab (a
  // whole block's events missing, the other sessions exact): such a
  // session is stopped and started again, once (details.restarted_sessions).
  for (int attempt = 0;; ++attempt) {
    Status s = script_.needs_kmod ? wait_kprobe_listed(target_, ready_timeout_s_) : Status::ok();
    if (s) s = wait_counting(script_.module, &self, attempt == 0 ? 5 : ready_timeout_s_, &self_counted_);
    if (s) return Status::ok();
    session_.kill_now();
    if (attempt == 1) return s;
    ++restarts_;
    self_counted_.clear();
    TB_TRY(session_.start(staprun_, ko_, params_, dir_, ready_timeout_s_));
  }
}

Status SystemtapTracer::wait_live(unsigned timeout_s) {
  switch (script_.liveness) {
    case Liveness::kSemaphore: return wait_semaphore(semaphore_, timeout_s);
    case Liveness::kLiveSyscall: return wait_bpf_live(dir_, timeout_s);
    case Liveness::kLiveThread:
      return live_thread_.fire_until(
          [this] { return common::read_text(dir_ + "/out.txt").find(kLiveLine) != std::string::npos; }, timeout_s);
    case Liveness::kLiveCount: break;
  }
  return Status::error("systemtap: no liveness check for this script");
}

Status SystemtapTracer::disable() {
  SessionOutput o;
  TB_TRY(session_.stop(&o));
  ++sessions_;
  if (!o.count_seen) {
    if (!counts_.tracer_errors++)
      counts_.tracer_error_detail =
          "the script's end probe printed no count (session " + std::to_string(sessions_) + ")";
  }
  // Skipped probes are firings whose handler did not run (reentrancy, a
  // busy lock, MAXACTION): events the script did not count.
  counts_.lost += o.skipped;
  // Events enable() fired itself to see the probe live (as the first
  // handler counted them) are not the workload's.
  const std::uint64_t self_fired = self_counted_.empty() ? 0 : self_counted_.front();
  if (o.count < self_fired) {
    if (!counts_.tracer_errors++)
      counts_.tracer_error_detail = "a session counted " + std::to_string(o.count) + " events, fewer than the " +
                                    std::to_string(self_fired) + " its start fired itself";
  } else {
    o.count -= self_fired;
  }
  self_fired_total_ += self_fired;
  if (action_ == "record") {
    // The events whose record came back: numbers past the liveness events,
    // each once; the others the transport lost.
    const std::uint64_t read = records_in_range(o.records, self_fired, self_fired + o.count);
    counts_.recorded += read;
    counts_.lost += o.count - read;
    records_read_ += read;
  } else {
    counts_.recorded += o.count;
  }
  check_extra_handlers(o);
  if (o.errors) {
    if (!counts_.tracer_errors) counts_.tracer_error_detail = "stap reported errors: " + o.warnings;
    counts_.tracer_errors += o.errors;
  }
  // A transport failure loses output the adapter cannot name (records, and
  // in the VM lab once a session's count stopped with it): the session's
  // figures are not trusted.
  if (o.transport_failures) {
    if (!counts_.tracer_errors++)
      counts_.tracer_error_detail = "stap's transport failed " + std::to_string(o.transport_failures) +
                                    " time(s) in session " + std::to_string(sessions_) +
                                    ": its output (records, count) is incomplete";
  }
  transport_failures_ += o.transport_failures;
  per_session_.push_back(o.count);
  if (!o.warnings.empty() && warnings_.find(o.warnings) == std::string::npos)
    warnings_ += (warnings_.empty() ? "" : "; ") + o.warnings;
  return Status::ok();
}

std::uint64_t records_in_range(const std::vector<std::uint64_t>& records, std::uint64_t after, std::uint64_t last) {
  if (last <= after) return 0;
  std::vector<bool> seen(last - after, false);
  std::uint64_t n = 0;
  for (const std::uint64_t r : records)
    if (r > after && r <= last && !seen[r - after - 1]) {
      seen[r - after - 1] = true;
      ++n;
    }
  return n;
}

// Each extra handler counted what the first did (its filter holds: its own
// liveness events taken off) or nothing (it never holds); else the
// session's count is a tracer error, with which handler and what it saw.
void SystemtapTracer::check_extra_handlers(const SessionOutput& o) {
  const Handlers& h = script_.handlers;
  for (unsigned k = 1; k < h.count; ++k) {
    std::uint64_t n = k - 1 < o.extra.size() ? o.extra[k - 1] : kNoCount;
    if (n != kNoCount && h.extra_holds && k < self_counted_.size()) n -= std::min(n, self_counted_[k]);
    const std::uint64_t want = h.extra_holds ? o.count : 0;
    if (n == want) continue;
    if (!counts_.tracer_errors++)
      counts_.tracer_error_detail =
          "extra handler " + std::to_string(k) + " of session " + std::to_string(sessions_) + " counted " +
          (n == kNoCount ? std::string("nothing it printed") : std::to_string(n)) + ", not " + std::to_string(want) +
          (h.extra_holds ? " (its filter holds: every event the first handler counted)" : " (its filter never holds)");
  }
}

nlohmann::json SystemtapTracer::details() const {
  nlohmann::json d = {{"runtime", to_string(runtime_)},
                      {"module", script_.module},
                      {"module_source", module_source_},
                      {"compile_seconds", compile_seconds_},
                      {"sessions", sessions_}};
  d["liveness_events"] = self_fired_total_;
  d["restarted_sessions"] = restarts_;
  if (!warnings_.empty()) d["stap_warnings"] = warnings_;
  if (transport_failures_) d["transport_failures"] = transport_failures_;
  d["per_session"] = per_session_;
  if (script_.at_return) d["at"] = "return";
  if (action_ == "record") d["records_read"] = records_read_;
  put_handler_count(&d, script_.handlers.count, script_.handlers.extra_holds);
  return d;
}

void SystemtapTracer::teardown() noexcept {
  session_.kill_now();
  live_thread_.stop();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    dir_.clear();
  }
}

namespace {

// The module a stapio process runs, from its command line ("" when none of ours).
std::string stapio_module(const std::string& cmdline) {
  if (cmdline.find("stapio") == std::string::npos && cmdline.find("stapbpf") == std::string::npos) return {};
  const auto at = cmdline.find("tracebench_stap_");
  if (at == std::string::npos) return {};
  auto end = cmdline.find(".ko", at);
  if (end == std::string::npos) end = cmdline.find(".bo", at);
  return cmdline.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

std::vector<std::string> leftovers(bool remove) {
  std::vector<std::string> found;
  std::error_code ec;
  std::vector<std::string> held;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = common::read_text("/proc/" + pid + "/cmdline");
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    const std::string module = stapio_module(cmd);
    if (module.empty()) continue;
    held.push_back(module);
    // Ours while the tracebench that started it lives (stapio is its child).
    const std::string stat = common::read_text("/proc/" + pid + "/stat");
    long ppid = 0;
    const auto rp = stat.rfind(')');
    if (rp != std::string::npos) std::sscanf(stat.c_str() + rp + 1, " %*c %ld", &ppid);
    if (ppid > 1 && common::pid_alive(static_cast<pid_t>(ppid))) continue;
    found.push_back(std::string(cmd.find("stapbpf") != std::string::npos ? "stapbpf " : "stapio ") + pid + " (" +
                    module + ")");
    if (remove) ::kill(std::stol(pid), SIGTERM);  // runs the end probe and unloads the module
  }
  // Session folders (/tmp/tracebench-<pid>-stap-XXXXXX) of runs that are gone.
  for (const auto& e : fs::directory_iterator("/tmp", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find("-stap-") == std::string::npos) continue;
    const long owner = common::name_owner(name.substr(0, name.find("-stap-")));
    if (owner <= 0 || !common::owner_is_gone(owner)) continue;
    found.push_back("session folder " + e.path().string());
    if (remove) fs::remove_all(e.path(), ec);
  }
  for (const auto& e : fs::directory_iterator("/sys/module", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("tracebench_stap_", 0) != 0) continue;
    if (std::find(held.begin(), held.end(), name) != held.end()) continue;
    found.push_back("module " + name);
    if (remove) remove_module("", name);
  }
  return found;
}

}  // namespace tracebench::systemtap

TRACEBENCH_REGISTER_TRACER(systemtap, [] { return std::make_unique<tracebench::systemtap::SystemtapTracer>(); });
TRACEBENCH_REGISTER_TRACER(systemtap_bpf, [] {
  return std::make_unique<tracebench::systemtap::SystemtapTracer>(tracebench::systemtap::Runtime::kBpf);
});
TRACEBENCH_REGISTER_CLEANUP(systemtap, tracebench::systemtap::leftovers);
