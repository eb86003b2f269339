#include "tracebench/kallsyms.h"

#include <cstdlib>
#include <fstream>

namespace tracebench {

bool kallsyms_lookup(const std::string& symbol, std::uint64_t* address) {
  std::ifstream in("/proc/kallsyms");
  std::string line;
  while (std::getline(in, line)) {
    // "ffffffff81234560 T __x64_sys_getpid" or "... t name\t[module]"
    std::size_t a = line.find(' ');
    if (a == std::string::npos) continue;
    std::size_t b = line.find(' ', a + 1);
    if (b == std::string::npos) continue;
    std::size_t e = line.find_first_of(" \t", b + 1);
    if (line.compare(b + 1, e == std::string::npos ? std::string::npos : e - b - 1, symbol) == 0) {
      if (address) *address = std::strtoull(line.substr(0, a).c_str(), nullptr, 16);
      return true;
    }
  }
  return false;
}

Status kernel_function_for(const ProbePoint& probe, std::string* symbol) {
  if (probe.kind == ProbeKind::kSyscall) {
    for (const char* prefix : {"__x64_sys_", "__arm64_sys_", "__riscv_sys_", "sys_"}) {
      std::string s = prefix + probe.target;
      if (kallsyms_lookup(s)) {
        *symbol = s;
        return Status::ok();
      }
    }
    return Status::error("no kernel entry function for syscall '" + probe.target + "' in /proc/kallsyms");
  }
  if (probe.kind == ProbeKind::kKernelFunction) {
    if (!kallsyms_lookup(probe.target))
      return Status::error("kernel function '" + probe.target + "' is not in /proc/kallsyms" +
                           (probe.target.rfind("tracebench_", 0) == 0
                                ? " (load the companion module kmod/tracebench.ko, or use `tracebench vm`)"
                                : ""));
    *symbol = probe.target;
    return Status::ok();
  }
  return Status::error("probe '" + probe.name + "' is not a kernel function or syscall");
}

}  // namespace tracebench
