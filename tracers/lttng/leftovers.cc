// What a killed run of either LTTng adapter leaves behind (declared in
// lttng_tracer.h; registered as `tracebench cleanup`'s "lttng").
#include <lttng/lttng.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "lttng_tracer.h"
#include "sessiond.h"

namespace tracebench::lttng {
namespace {

namespace fs = std::filesystem;

bool pid_alive(pid_t pid) { return !process_gone(pid); }

// The owner pid of a name "<prefix><pid>[-...]", or 0 when the name is not
// one of ours (e.g. "tracebench-xcheck-12": a script's session, not ours).
pid_t owner_pid(const std::string& name, std::size_t prefix_len) {
  std::size_t end = prefix_len;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == prefix_len || (end < name.size() && name[end] != '-')) return 0;
  return static_cast<pid_t>(std::atoi(name.c_str() + prefix_len));
}

}  // namespace

std::vector<std::string> cleanup_leftovers(bool remove) {
  std::vector<std::string> removed;
  if (sessiond_alive()) {
    lttng_session* sessions = nullptr;
    int n = lttng_list_sessions(&sessions);
    for (int i = 0; i < n; ++i) {
      std::string name = sessions[i].name;
      if (name.rfind(kSessionPrefix, 0) != 0) continue;
      pid_t owner = owner_pid(name, std::strlen(kSessionPrefix));
      if (owner <= 0 || owner == ::getpid() || pid_alive(owner)) continue;
      if (!remove || lttng_destroy_session(name.c_str()) >= 0) removed.push_back("lttng session " + name);
    }
    std::free(sessions);
  }
  std::error_code ec;
  const fs::path prefix(kTempDirPrefix);
  for (const auto& entry : fs::directory_iterator(prefix.parent_path(), ec)) {
    std::string base = entry.path().filename().string();
    std::string want = prefix.filename().string();
    if (base.rfind(want, 0) != 0) continue;
    pid_t owner = owner_pid(base, want.size());
    if (owner <= 0 || owner == ::getpid() || pid_alive(owner)) continue;
    std::error_code rm_ec;
    if (remove) fs::remove_all(entry.path(), rm_ec);
    if (!rm_ec) removed.push_back("trace directory " + entry.path().string());
  }
  if (std::string s = stop_orphaned_sessiond(remove); !s.empty()) removed.push_back(s);
  return removed;
}

}  // namespace tracebench::lttng
