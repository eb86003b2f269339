#include "env.h"

#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tracebench::crosscheck {

std::vector<int> cpus_besides(int cpu) {
  std::vector<int> all = online_cpus(), others;
  for (int c : all) {
    if (c != cpu) others.push_back(c);
  }
  return others.empty() ? all : others;
}

int last_online_cpu() {
  const std::vector<int> all = online_cpus();
  return all.empty() ? 0 : all.back();
}

std::string find_loop_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const auto& dir : {exe.parent_path(), exe.parent_path() / ".." / "libexec" / "tracebench"}) {
    if (access((dir / "tracebench-crosscheck-loop").c_str(), X_OK) == 0)
      return std::filesystem::weakly_canonical(dir, ec).string();
  }
  return "";
}

}  // namespace tracebench::crosscheck
