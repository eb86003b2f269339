// The perf adapter's user-function probes made in tracefs (an uprobe event
// in the suite's dynamic-event group, named so that `tracebench cleanup`
// finds a dead run's) and the further sites of a many-probe workload
// (ProbePoint::more_sites): a perf event each, opened beside the first
// site's into the same rings.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench::perf {

// A uprobe (or, at_return, a uretprobe) event at `where`
// (common::uprobe_location's path:0xOFFSET, an SDT semaphore as its
// reference counter) named after `symbol`; *name: the event's name.
Status create_uprobe_event(const std::string& symbol, const std::string& where, bool at_return, std::string* name);
// Removes it, waiting while an event on it is still being closed (EBUSY).
void remove_uprobe_event(const std::string& name) noexcept;
// A tracepoint's id from tracefs (events/<system>/<event>/id: a uprobe
// event's too, in the suite's group); -1 when it has none.
int tracepoint_id(const std::string& system, const std::string& event);

class MoreSites {
 public:
  MoreSites() = default;
  MoreSites(const MoreSites&) = delete;
  MoreSites& operator=(const MoreSites&) = delete;
  ~MoreSites() { clear(); }

  // An event's attributes per site of process `pid`, from `first` (the
  // first site's, whose type and config say the kind): with the uprobe PMU
  // the site's file and offset as config1/config2, else an uprobe event per
  // site in tracefs, opened as a tracepoint (its id as config).  On an
  // error the events made so far stay here for clear().
  Status create(pid_t pid, const std::vector<ProbePoint::Site>& sites, const perf_event_attr& first, bool pmu,
                bool at_return);
  const std::vector<perf_event_attr>& attrs() const { return attrs_; }
  // Whether a record's RAW type is one of the tracefs sites' events.
  bool has_type(std::uint64_t type) const;
  std::size_t size() const { return attrs_.size(); }
  // Their tracefs events removed: only once every fd opened from attrs() is
  // closed (a PMU site's config1 points into this object's paths too).
  void clear() noexcept;

 private:
  std::vector<perf_event_attr> attrs_;
  std::vector<std::string> events_;
  std::vector<std::uint64_t> types_;
  std::deque<std::string> paths_;  // stable addresses for config1
};

}  // namespace tracebench::perf
