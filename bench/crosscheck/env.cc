#include "env.h"

#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tracebench::crosscheck {

// /sys/devices/system/cpu/online: "0-3,6".
std::vector<int> online_cpus() {
  std::ifstream f("/sys/devices/system/cpu/online");
  std::string text, part;
  std::getline(f, text);
  std::vector<int> cpus;
  std::stringstream ss(text);
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    try {
      const int lo = std::stoi(part.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    } catch (...) {}
  }
  if (cpus.empty()) {
    for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN); ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

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
