#include "uprobe_sites.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "tracebench/system.h"
#include "tracers/common/names.h"
#include "tracers/common/proc.h"
#include "tracers/common/tracefs_leftovers.h"

extern "C" const char* tracefs_tracing_dir(void);  // libtracefs; mounts tracefs if needed

namespace tracebench::perf {
namespace {

constexpr const char* kGroup = common::kDynamicEventGroup;
std::atomic<int> g_uprobe_seq{0};

Status write_uprobe_events(const std::string& line) {
  const char* dir = tracefs_tracing_dir();
  if (!dir) return Status::error("tracefs is not mounted: mount -t tracefs nodev /sys/kernel/tracing");
  std::string path = std::string(dir) + "/uprobe_events";
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return errno_status("open " + path + " (needs CONFIG_UPROBE_EVENTS and root)", errno);
  ssize_t n = write(fd, line.data(), line.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    std::string shown = line;
    if (!shown.empty() && shown.back() == '\n') shown.pop_back();
    Status st = errno_status("write '" + shown + "' to " + path, err);
    errno = err;
    return st;
  }
  return Status::ok();
}

}  // namespace

// "tracebench:tb<pid>_p<n>_<symbol>": the naming the cleanup of dead owners
// (tracers/common/tracefs_leftovers.cc) recognises.
Status create_uprobe_event(const std::string& symbol, const std::string& where, bool at_return, std::string* name) {
  std::string sym;
  for (char c : symbol) sym += (isalnum(static_cast<unsigned char>(c)) ? c : '_');
  std::string ev = common::owned_event_name("p" + std::to_string(g_uprobe_seq.fetch_add(1)) + "_" + sym);
  if (ev.size() > 63) ev.resize(63);
  const char* kind = at_return ? "r:" : "p:";
  TB_TRY(write_uprobe_events(kind + std::string(kGroup) + "/" + ev + " " + where + "\n"));
  *name = ev;
  return Status::ok();
}

void remove_uprobe_event(const std::string& name) noexcept {
  if (name.empty()) return;
  for (int i = 0; i < 50; ++i) {
    if (write_uprobe_events("-:" + std::string(kGroup) + "/" + name + "\n")) break;
    if (errno != EBUSY) break;
    usleep(20000);
  }
}

int tracepoint_id(const std::string& system, const std::string& event) {
  const char* dir = tracefs_tracing_dir();
  if (!dir) return -1;
  std::string text = common::read_text(std::string(dir) + "/events/" + system + "/" + event + "/id");
  return text.empty() ? -1 : std::atoi(text.c_str());
}

Status MoreSites::create(pid_t pid, const std::vector<ProbePoint::Site>& sites, const perf_event_attr& first, bool pmu,
                         bool at_return) {
  for (const auto& site : sites) {
    std::string file, where;
    std::uint64_t offset = 0;
    TB_TRY(common::address_to_file_offset(pid, site.address, &file, &offset));
    perf_event_attr a = first;
    if (pmu) {
      paths_.push_back(file);
      a.config1 = reinterpret_cast<std::uint64_t>(paths_.back().c_str());
      a.config2 = offset;
    } else {
      TB_TRY(common::uprobe_location(file, offset, 0, &where));
      std::string name;
      TB_TRY(create_uprobe_event(site.symbol, where, at_return, &name));
      events_.push_back(name);
      const int id = tracepoint_id(kGroup, name);
      if (id < 0) return Status::error("uprobe event " + std::string(kGroup) + ":" + name + " has no id");
      a.config = static_cast<std::uint64_t>(id);
      types_.push_back(a.config);
    }
    attrs_.push_back(a);
  }
  return Status::ok();
}

bool MoreSites::has_type(std::uint64_t type) const {
  return std::find(types_.begin(), types_.end(), type) != types_.end();
}

void MoreSites::clear() noexcept {
  for (const std::string& name : events_) remove_uprobe_event(name);
  events_.clear();
  types_.clear();
  attrs_.clear();
  paths_.clear();
}

}  // namespace tracebench::perf
