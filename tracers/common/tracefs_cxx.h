// <tracefs.h> (libtracefs 1.6) does not compile as C++: its inline
// tracefs_hist_start() passes a plain 0 where an enum is expected.  A C++
// overload taking int, declared first, is what that call resolves to.
#pragma once

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
