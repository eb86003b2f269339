// stap script text per probe kind.  Only probes that need no kernel
// debuginfo are used (Debian's guest kernels ship none): the raw_syscalls
// tracepoint (stap reads its fields from the headers' trace/events), and
// kprobe.* (dwarfless kprobes, resolved by symbol name when the module loads).
#include "script.h"

#include <sys/syscall.h>

#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "tracers/common/return_probe.h"

namespace tracebench::systemtap {

// Syscalls without arguments only: enable() makes the syscall itself to see
// the probe live (SystemtapTracer::enable()), harmless for these alone.
long syscall_number(const std::string& name) {
  static const std::map<std::string, long> table = {
      {"getpid", SYS_getpid}, {"getppid", SYS_getppid},         {"gettid", SYS_gettid},
      {"getuid", SYS_getuid}, {"sched_yield", SYS_sched_yield},
  };
  auto it = table.find(name);
  return it == table.end() ? -1 : it->second;
}

std::string module_name(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("tracebench_stap_{:016x}", h);
}

const char* to_string(Runtime r) { return r == Runtime::kBpf ? "bpf" : "module"; }

std::string compiled_file(const StapScript& s) { return s.module + (s.runtime == Runtime::kBpf ? ".bo" : ".ko"); }

bool script_supports(const ProbePoint& probe, std::string* why, Runtime runtime) {
  std::string reason;
  if (runtime == Runtime::kBpf && probe.kind == ProbeKind::kUsdt) {
    // Seen in the VM lab: stapbpf places the site's uprobe through
    // uprobe_events without a reference counter and writes no semaphore,
    // so a guarded site's semaphore stays 0 and the site never fires.
    if (why)
      *why =
          "the BPF runtime (systemtap_bpf) does not raise a USDT site's semaphore (stapbpf places the "
          "uprobe without its reference counter), so a guarded site such as tracebench:hot never fires; "
          "USDT runs with the module runtime (-t systemtap)";
    return false;
  }
  if (runtime == Runtime::kBpf && probe.kind != ProbeKind::kSyscall && probe.kind != ProbeKind::kUserFunction) {
    // The companion module's function is probed through the module's
    // debuginfo (module("<.ko>").function()), which the module runtime
    // relocates when it loads; SystemTap 4.8's BPF backend was not tried
    // on it.
    if (why)
      *why = std::string("the BPF runtime (systemtap_bpf) is built for syscall entry (the ") +
             "raw_syscalls:sys_enter tracepoint) and user functions; " + std::string(to_string(probe.kind)) +
             " sites run with the module runtime (-t systemtap)";
    return false;
  }
  switch (probe.kind) {
    case ProbeKind::kSyscall:
      if (syscall_number(probe.target) >= 0) return true;
      reason = "syscall '" + probe.target +
               "': the adapter sees its probe live by making the syscall itself, "
               "so only syscalls without arguments (getpid, getppid, gettid, getuid, sched_yield)";
      break;
    case ProbeKind::kKernelFunction:
      if (probe.target.rfind("tracebench_", 0) == 0) return true;
      reason = "kprobe.function(\"" + probe.target +
               "\") needs the kernel's symbol table when stap compiles, and Debian's headers carry none (its "
               "System.map is a placeholder; the real one is in linux-image-<release>-dbg)";
      break;
    case ProbeKind::kKmodTracepoint:
      reason =
          "kernel.trace() finds tracepoints in the kernel headers' trace/events, and the companion module's "
          "header is not among them (its target function is probed instead: workload kmod_target)";
      break;
    case ProbeKind::kUserFunction:
      // The workloads call these functions without arguments; one that is
      // handed a buffer (a payload argument) is not called bare.
      if (probe.address != 0 && !probe.target.empty() && probe.payload_addr_arg < 0 && probe.payload_len_arg < 0)
        return true;
      reason = "user function '" + probe.target +
               "': the adapter calls it itself to see its probe live, so only this binary's functions that the "
               "suite's workloads call without arguments";
      break;
    case ProbeKind::kUsdt:
      if (usdt_parts(probe.target, nullptr, nullptr)) return true;
      reason = "USDT target '" + probe.target + "' is not provider:name";
      break;
    default: reason = std::string("SystemTap has no probe for ") + std::string(to_string(probe.kind)) + " sites here";
  }
  if (why) *why = reason;
  return false;
}

std::string stap_string(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

Status check_stap_path(const std::string& path) {
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return Status::error("systemtap: the executable's path holds a control character: stap cannot be given it");
    if (c == '*' || c == '?' || c == '[' || c == ']')
      return Status::error(fmt::format(
          "systemtap: the executable's path {} holds '{}', which stap's process(\"...\") reads as a wildcard (it "
          "would probe every file it matches): give a path without * ? [ ]",
          path, c));
  }
  return Status::ok();
}

namespace {

// The probe point of a user-space site in the executable at `exe`, every
// string quoted for stap (stap_string); a function's return probe when
// `at_return`.
std::string user_point(const ProbePoint& probe, const std::string& exe, bool at_return) {
  if (probe.kind == ProbeKind::kUserFunction)
    return fmt::format("process({}).function({}){}", stap_string(exe), stap_string(probe.target),
                       at_return ? ".return" : "");
  std::string provider, name;
  usdt_parts(probe.target, &provider, &name);
  return fmt::format("process({}).provider({}).mark({})", stap_string(exe), stap_string(provider), stap_string(name));
}

// The comment lines that name what the script was compiled against: a
// rebuilt module or executable is a different script (and module name).
Status build_lines(const ProbePoint& probe, const ScriptTargets& t, StapScript* s, std::string* lines) {
  if (probe.kind == ProbeKind::kKernelFunction) {
    if (t.kmod_build_id.empty())
      return Status::error("systemtap: " + probe.name +
                           ": the companion module is not loaded (its build-id names the script compiled for it)");
    *lines = "# companion module build-id " + t.kmod_build_id + "\n";
    s->needs_kmod = true;
  } else if (probe.kind == ProbeKind::kUserFunction || probe.kind == ProbeKind::kUsdt) {
    if (t.exe_path.empty() || t.exe_build_id.empty())
      return Status::error("systemtap: " + probe.name +
                           ": the executable's path and build-id are needed (its uprobes are compiled for that build)");
    *lines = "# executable build-id " + t.exe_build_id + "\n";
    s->exe_path = t.exe_path;
  }
  return Status::ok();
}

// The handlers after the first on the same probe point (Handlers), each
// with its own counter tb_extra<k>: their globals, probes and end-probe
// lines, and what the live count shows (every counter when they hold).  `holds`/`fails`: the filter
// of an extra handler that counts the workload's events or none.
struct ExtraHandlers {
  std::string globals, probes, end_lines;
  // The live count's format and arguments: every counter when the extra
  // handlers hold (each must count before a block starts), else the first.
  std::string live_format = "%d", live_args = "tb_hits";
};
ExtraHandlers extra_handlers(const std::string& point, const std::string& holds, const std::string& fails,
                             const Handlers& h) {
  ExtraHandlers x;
  for (unsigned k = 1; k < h.count; ++k) {
    const std::string counter = fmt::format("tb_extra{}", k);
    x.globals += fmt::format("global {} = 0\n", counter);
    x.probes += fmt::format("probe {} {{ if ({}) {}++ }}\n", point, h.extra_holds ? holds : fails, counter);
    x.end_lines += fmt::format("  printf(\"{}{} %d\\n\", {})\n", kExtraPrefix, k, counter);
    if (h.extra_holds) {
      x.live_format += " %d";
      x.live_args += ", " + counter;
    }
  }
  return x;
}

// A pid no task has (pids stop at 2^22): an extra handler's filter that
// never holds still compares a pid on every event.
constexpr const char* kNoPidOffset = "1073741824";

// What the first handler does with an event: count it, and for `record`
// also print a record of it (its number in the session) through the
// runtime's transport, which the adapter reads back.
std::string event_statement(const std::string& action) {
  if (action != "record") return "tb_hits++";
  return fmt::format("{{ tb_hits++; printf(\"{}%d\\n\", tb_hits) }}", kRecordPrefix);
}

// stapbpf runs it: stapbpf takes no script parameters, so what the module
// runtime gets at load time is compiled in or comes from target() (-x).
//  - syscall entry: the number compiled in, the pid target(); the
//    liveness syscall kLiveSyscallNr prints kLiveLine once;
//  - user function: target() is a thread of the probed process that calls
//    the function until kLiveLine; its first call names the process, whose
//    other threads' calls are counted.
std::string bpf_text(const ProbePoint& probe, const std::string& action, const std::string& lines,
                     const std::string& exe, const Handlers& handlers, bool at_return, Liveness* liveness) {
  std::string point, body, holds, fails;
  if (probe.kind == ProbeKind::kSyscall) {
    const long nr = syscall_number(probe.target);
    holds = fmt::format("pid() == target() && $id == {}", nr);
    fails = fmt::format("pid() == target() + {} && $id == {}", kNoPidOffset, nr);
    *liveness = Liveness::kLiveSyscall;
    point = "kernel.trace(\"raw_syscalls:sys_enter\")";
    body = fmt::format(
        "  if (pid() == target()) {{\n"
        "    if ($id == {nr}) {stmt}\n"
        "    else if ($id == {live} && tb_live == 0) {{ tb_live = 1; printf(\"{live_line}\\n\") }}\n"
        "  }}\n",
        fmt::arg("nr", syscall_number(probe.target)), fmt::arg("stmt", event_statement(action)),
        fmt::arg("live", kLiveSyscallNr), fmt::arg("live_line", kLiveLine));
  } else {
    *liveness = Liveness::kLiveThread;
    point = user_point(probe, exe, at_return);
    holds = "tb_live != 0 && pid() == tb_live && tid() != target()";
    fails = fmt::format("tb_live != 0 && pid() == tb_live + {}", kNoPidOffset);
    body = fmt::format(
        "  if (tid() == target()) {{\n"
        "    if (tb_live == 0) {{ tb_live = pid(); printf(\"{live_line}\\n\") }}\n"
        "  }} else if (tb_live != 0 && pid() == tb_live) {stmt}\n",
        fmt::arg("live_line", kLiveLine), fmt::arg("stmt", event_statement(action)));
  }
  const ExtraHandlers x = extra_handlers(point, holds, fails, handlers);
  return fmt::format(
      "# tracebench systemtap adapter: {kind} probe, action {action}; stap --runtime=bpf --compatible=4.1 -p4\n"
      "{lines}global tb_hits = 0\n"
      "global tb_live = 0\n{xglobals}"
      "probe begin {{ printf(\"{ready}\\n\") }}\n"
      "probe {point} {{\n{body}}}\n{xprobes}"
      "probe end {{{end_open}printf(\"{count}%d\\n\", tb_hits){end_close}}}\n",
      fmt::arg("kind", to_string(probe.kind)), fmt::arg("action", action), fmt::arg("lines", lines),
      fmt::arg("xglobals", x.globals), fmt::arg("ready", kReadyLine), fmt::arg("point", point), fmt::arg("body", body),
      fmt::arg("xprobes", x.probes), fmt::arg("end_open", x.end_lines.empty() ? " " : "\n  "),
      fmt::arg("count", kCountPrefix), fmt::arg("end_close", x.end_lines.empty() ? " " : "\n" + x.end_lines));
}

// staprun runs it: the pid (and the syscall number) are module parameters.
std::string module_text(const ProbePoint& probe, const std::string& action, const std::string& lines,
                        const std::string& exe, const Handlers& handlers, bool at_return, StapScript* s) {
  std::string point, filter = "pid() == tb_pid", globals = "global tb_pid = 0\n";
  s->liveness = Liveness::kLiveCount;
  if (probe.kind == ProbeKind::kSyscall) {
    // The tracepoint every syscall passes, filtered on the number given at load time.
    point = "kernel.trace(\"raw_syscalls:sys_enter\")";
    filter += " && $id == tb_nr";
    globals += "global tb_nr = -1\n";
    s->takes_syscall_nr = true;
  } else if (probe.kind == ProbeKind::kKernelFunction) {
    // The companion module's function, a probe on its debuginfo (its .ko,
    // found when stap compiles: kKmodPathToken).  A dwarfless
    // kprobe.module("tracebench").function() compiles too, but its kprobe
    // is never registered on the module's local symbol: the kernel's kprobe
    // list stays empty and the script counts nothing.
    point = fmt::format("module(\"{}\").function(\"{}\")", kKmodPathToken, probe.target);
  } else {
    // A uprobe on the executable's file (every process that maps it), the
    // pid filtered in the handler; a USDT site's semaphore is set by the
    // runtime for each process it finds.
    point = user_point(probe, exe, at_return);
    if (probe.kind == ProbeKind::kUsdt) s->liveness = Liveness::kSemaphore;
  }
  // Extra handlers that never hold compare the pid with tb_nopid, a
  // module parameter left at -1 (no task's), which stap cannot fold away.
  std::string fails = filter;
  fails.replace(0, std::string("pid() == tb_pid").size(), "pid() == tb_nopid");
  const ExtraHandlers x = extra_handlers(point, filter, fails, handlers);
  if (handlers.count > 1 && !handlers.extra_holds) globals += "global tb_nopid = -1\n";
  // The count readable while the script runs: enable() fires events of its
  // own until it sees one counted (the probe is live), and takes what it
  // saw counted off the session's count.
  const std::string extra = fmt::format("probe procfs(\"{}\").read {{ $value = sprintf(\"{}\\n\", {}) }}\n",
                                        kLiveCountFile, x.live_format, x.live_args);
  return fmt::format(
      "# tracebench systemtap adapter: {kind} probe, action {action}; stap -p4 {define}\n"
      "{lines}{globals}global tb_hits = 0\n{xglobals}"
      "probe begin {{ printf(\"{ready}\\n\") }}\n"
      "probe {point} {{ if ({filter}) {stmt} }}\n{xprobes}"
      "probe end {{{end_open}printf(\"{count}%d\\n\", tb_hits){end_close}}}\n{extra}",
      fmt::arg("kind", to_string(probe.kind)), fmt::arg("define", kCompileDefine), fmt::arg("action", action),
      fmt::arg("lines", lines), fmt::arg("globals", globals), fmt::arg("xglobals", x.globals),
      fmt::arg("ready", kReadyLine), fmt::arg("point", point), fmt::arg("filter", filter),
      fmt::arg("stmt", event_statement(action)), fmt::arg("xprobes", x.probes),
      fmt::arg("end_open", x.end_lines.empty() ? " " : "\n  "), fmt::arg("count", kCountPrefix),
      fmt::arg("end_close", x.end_lines.empty() ? " " : "\n" + x.end_lines), fmt::arg("extra", extra));
}

}  // namespace

bool usdt_parts(const std::string& target, std::string* provider, std::string* name) {
  const auto colon = target.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == target.size() ||
      target.find(':', colon + 1) != std::string::npos)
    return false;
  if (provider) *provider = target.substr(0, colon);
  if (name) *name = target.substr(colon + 1);
  return true;
}

Status make_script(const ProbePoint& probe, const std::string& action, const ScriptTargets& targets, StapScript* out,
                   Runtime runtime, Handlers handlers, bool at_return) {
  TB_TRY(common::check_at_return("systemtap", at_return, probe));
  if (handlers.count < 1 || handlers.count > kMaxHandlers)
    return Status::error(fmt::format("systemtap: {} handlers: 1..{}", handlers.count, kMaxHandlers));
  if (action != "count" && action != "record")
    return Status::error("systemtap: unknown action '" + action + "' (count, record)");
  if (action == "record" && handlers.count > 1)
    return Status::error("systemtap: extra handlers (ecbs) are built for the count action only");
  std::string why;
  if (!script_supports(probe, &why, runtime)) return Status::error("systemtap: " + probe.name + ": " + why);
  if (probe.kind == ProbeKind::kUserFunction || probe.kind == ProbeKind::kUsdt)
    TB_TRY(check_stap_path(targets.exe_path));
  StapScript s;
  s.runtime = runtime;
  std::string lines;
  TB_TRY(build_lines(probe, targets, &s, &lines));
  if (handlers.count == 1) handlers.extra_holds = true;  // no extra handler: nothing to say of them
  s.handlers = handlers;
  s.at_return = at_return;
  if (runtime == Runtime::kBpf) {
    s.text = bpf_text(probe, action, lines, targets.exe_path, handlers, at_return, &s.liveness);
  } else {
    s.text = module_text(probe, action, lines, targets.exe_path, handlers, at_return, &s);
  }
  s.module = module_name(s.text);
  *out = std::move(s);
  return Status::ok();
}

}  // namespace tracebench::systemtap
