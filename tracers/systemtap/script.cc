// stap script text per probe kind.  Only probes that need no kernel
// debuginfo are used (Debian's guest kernels ship none): the raw_syscalls
// tracepoint (stap reads its fields from the headers' trace/events), and
// kprobe.* (dwarfless kprobes, resolved by symbol name when the module loads).
#include "script.h"

#include <sys/syscall.h>

#include <cstdint>
#include <map>

#include <fmt/format.h>

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

bool parse_runtime(const std::string& word, Runtime* out) {
  if (word == "module")
    *out = Runtime::kModule;
  else if (word == "bpf")
    *out = Runtime::kBpf;
  else
    return false;
  return true;
}

std::string compiled_file(const StapScript& s) { return s.module + (s.runtime == Runtime::kBpf ? ".bo" : ".ko"); }

bool script_supports(const ProbePoint& probe, std::string* why, Runtime runtime) {
  std::string reason;
  if (runtime == Runtime::kBpf && probe.kind != ProbeKind::kSyscall) {
    // Only the tracepoint script is built for stapbpf; the companion
    // module's function is probed through the module's debuginfo
    // (module("<.ko>").function()), which the module runtime relocates
    // when it loads; SystemTap 4.8's BPF backend was not tried on it.
    if (why)
      *why = std::string("the BPF runtime (systemtap.runtime=bpf) is built for syscall entry only (the ") +
             "raw_syscalls:sys_enter tracepoint); " + std::string(to_string(probe.kind)) +
             " sites run with systemtap.runtime=module";
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
    case ProbeKind::kUsdt:
      reason =
          "process(\"...\").function()/.mark() uprobes are not built by this adapter yet (the path of the "
          "binary is compiled into the module)";
      break;
    default: reason = std::string("SystemTap has no probe for ") + std::string(to_string(probe.kind)) + " sites here";
  }
  if (why) *why = reason;
  return false;
}

namespace {

// stapbpf runs it: the number compiled in, the pid from -x (target()).
StapScript bpf_script(const ProbePoint& probe, const std::string& action) {
  StapScript s;
  s.runtime = Runtime::kBpf;
  s.takes_syscall_nr = true;
  const long nr = syscall_number(probe.target);
  s.text = fmt::format(
      "# tracebench systemtap adapter: {kind} probe, action {action}; stap --runtime=bpf --compatible=4.1 -p4\n"
      "global tb_hits = 0\n"
      "global tb_live = 0\n"
      "probe begin {{ printf(\"{ready}\\n\") }}\n"
      "probe kernel.trace(\"raw_syscalls:sys_enter\") {{\n"
      "  if (pid() == target()) {{\n"
      "    if ($id == {nr}) tb_hits++\n"
      "    else if ($id == {live} && tb_live == 0) {{ tb_live = 1; printf(\"{live_line}\\n\") }}\n"
      "  }}\n"
      "}}\n"
      "probe end {{ printf(\"{count}%d\\n\", tb_hits) }}\n",
      fmt::arg("kind", to_string(probe.kind)), fmt::arg("action", action), fmt::arg("ready", kReadyLine),
      fmt::arg("nr", nr), fmt::arg("live", kLiveSyscallNr), fmt::arg("live_line", kLiveLine),
      fmt::arg("count", kCountPrefix));
  s.module = module_name(s.text);
  return s;
}

}  // namespace

Status make_script(const ProbePoint& probe, const std::string& action, const std::string& kmod_build_id,
                   StapScript* out, Runtime runtime) {
  if (action == "record")
    return Status::error(
        "systemtap: no record action: a printf per event reaches the output through stap's relay "
        "transport, which dropped lines at a workload's rate in the VM lab (\"transport failures\", "
        "the end probe's own line among them), so what it recorded could not be read back whole");
  if (action != "count") return Status::error("systemtap: unknown action '" + action + "' (count)");
  std::string why;
  if (!script_supports(probe, &why, runtime)) return Status::error("systemtap: " + probe.name + ": " + why);
  if (runtime == Runtime::kBpf) {
    *out = bpf_script(probe, action);
    return Status::ok();
  }
  std::string point, filter = "pid() == tb_pid", globals = "global tb_pid = 0\n", extra;
  StapScript s;
  if (probe.kind == ProbeKind::kSyscall) {
    // The tracepoint every syscall passes, filtered on the number given at load time.
    point = "kernel.trace(\"raw_syscalls:sys_enter\")";
    filter += " && $id == tb_nr";
    globals += "global tb_nr = -1\n";
    s.takes_syscall_nr = true;
  } else {
    // The companion module's function, a probe on its debuginfo (its .ko,
    // found when stap compiles: kKmodPathToken).  A dwarfless
    // kprobe.module("tracebench").function() compiles too, but its kprobe
    // is never registered on the module's local symbol: the kernel's kprobe
    // list stays empty and the script counts nothing.
    if (kmod_build_id.empty())
      return Status::error("systemtap: " + probe.name +
                           ": the companion module is not loaded (its build-id names the script compiled for it)");
    globals = "# companion module build-id " + kmod_build_id + "\n" + globals;
    point = fmt::format("module(\"{}\").function(\"{}\")", kKmodPathToken, probe.target);
    s.needs_kmod = true;
  }
  const std::string body = "tb_hits++";
  // The count readable while the script runs: enable() fires events of its
  // own until it sees one counted (the probe is live), and takes what it
  // saw counted off the session's count.
  extra = fmt::format("probe procfs(\"{}\").read {{ $value = sprintf(\"%d\\n\", tb_hits) }}\n", kLiveCountFile);
  s.text = fmt::format(
      "# tracebench systemtap adapter: {kind} probe, action {action}; stap -p4 {define}\n"
      "{globals}global tb_hits = 0\n"
      "probe begin {{ printf(\"{ready}\\n\") }}\n"
      "probe {point} {{ if ({filter}) {body} }}\n"
      "probe end {{ printf(\"{count}%d\\n\", tb_hits) }}\n{extra}",
      fmt::arg("kind", to_string(probe.kind)), fmt::arg("define", kCompileDefine), fmt::arg("action", action),
      fmt::arg("globals", globals), fmt::arg("ready", kReadyLine), fmt::arg("point", point), fmt::arg("filter", filter),
      fmt::arg("body", body), fmt::arg("count", kCountPrefix), fmt::arg("extra", extra));
  s.module = module_name(s.text);
  *out = std::move(s);
  return Status::ok();
}

}  // namespace tracebench::systemtap
