#include "host_facts.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "tracers/common/proc.h"

namespace fs = std::filesystem;

namespace tracebench::systemtap {
namespace {

std::string in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    const std::string p = d + "/" + name;
    if (!d.empty() && access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

// CAP_SYS_RESOURCE in the effective set (/proc/self/status CapEff).
bool has_sys_resource() {
  const std::string status = common::read_text("/proc/self/status");
  const auto at = status.find("CapEff:");
  if (at == std::string::npos) return false;
  const unsigned long long caps = std::strtoull(status.c_str() + at + 7, nullptr, 16);
  return (caps >> 24) & 1;  // CAP_SYS_RESOURCE = 24
}

}  // namespace

HostFacts probe_host() {
  HostFacts f;
  struct utsname u {};
  if (uname(&u) == 0) f.release = u.release;
  f.stap = in_path("stap");
  f.staprun = in_path("staprun");
  f.stapbpf = in_path("stapbpf");
  const std::string build = "/lib/modules/" + f.release + "/build";
  if (access((build + "/.config").c_str(), R_OK) == 0) f.build_tree = build;
  f.modules_supported = access("/proc/modules", F_OK) == 0;
  f.modules_disabled = common::read_text("/proc/sys/kernel/modules_disabled").rfind('1', 0) == 0;
  std::error_code ec;
  if (fs::is_directory(kGuestModuleDir, ec)) f.module_dir = kGuestModuleDir;
  struct rlimit lim {};
  f.memlock_raisable = (getrlimit(RLIMIT_MEMLOCK, &lim) == 0 && lim.rlim_max == RLIM_INFINITY) || has_sys_resource();
  return f;
}

Availability judge(const HostFacts& f, Runtime runtime) {
  // Every reason that applies, so the user learns all that is missing at once.
  std::vector<std::string> why;
  if (runtime == Runtime::kBpf) {
    if (f.stapbpf.empty())
      return Availability::no("stapbpf not found: `scripts/setup.sh --area systemtap` installs SystemTap (systemtap)");
    if (!f.memlock_raisable)
      why.push_back(
          "stapbpf cannot raise RLIMIT_MEMLOCK to unlimited, which it does before loading anything (the "
          "hard limit is finite and CAP_SYS_RESOURCE is not held)");
  } else {
    if (f.staprun.empty())
      return Availability::no(
          "staprun not found: `scripts/setup.sh --area systemtap` installs SystemTap (systemtap, systemtap-runtime)");
    if (!f.modules_supported)
      why.push_back("kernel " + f.release + " cannot load modules (no /proc/modules): SystemTap's runtime is a module");
    else if (f.modules_disabled)
      why.push_back("kernel " + f.release + " refuses modules (kernel.modules_disabled = 1)");
  }
  if (f.module_dir.empty()) {
    if (f.stap.empty())
      why.push_back("stap not found to compile the scripts: `scripts/setup.sh --area systemtap` installs it");
    else if (f.build_tree.empty())
      why.push_back("no build tree for the running kernel (/lib/modules/" + f.release +
                    "/build/.config): stap compiles every script against it, for the BPF runtime too "
                    "(apt-get install linux-headers-" +
                    f.release + ")");
  }
  if (why.empty()) return Availability::yes();
  std::string msg;
  for (const auto& w : why) msg += (msg.empty() ? "" : "; ") + w;
  return Availability::no(msg + "; SystemTap runs in the VM lab: tracebench vm -- run -t " +
                          (runtime == Runtime::kBpf ? "systemtap_bpf" : "systemtap") + " ...");
}

}  // namespace tracebench::systemtap
