// The stap script the adapter runs for a probe point and an action, and the
// module name it compiles to.  The text depends only on the probe and the
// action: what varies per run (the firing pid, the syscall number) is given
// to staprun as module parameters, so one compiled module serves every run
// and the host can compile the guest's modules before the guest boots.
#pragma once

#include <string>

#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench::systemtap {

// Lines the scripts print (begin, end), parsed by session.cc.
inline constexpr const char* kReadyLine = "tracebench_stap ready";
inline constexpr const char* kCountPrefix = "tracebench_stap count ";
// /proc/systemtap/<module>/<this>: the count while a kmod script runs.
inline constexpr const char* kLiveCountFile = "tb_count";

// Which SystemTap runtime runs the script: a kernel module (staprun), or
// BPF programs loaded by stapbpf (stap --runtime=bpf, a .bo file).
enum class Runtime { kModule, kBpf };
const char* to_string(Runtime r);

// The BPF runtime's scripts: stapbpf takes no script parameters, so the
// syscall number is compiled in and the pid is target() (stapbpf -x PID).
// enable() makes this invalid syscall (ENOSYS; raw_syscalls:sys_enter sees
// it) until the script prints kLiveLine: its probe is then attached, and
// the liveness events are never among those it counts.
inline constexpr long kLiveSyscallNr = 4095;
inline constexpr const char* kLiveLine = "tracebench_stap live";

// Handlers on the probe point (the model's handler-count sweep: options
// `ecbs`, `extra_predicate`): the first counts the workload's events; each
// extra one has a counter of its own and a filter that holds (it counts
// them too, checked at the end) or never holds (a pid no task has,
// compared on every event).
struct Handlers {
  unsigned count = 1;
  bool extra_holds = true;
};
inline constexpr unsigned kMaxHandlers = 16;
// "tbr <n>": the record action's line for the session's n-th event.
inline constexpr const char* kRecordPrefix = "tbr ";
// "tracebench_stap extra <k> <count>": an extra handler's counter, printed
// by the end probe.
inline constexpr const char* kExtraPrefix = "tracebench_stap extra ";

// How enable() sees a script's probe live before the timed block
// (systemtap_tracer.cc): the begin probe's line comes before the probes
// count, and events in between went uncounted in the VM lab.
enum class Liveness {
  // Fires events itself until the script's procfs count is above 0 and
  // takes what it saw counted off the session's count (module runtime).
  kLiveCount,
  // Waits for the USDT site's semaphore, which the runtime sets once it
  // has placed the probe in this process; fires nothing.
  kSemaphore,
  // Makes kLiveSyscallNr until the script prints kLiveLine; those calls
  // are not the counted syscall (BPF runtime, syscall entry).
  kLiveSyscall,
  // A thread of its own, the script's target(), calls the function until
  // the script prints kLiveLine; that thread's calls are not counted (BPF
  // runtime, user function).
  kLiveThread,
};

struct StapScript {
  Runtime runtime = Runtime::kModule;
  Handlers handlers;
  // A user function's return probe (`.return`, a uretprobe) instead of its
  // entry (the tracer option at=return).
  bool at_return = false;
  Liveness liveness = Liveness::kLiveCount;
  std::string text;
  std::string module;  // tracebench_stap_<16 hex digits of the text's hash>
  bool takes_syscall_nr = false;
  // Probes the companion module's function: compiled against that module's
  // .ko (its path replaces kKmodPathToken in the text stap gets).
  bool needs_kmod = false;
  // Probes the executable (uprobes): its path as the probed process sees it
  // is in the text (the module places the uprobes on that file), and stap
  // reads the same executable's symbols and SDT notes when it compiles.
  std::string exe_path;
};

// What a script is compiled against besides the kernel.
struct ScriptTargets {
  // The companion module's build-id (build_id.h), for a probe on its function.
  std::string kmod_build_id;
  // For uprobes: the executable's path where the script runs (the VM lab's
  // guest: /tb/bin/tracebench) and its build-id, which names the build in
  // the script (a rebuilt tracebench is a different script).
  std::string exe_path, exe_build_id;
};

inline constexpr const char* kKmodPathToken = "@KMOD@";
// stap's overload guard stops a script whose probes take more than half
// of a CPU's cycles over a second; a benchmark's hot loop fires a probe
// back to back by design, so the guard is compiled out.  Part of the
// script's text (a comment line), so the flag is in the module's hash.
inline constexpr const char* kCompileDefine = "-DSTP_NO_OVERLOAD";

// The script for `probe` with `action` ("count", or "record": a line per
// event through the transport), or why this adapter cannot probe it.
// `s` as a stap string literal, quoted: stap reads \" and \\ in a string
// as C does, so a path with a quote in it stays one string.
std::string stap_string(const std::string& s);
// A path stap can be given exactly: no control character, and none of the
// wildcards process("...") expands (* ? [ ]).
Status check_stap_path(const std::string& path);

// `at_return`: on a user function, its `.return` probe (refused on others).
Status make_script(const ProbePoint& probe, const std::string& action, const ScriptTargets& targets, StapScript* out,
                   Runtime runtime = Runtime::kModule, Handlers handlers = {}, bool at_return = false);
// The compiled file's name: <module>.ko, or <module>.bo for the BPF runtime.
std::string compiled_file(const StapScript& s);
// Whether make_script() accepts the probe kind (the reason when it does not).
bool script_supports(const ProbePoint& probe, std::string* why = nullptr, Runtime runtime = Runtime::kModule);
// "tracebench_stap_" + FNV-1a 64 of the text in hex: the cache key and the
// module's name, so a changed script is a different module.
std::string module_name(const std::string& text);
// "provider:name" split; false when `target` is not that.
bool usdt_parts(const std::string& target, std::string* provider, std::string* name);
// The number of an argument-less syscall a workload names; -1 otherwise.
long syscall_number(const std::string& name);

}  // namespace tracebench::systemtap
