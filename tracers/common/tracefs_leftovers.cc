#include "tracers/common/tracefs_leftovers.h"

#include "tracers/common/tracefs_cxx.h"

#include <cstdlib>
#include <set>

#include "tracers/common/names.h"

namespace tracebench::common {

std::vector<std::string> cleanup_tracefs_leftovers(bool remove) {
  std::vector<std::string> removed;
  if (!tracefs_tracing_dir()) return removed;
  tracefs_set_loglevel(TEP_LOG_NONE);
  auto whose = [](long pid) { return " (pid " + std::to_string(pid) + " is gone)"; };
  if (char** names = tracefs_instances("^tracebench-")) {
    for (char** n = names; *n; ++n) {
      std::string name = *n;
      long pid = name_owner(name);
      if (!owner_is_gone(pid)) continue;
      if (!remove) {
        removed.push_back("tracefs instance " + name + whose(pid));
        continue;
      }
      tracefs_instance* inst = tracefs_instance_alloc(nullptr, name.c_str());
      if (!inst) continue;
      tracefs_trace_off(inst);
      tracefs_event_disable(inst, nullptr, nullptr);
      tracefs_tracer_clear(inst);
      tracefs_instance_file_clear(inst, "set_event_pid");
      if (tracefs_instance_destroy(inst) == 0) removed.push_back("tracefs instance " + name + whose(pid));
      tracefs_instance_free(inst);
    }
    tracefs_list_free(names);
  }
  if (tracefs_dynevent** evs = tracefs_dynevent_get_all(TRACEFS_DYNEVENT_ALL, kDynamicEventGroup)) {
    std::set<std::string> seen;  // libtracefs lists a uprobe from uprobe_events and dynamic_events
    for (tracefs_dynevent** e = evs; *e; ++e) {
      char *sys = nullptr, *ev = nullptr;
      tracefs_dynevent_info(*e, &sys, &ev, nullptr, nullptr, nullptr);
      std::string system = sys ? sys : "", event = ev ? ev : "";
      std::free(sys);
      std::free(ev);
      if (system != kDynamicEventGroup || !seen.insert(event).second) continue;
      long pid = event_owner(event);
      if (!owner_is_gone(pid)) continue;
      // force: disable it in whichever instance a dead run left it enabled.
      if (!remove || tracefs_dynevent_destroy(*e, true) == 0)
        removed.push_back("dynamic event " + system + ":" + event + whose(pid));
    }
    tracefs_dynevent_list_free(evs);
  }
  return removed;
}

}  // namespace tracebench::common
