// One measuring run per machine at a time.  A uprobe traps in every process
// that maps the probed file, and every run loads the CPUs the others measure
// on, so two runs on one machine measure each other.  Every command that
// attaches a tracer takes the machine lock: flock(2) on
// <dir>/tracebench.lock (dir: /run/lock, else /tmp, as in the VM lab's
// initramfs; TRACEBENCH_LOCK_DIR overrides it), which the kernel releases
// when its holder dies, in whichever pid namespace it lived.  The file
// records who holds it, so a second command says exactly who.
//
// A command run with --allow-concurrent beside the holder does not take the
// lock; it holds a shared flock on <dir>/tracebench.concurrent instead (and
// touches it), so the holder learns at its end that someone ran beside it
// and both results are marked `"concurrent": true`.  `tracebench cleanup`
// takes both exclusively: while either is held, some run is alive and its
// objects are not leftovers, whatever its pid looks like from here.
//
// A child the holder starts (`model suite` runs `run` and `model validate`)
// inherits the lock's open file (TRACEBENCH_LOCK_FD names its descriptor):
// flock on that same open file succeeds where a new open would wait on its
// own parent, so the child runs under its parent's lock instead of
// deadlocking.  A name in the environment proves nothing by itself: the
// descriptor must be the lock file and flock on it must succeed.  Such a
// child ends with the parent that handed the lock down
// (TRACEBENCH_LOCK_PARENT names it): the kernel sends it SIGTERM when that
// parent dies, even by SIGKILL, so no child measures on under a lock nobody
// holds for it.
//
// The lock files live in a directory anyone may write to: they are opened
// as shared_file.h says, so a name planted there is refused, not followed.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "tracebench/status.h"

namespace tracebench {

// Who holds the lock, as its file records it.
struct LockHolder {
  long pid = 0;                        // in its own pid namespace
  std::string pid_ns;                  // "pid:[4026531836]" (/proc/self/ns/pid)
  unsigned long long start_ticks = 0;  // /proc/<pid>/stat field 22: tells a reused pid apart
  std::string started_utc;             // "2026-11-27T19:40:02Z"
  std::string boot_id;                 // /proc/sys/kernel/random/boot_id
  std::string command;                 // the command line, words joined by spaces
};

// The lock file's text: one `key=value` line per field (readable with cat).
std::string format_lock_record(const LockHolder& h);
// false when `text` holds no pid (an empty file: the holder has not written
// it yet, or a file that is not a lock record).
bool parse_lock_record(std::string_view text, LockHolder* out);
// "pid 1234 in this pid namespace, since 2026-11-27T19:40:02Z: tracebench run
// -t ftrace -w call", naming another namespace or boot when the record's
// differ from `here_ns` / `here_boot` (a record of an earlier boot is stale).
std::string describe_holder(const LockHolder& h, const std::string& here_ns, const std::string& here_boot);

// This process, as it records itself (its command line from /proc/self/cmdline).
LockHolder this_process();

// The directory of the lock files.
std::string lock_dir();

enum class LockMode {
  kRefuse,      // held by another: refuse at once (the default)
  kWait,        // held by another: wait up to wait_s, then refuse
  kConcurrent,  // held by another: run beside it, marked concurrent
};
struct LockRequest {
  LockMode mode = LockMode::kRefuse;
  double wait_s = 0;
};

class MachineLock {
 public:
  MachineLock() = default;
  ~MachineLock();
  MachineLock(const MachineLock&) = delete;
  MachineLock& operator=(const MachineLock&) = delete;

  // Takes the lock for a command that measures or attaches (`what`, e.g.
  // "tracebench run"), or inherits its parent's.  The error says who holds
  // it and what to do; `stop` (may be null) ends a wait early (a signal).
  Status acquire(const LockRequest& req, const char* what, const std::atomic<bool>* stop = nullptr);
  // For `tracebench cleanup`: both locks exclusively, never waiting; the
  // error says who holds the machine lock (or that a concurrent run lives).
  Status acquire_for_cleanup();

  // Ran beside a holder (--allow-concurrent while it was held).
  bool concurrent() const { return concurrent_; }
  // The holder it ran beside, described (empty unless concurrent()).
  const std::string& concurrent_with() const { return concurrent_with_; }
  // Whether a command ran with --allow-concurrent beside this one since it
  // took the lock (or one still runs): asked at the end of a run.
  bool others_ran_beside() const;
  // Hands the lock to children started from now on (TRACEBENCH_LOCK_FD).
  Status share_with_children();

  void release();

 private:
  void take_held_lock();
  Status take_inherited(const std::string& path, const std::string& cpath, const char* what, bool* taken);
  int fd_ = -1;             // tracebench.lock (held or inherited)
  int concurrent_fd_ = -1;  // tracebench.concurrent (shared or, for cleanup, exclusive)
  bool inherited_ = false, concurrent_ = false;
  bool held_ = false;  // fd_'s flock is this object's own (not refused, not inherited)
  std::string concurrent_with_;
  double since_ = 0;  // CLOCK_REALTIME when taken, for others_ran_beside()
};

}  // namespace tracebench
