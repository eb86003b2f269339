#include "tracers/common/names.h"

#include <unistd.h>

#include "tracers/common/proc.h"

namespace tracebench::common {

std::string owned_name(std::string_view what) {
  std::string s = std::string(kOwnedPrefix) + std::to_string(::getpid());
  if (!what.empty()) s += "-" + std::string(what);
  return s;
}

std::string owned_event_name(std::string_view what) {
  return std::string(kOwnedEventPrefix) + std::to_string(::getpid()) + "_" + std::string(what);
}

long name_owner(std::string_view name, std::string_view prefix, char sep) {
  if (name.substr(0, prefix.size()) != prefix) return -1;
  std::size_t i = prefix.size(), j = i;
  while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
  if (j == i || j - i > 9) return -1;
  if (j != name.size() && name[j] != sep) return -1;
  return std::stol(std::string(name.substr(i, j - i)));
}

long event_owner(std::string_view name) { return name_owner(name, kOwnedEventPrefix, '_'); }

bool owner_is_gone(long pid) { return pid > 0 && pid != ::getpid() && !pid_alive(static_cast<pid_t>(pid)); }

}  // namespace tracebench::common
