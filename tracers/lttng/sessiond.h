// The root LTTng session daemon: found running, or started by the adapter
// and kept until the process exits.
//
// Debian's lttng-tools 2.13 needs nothing beyond root: `lttng-sessiond
// --daemonize` creates /var/run/lttng (group `tracing`, which the package
// creates) and returns once the daemon accepts commands.  The user-space
// adapter adds --no-kernel; the kernel-domain adapter (../lttng_kernel) does
// not.  A daemon the adapter started is written down in
// kMarkerFile ("<sessiond pid> <owner pid>") so `tracebench cleanup` can stop
// it after the owner was killed.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench::lttng {

inline constexpr const char* kMarkerFile = "/run/tracebench-lttng-sessiond";
// The root session daemon's own pid file.
inline constexpr const char* kSessiondPidFile = "/var/run/lttng/lttng-sessiond.pid";

// A root session daemon answers on /var/run/lttng (within kCtlTimeout:
// false for one that does not; probe_sessiond() in ctl_call.h tells why).
bool sessiond_alive();

// Path of lttng-sessiond in PATH (empty when not installed).
std::string find_sessiond_binary();

// Starts `lttng-sessiond --daemonize` and waits until it is ready; *pid is
// the daemon's pid.  Writes kMarkerFile.  Without `kernel` it runs with
// --no-kernel; with it, the daemon loads lttng-modules (and unloads them when
// it exits).
Status start_sessiond(pid_t* pid, bool kernel = false);

// The daemon an attach uses.  A running root daemon (anyone's) is used as it
// is; when none runs, one is started and kept until this process exits
// (tracebench::keep_until_exit: a normal exit, a signal, an uncaught
// exception; `tracebench cleanup` after a SIGKILL), and later attaches reuse
// it.  Stopping it at every teardown made every second attach after the first
// wait ~4.9 s: liblttng-ust's listener, having lost its daemon once more,
// sleeps 5 s before it registers with the next one.  `kernel`: the daemon must
// serve the kernel domain; one of this process's started without it is
// replaced.  *own: the daemon's pid when this process started it, else 0.
Status use_sessiond(bool kernel, pid_t* own);

// The daemon this process started and that still runs (0 when none).
pid_t own_sessiond();

// Stops the daemon this process started, if any (at exit; and for tests).
Status release_own_sessiond();

// SIGTERM to a daemon started by start_sessiond() (checked to still be
// lttng-sessiond), waits for it and its consumer daemons to exit (SIGKILL
// after 10 s), removes kMarkerFile.
Status stop_sessiond(pid_t pid);

// For cleanup: a daemon recorded in kMarkerFile whose owner is gone.
// Returns what it did ("" when nothing).
std::string stop_orphaned_sessiond(bool stop = true);  // stop = false: only say what it would stop

// The running root session daemon (from its pid file) and its children
// (consumer daemons, run-as helper), each with its comm: the tasks whose CPU
// time is the consumer's cost.  Empty when no daemon runs.
struct DaemonTask {
  pid_t pid = 0;
  std::string comm;
};
std::vector<DaemonTask> sessiond_family();

// True when `pid` has exited (no such process, or a zombie).
bool process_gone(pid_t pid);

// True when `pid` is a live (not zombie) process named `comm`.
bool process_is(pid_t pid, const std::string& comm);

}  // namespace tracebench::lttng
