// Helpers the adapters share: files, processes, address lookups.  One
// meaning each, so that adapters agree (one `pid_alive`, one way to map an
// address to the file a uprobe needs).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tracebench/status.h"
#include "tracebench/system.h"  // online_cpus()

namespace tracebench::common {

// The whole file; "" when it cannot be read (read_file says which).
std::string read_text(const std::string& path);
bool read_file(const std::string& path, std::string* out);

// MemAvailable of /proc/meminfo in bytes (0 when it cannot be read): what a
// tracer can allocate without pushing the system into swap or the OOM killer.
std::uint64_t mem_available_bytes();

// The process exists and has not exited (a zombie has), whoever owns it.
bool pid_alive(pid_t pid);

// Where a tracer's consumer thread goes by default: away from the measured
// CPU (the harness pins the attaching thread to it), i.e. the first online
// CPU outside this thread's affinity; the first online CPU when every one is
// in it; -1 on a machine with one online CPU (or none readable).
int cpu_away_from_this_thread();
// A consumer_cpu a user asked for: an online CPU (the one rule the adapters
// hold it to); the error names the option's owner and the online CPUs.
Status check_consumer_cpu(const std::string& tracer, long cpu);
// A profile probe's sample rate against kernel.perf_event_max_sample_rate
// (`max_sample_rate`: the sysctl's text; empty or unreadable: not checked):
// above it the kernel throttles the timer, losing firings no count tells
// apart from a tracer that missed them, so it is refused.
Status check_profile_rate(const std::string& tracer, std::uint64_t hz, const std::string& max_sample_rate);
// What a profile probe's timer made time for (EventCounts::timer_fired and
// timer_windows), kept by the adapter on the firing thread: enabled() at
// each enable, clock_read() with each of its timer events' clock (ns of the
// thread's CPU time) at disable, then disabled().  A window per clock read
// (the timer's phase at its start) and per switch back into the thread
// (the kernel stops the timer at each switch out and restarts it).
class TimerFirings {
 public:
  explicit TimerFirings(std::uint64_t period_ns = 0) : period_ns_(period_ns) {}
  void enabled();
  void clock_read(std::uint64_t ns);
  void disabled();
  std::uint64_t fired() const { return fired_; }
  std::uint64_t windows() const { return windows_; }

 private:
  std::uint64_t period_ns_;
  std::uint64_t fired_ = 0, windows_ = 0;
  std::int64_t switches_at_enable_ = -1;  // the thread's context switches then, -1 unknown
};
// This thread may run on `cpu` alone (the harness's measured thread is
// pinned so): a consumer put there shares the measured CPU.
bool this_thread_pinned_to(int cpu);

// A runtime address in `pid` as (file, file offset) via /proc/<pid>/maps:
// what a uprobe needs.  An error says why not (anonymous, not executable,
// the binary replaced on disk, unmapped).
Status address_to_file_offset(pid_t pid, std::uintptr_t addr, std::string* file, std::uint64_t* offset);

// The executable of `pid` (/proc/<pid>/exe's target; the /proc link itself
// when the binary was replaced on disk, whose inode it still reaches).
Status executable_of(pid_t pid, std::string* path);

// The SDT note `provider:name` (a usdt workload's target) in the executable
// of `pid`: the file, the note's offset in it and its semaphore's (0: none),
// what a uprobe with a reference counter takes (uprobe_events'
// `path:0xOFFSET(0xSEMAPHORE)`).  An error says why not (no such note, two
// of them, one outside the loaded segments).
Status usdt_site(pid_t pid, const std::string& target, std::string* file, std::uint64_t* offset,
                 std::uint64_t* semaphore);

// A uprobe's place as uprobe_events writes it: `path:0xOFFSET`, and
// `(0xSEMAPHORE)` after it for a reference counter (non-zero).  An error for
// a path with white space, which the line cannot carry.
Status uprobe_location(const std::string& file, std::uint64_t offset, std::uint64_t semaphore, std::string* out);

}  // namespace tracebench::common
