// What a killed run of either LTTng adapter leaves behind (declared in
// lttng_tracer.h; registered as `tracebench cleanup`'s "lttng").
#include <lttng/lttng.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "ctl_call.h"
#include "lttng_tracer.h"
#include "sessiond.h"
#include "tracers/common/names.h"

namespace tracebench::lttng {
namespace {

namespace fs = std::filesystem;

// The names of the daemon's sessions, in a bounded call.
Status session_names(std::vector<std::string>* names) {
  std::string all;
  TB_TRY(bounded_call(
      "lttng: list sessions", kLeftoverTimeout,
      [](std::string* out) {
        lttng_session* sessions = nullptr;
        int n = lttng_list_sessions(&sessions);
        for (int i = 0; i < n; ++i) out->append(sessions[i].name).push_back('\0');
        std::free(sessions);
        return n < 0 ? Status::error(std::string("lttng: list sessions: ") + lttng_strerror(n)) : Status::ok();
      },
      &all));
  for (std::size_t at = 0, end; (end = all.find('\0', at)) != std::string::npos; at = end + 1)
    names->push_back(all.substr(at, end - at));
  return Status::ok();
}

// Sessions of dead tracebench processes.  Commands that do not use LTTng
// run this check too: it waits for the daemon at most kLeftoverTimeout, and
// a daemon that does not answer is said on stderr (what was not checked).
void dead_sessions(bool remove, std::vector<std::string>* removed) {
  bool alive = false;
  std::vector<std::string> names;
  Status s = probe_sessiond(&alive, kLeftoverTimeout);
  if (s && alive) s = session_names(&names);
  if (!s) {
    std::fprintf(stderr, "tracebench: warning: LTTng sessions of dead runs not %s: %s\n",
                 remove ? "removed" : "checked", s.message().c_str());
    return;
  }
  for (const auto& name : names) {
    if (name.rfind(kSessionPrefix, 0) != 0) continue;
    if (!common::owner_is_gone(common::name_owner(name, kSessionPrefix))) continue;
    if (remove) {
      Status d = ctl_call(
          "lttng: destroy session " + name, [&] { return lttng_destroy_session(name.c_str()); }, kLeftoverTimeout);
      if (!d) {
        std::fprintf(stderr, "tracebench: warning: %s\n", d.message().c_str());
        continue;
      }
    }
    removed->push_back("lttng session " + name);
  }
}

}  // namespace

std::vector<std::string> cleanup_leftovers(bool remove) {
  std::vector<std::string> removed;
  dead_sessions(remove, &removed);
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
