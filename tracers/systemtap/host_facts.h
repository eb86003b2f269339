// What SystemTap's module runtime needs of this machine, detected (never
// assumed), and the one verdict drawn from it, so that a test can give the
// verdict every combination of facts.
#pragma once

#include <string>

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
};

HostFacts probe_host();
// The verdict: ok when staprun can load a module here and a module can be
// had (compiled here with stap and the build tree, or precompiled).
Availability judge(const HostFacts& f);

}  // namespace tracebench::systemtap
