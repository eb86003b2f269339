#include "more_site_events.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tracers/common/proc.h"
#include "tracers/common/tracefs_cxx.h"

namespace tracebench::ftrace {

Status make_uprobe_event(const char* group, const std::string& name, const std::string& file, std::uint64_t offset,
                         bool at_return, tracefs_dynevent** out) {
  errno = 0;
  tracefs_dynevent* e = at_return ? tracefs_uretprobe_alloc(group, name.c_str(), file.c_str(), offset, nullptr)
                                  : tracefs_uprobe_alloc(group, name.c_str(), file.c_str(), offset, nullptr);
  if (!e) return errno_status(at_return ? "tracefs_uretprobe_alloc" : "tracefs_uprobe_alloc", errno ? errno : ENOMEM);
  if (tracefs_dynevent_create(e) < 0) {
    const int err = errno ? errno : EIO;
    const std::string extra = last_tracefs_error(nullptr);
    tracefs_dynevent_free(e);
    return Status::error(std::string(std::strerror(err)) + (extra.empty() ? "" : " (" + extra + ")"));
  }
  *out = e;
  return Status::ok();
}

Status MoreSiteEvents::create_one(pid_t pid, const ProbePoint::Site& site, const char* group, const std::string& name,
                                  bool at_return) {
  std::string file;
  std::uint64_t offset = 0;
  TB_TRY(common::address_to_file_offset(pid, site.address, &file, &offset));
  SiteEvent s;
  s.name = name;
  if (Status st = make_uprobe_event(group, name, file, offset, at_return, &s.event); !st)
    return Status::error("create uprobe " + std::string(group) + ":" + name + " at " + site.symbol + ": " +
                         st.message());
  sites_.push_back(std::move(s));
  return Status::ok();
}

Status MoreSiteEvents::load_ids(tep_handle* tep, const char* group) {
  sorted_ids_.clear();
  for (auto& s : sites_) {
    tep_event* e = tep_find_event_by_name(tep, group, s.name.c_str());
    if (!e) return Status::error("libtraceevent: no format for " + std::string(group) + ":" + s.name);
    s.id = e->id;
    sorted_ids_.push_back(e->id);
  }
  std::sort(sorted_ids_.begin(), sorted_ids_.end());
  return Status::ok();
}

Status MoreSiteEvents::open_toggles(tracefs_instance* inst, const char* group) {
  for (auto& s : sites_) {
    char* path = tracefs_event_get_file(inst, group, s.name.c_str(), "enable");
    s.toggle_fd = path ? open(path, O_WRONLY | O_CLOEXEC) : -1;
    const int err = errno;
    tracefs_put_tracing_file(path);
    if (s.toggle_fd < 0) return errno_status("open the enable file of " + std::string(group) + ":" + s.name, err);
  }
  return Status::ok();
}

Status MoreSiteEvents::toggle(bool on) const {
  for (const auto& s : sites_)
    if (pwrite(s.toggle_fd, on ? "1" : "0", 1, 0) != 1)
      return errno_status(std::string(on ? "enable " : "disable ") + s.name, errno);
  return Status::ok();
}

bool MoreSiteEvents::has_id(int id) const { return std::binary_search(sorted_ids_.begin(), sorted_ids_.end(), id); }

void MoreSiteEvents::clear() noexcept {
  for (auto& s : sites_) {
    if (s.toggle_fd >= 0) close(s.toggle_fd);
    if (s.event) {
      tracefs_dynevent_destroy(s.event, true);
      tracefs_dynevent_free(s.event);
    }
  }
  sites_.clear();
  sorted_ids_.clear();
}

}  // namespace tracebench::ftrace
