// <tracefs.h> (libtracefs 1.6) does not compile as C++: its inline
// tracefs_hist_start() passes a plain 0 where an enum is expected.  A C++
// overload taking int, declared first, is what that call resolves to.  And
// libtracefs's last error as a string, for the adapters' messages.
#pragma once

#include <cstdlib>
#include <string>

struct tracefs_instance;
struct tracefs_hist;
inline int tracefs_hist_command(struct tracefs_instance* instance, struct tracefs_hist* hist, int cmd);

extern "C" {
#include <event-parse.h>
#include <tracefs.h>
}

inline int tracefs_hist_command(struct tracefs_instance* instance, struct tracefs_hist* hist, int cmd) {
  return tracefs_hist_command(instance, hist, static_cast<enum tracefs_hist_command>(cmd));
}

namespace tracebench {

// libtracefs's last error for `inst` (nullptr: the top instance), trailing
// blanks trimmed; "" when it has none.
inline std::string last_tracefs_error(tracefs_instance* inst) {
  char* e = tracefs_error_last(inst);
  std::string s = e ? e : "";
  free(e);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace tracebench
