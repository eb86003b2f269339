#include "vm_scripts.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace tracebench {

Status find_vm_scripts(std::string* dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TRACEBENCH_SCRIPTS_DIR")) candidates.push_back(env);
#ifdef TRACEBENCH_SOURCE_DIR
  candidates.push_back(std::string(TRACEBENCH_SOURCE_DIR) + "/scripts/vm");
#endif
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back((self.parent_path() / "../../scripts/vm").string());
    candidates.push_back((self.parent_path() / "../share/tracebench/scripts/vm").string());
  }
  for (const auto& c : candidates) {
    if (access((c + "/tracebench-vm.sh").c_str(), X_OK) == 0) {
      *dir = c;
      return Status::ok();
    }
  }
  return Status::error(
      "cannot find scripts/vm/tracebench-vm.sh (set TRACEBENCH_SCRIPTS_DIR to the source tree's scripts/vm)");
}

}  // namespace tracebench
