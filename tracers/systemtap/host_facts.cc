#include "host_facts.h"

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
  return f;
}

Availability judge(const HostFacts& f) {
  if (f.staprun.empty()) return Availability::no("staprun not found (apt-get install systemtap systemtap-runtime)");
  // Every reason that applies, so the user learns all that is missing at once.
  std::vector<std::string> why;
  if (!f.modules_supported)
    why.push_back("kernel " + f.release + " cannot load modules (no /proc/modules): SystemTap's runtime is a module");
  else if (f.modules_disabled)
    why.push_back("kernel " + f.release + " refuses modules (kernel.modules_disabled = 1)");
  if (f.module_dir.empty()) {
    if (f.stap.empty())
      why.push_back("stap not found to compile the scripts (apt-get install systemtap)");
    else if (f.build_tree.empty())
      why.push_back("no build tree for the running kernel (/lib/modules/" + f.release +
                    "/build/.config): stap compiles every script against it, for the BPF runtime too "
                    "(apt-get install linux-headers-" +
                    f.release + ")");
  }
  if (why.empty()) return Availability::yes();
  std::string msg;
  for (const auto& w : why) msg += (msg.empty() ? "" : "; ") + w;
  return Availability::no(msg + "; SystemTap runs in the VM lab: tracebench vm -- run -t systemtap ...");
}

}  // namespace tracebench::systemtap
