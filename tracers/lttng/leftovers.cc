// What a killed run of either LTTng adapter leaves behind (declared in
// lttng_tracer.h; registered as `tracebench cleanup`'s "lttng").
#include <lttng/lttng.h>

#include <cstdlib>
#include <filesystem>

#include "lttng_tracer.h"
#include "sessiond.h"
#include "tracers/common/names.h"

namespace tracebench::lttng {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::vector<std::string> cleanup_leftovers(bool remove) {
  std::vector<std::string> removed;
  if (sessiond_alive()) {
    lttng_session* sessions = nullptr;
    int n = lttng_list_sessions(&sessions);
    for (int i = 0; i < n; ++i) {
      std::string name = sessions[i].name;
      if (name.rfind(kSessionPrefix, 0) != 0) continue;
      if (!common::owner_is_gone(common::name_owner(name, kSessionPrefix))) continue;
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
    if (!common::owner_is_gone(common::name_owner(base, want))) continue;
    std::error_code rm_ec;
    if (remove) fs::remove_all(entry.path(), rm_ec);
    if (!rm_ec) removed.push_back("trace directory " + entry.path().string());
  }
  if (std::string s = stop_orphaned_sessiond(remove); !s.empty()) removed.push_back(s);
  return removed;
}

}  // namespace tracebench::lttng
