#include "tracebench/setup_area.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace tracebench {
namespace {

bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    if (!d.empty() && access((d + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

bool present(const std::string& need) {
  return need.starts_with('/') ? access(need.c_str(), F_OK) == 0 : on_path(need);
}

}  // namespace

Status require_area(const std::string& area, const std::string& what, std::initializer_list<const char*> needs) {
  std::string missing;
  for (const char* need : needs) {
    if (present(need)) continue;
    missing += (missing.empty() ? "" : ", ") + std::string(need);
  }
  if (missing.empty()) return Status::ok();
  return Status::error(what + " is not installed here: no " + missing + "; `scripts/setup.sh --area " + area +
                       "` installs it (scripts/setup/" + area + ".txt lists the packages)");
}

}  // namespace tracebench
