// What SystemTap's runtimes need of this machine, detected (never assumed),
// and the one verdict per runtime drawn from it, so that a test can give the
// verdict every combination of facts.
#pragma once

#include <string>

#include "script.h"
#include "tracebench/tracer.h"

namespace tracebench::systemtap {

// Where the VM lab puts the modules the host compiled for the guest.
inline constexpr const char* kGuestModuleDir = "/tb/stap";

struct HostFacts {
  std::string release;             // uname -r
  std::string stap;                // path of stap, "" when not installed
  std::string staprun;             // path of staprun, "" when not installed
  std::string stapbpf;             // path of stapbpf (the BPF runtime), "" when not installed
  std::string build_tree;          // /lib/modules/<release>/build when its .config is readable, else ""
  bool modules_supported = false;  // /proc/modules exists (CONFIG_MODULES)
  bool modules_disabled = false;   // kernel.modules_disabled = 1
  std::string module_dir;          // precompiled modules (kGuestModuleDir), "" when absent
  // stapbpf sets RLIMIT_MEMLOCK to unlimited before it loads anything and
  // stops when it cannot: possible when the hard limit is unlimited or
  // the process holds CAP_SYS_RESOURCE.
  bool memlock_raisable = false;
};

HostFacts probe_host();
// The verdict: ok when the runtime's runner can start here (staprun loading
// a module; stapbpf raising its memory lock limit) and a script can be had
// (compiled here with stap and the build tree, or precompiled).
Availability judge(const HostFacts& f, Runtime runtime = Runtime::kModule);

}  // namespace tracebench::systemtap
