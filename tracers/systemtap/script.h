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

struct StapScript {
  std::string text;
  std::string module;  // tracebench_stap_<16 hex digits of the text's hash>
  bool takes_syscall_nr = false;
  // Probes the companion module's function: compiled against that module's
  // .ko (its path replaces kKmodPathToken in the text stap gets).
  bool needs_kmod = false;
};

inline constexpr const char* kKmodPathToken = "@KMOD@";
// stap's overload guard stops a script whose probes take more than half
// of a CPU's cycles over a second; a benchmark's hot loop fires a probe
// back to back by design, so the guard is compiled out.  Part of the
// script's text (a comment line), so the flag is in the module's hash.
inline constexpr const char* kCompileDefine = "-DSTP_NO_OVERLOAD";

// The script for `probe` with `action` ("count"), or why this
// adapter cannot probe it.  `kmod_build_id`: the companion module's (see
// build_id.h), needed for a probe on its function.
Status make_script(const ProbePoint& probe, const std::string& action, const std::string& kmod_build_id,
                   StapScript* out);
// Whether make_script() accepts the probe kind (the reason when it does not).
bool script_supports(const ProbePoint& probe, std::string* why = nullptr);
// "tracebench_stap_" + FNV-1a 64 of the text in hex: the cache key and the
// module's name, so a changed script is a different module.
std::string module_name(const std::string& text);
// The number of an argument-less syscall a workload names; -1 otherwise.
long syscall_number(const std::string& name);

}  // namespace tracebench::systemtap
