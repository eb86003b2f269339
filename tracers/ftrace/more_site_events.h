// The uprobe events of a many-probe workload's further sites
// (ProbePoint::more_sites): one uprobe event per function, in the suite's
// dynamic-event group (so `tracebench cleanup` finds a dead run's), each
// enabled in the adapter's instance beside the first site's event.  An
// event per site, not the group's enable file: another run's events of the
// same group must not be switched on in this instance.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tracebench/status.h"
#include "tracebench/tracer.h"

struct tep_handle;
struct tracefs_dynevent;
struct tracefs_instance;

namespace tracebench::ftrace {

// A user function's uprobe (or uretprobe) event group/name at file:offset,
// created; *out owns it (tracefs_dynevent_destroy/free).
Status make_uprobe_event(const char* group, const std::string& name, const std::string& file, std::uint64_t offset,
                         bool at_return, tracefs_dynevent** out);

class MoreSiteEvents {
 public:
  MoreSiteEvents() = default;
  MoreSiteEvents(const MoreSiteEvents&) = delete;
  MoreSiteEvents& operator=(const MoreSiteEvents&) = delete;
  ~MoreSiteEvents() { clear(); }

  // An event per site of process `pid`, named by `name_of(site)`; on an
  // error the ones made so far stay here for clear().
  template <typename NameOf>
  Status create(pid_t pid, const std::vector<ProbePoint::Site>& sites, const char* group, bool at_return,
                NameOf name_of) {
    for (const auto& site : sites) TB_TRY(create_one(pid, site, group, name_of(site), at_return));
    return Status::ok();
  }
  // Their ids in `tep` (which holds the group's formats).
  Status load_ids(tep_handle* tep, const char* group);
  // Their enable files in `inst`, opened for toggle().
  Status open_toggles(tracefs_instance* inst, const char* group);
  // Every site's event on or off (pwrite on the opened files).
  Status toggle(bool on) const;
  // Whether a record's event id is one of theirs.
  bool has_id(int id) const;
  std::size_t size() const { return sites_.size(); }
  // Files closed, events destroyed (disabled in every instance first).
  void clear() noexcept;

 private:
  struct SiteEvent {
    tracefs_dynevent* event = nullptr;
    std::string name;
    int id = -1;
    int toggle_fd = -1;
  };
  Status create_one(pid_t pid, const ProbePoint::Site& site, const char* group, const std::string& name,
                    bool at_return);
  std::vector<SiteEvent> sites_;
  std::vector<int> sorted_ids_;
};

}  // namespace tracebench::ftrace
