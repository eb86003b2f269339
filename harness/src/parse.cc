#include "tracebench/parse.h"

#include <sys/syscall.h>

#include <map>

namespace tracebench {

long syscall_number(const std::string& name) {
  static const std::map<std::string, long> table = {
      {"getpid", SYS_getpid}, {"getppid", SYS_getppid},     {"gettid", SYS_gettid},
      {"read", SYS_read},     {"write", SYS_write},         {"close", SYS_close},
      {"openat", SYS_openat}, {"nanosleep", SYS_nanosleep}, {"sched_yield", SYS_sched_yield},
      {"getuid", SYS_getuid},
  };
  auto it = table.find(name);
  return it == table.end() ? -1 : it->second;
}

bool parse_size(const std::string& s, std::size_t* out) {
  if (s.empty() || s.size() > 12) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  *out = static_cast<std::size_t>(std::stoull(s));
  return true;
}

}  // namespace tracebench
