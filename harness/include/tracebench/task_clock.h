// perf's task-clock software event on a set of threads: the kernel's perf
// subsystem counting their time on a CPU, a second account of a consumer's
// CPU time beside /proc/<pid>/task/<tid>/schedstat (model validate sets one
// against the other).  The two differ by design at every context switch:
// schedstat charges a task from the moment the scheduler picks it to the
// moment it is put back, the switches into and out of it included, and
// task-clock only while perf has it switched in; so they are compared per
// switch (context-switches, the other software event counted here).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench {

// What a context switch may explain of schedstat's lead over task-clock, in
// ns: a switch costs a few µs; more per switch and the two accounts do not
// agree (model validate's check, and the task clock test's).
inline constexpr double kSwitchGapExplainedNs = 50e3;

// The threads a consumer task names: `tid` itself, or for tid 0 (a whole
// process) every thread in /proc/<pid>/task now.  Empty when it is gone.
std::vector<int> threads_of(int pid, int tid);

class TaskClocks {
 public:
  TaskClocks() = default;
  TaskClocks(const TaskClocks&) = delete;
  TaskClocks& operator=(const TaskClocks&) = delete;
  ~TaskClocks() { close(); }
  // One counter per thread, counting from now.  A thread that ends before
  // read_ns() takes its count with it (its fd reads what it had).
  Status open(const std::vector<int>& tids);
  // Nanoseconds counted on every thread so far (enabled time only).
  double read_ns() const;
  // Context switches of every thread so far (each time one was switched out).
  std::uint64_t read_switches() const;
  std::size_t threads() const { return fds_.size(); }
  void close();

 private:
  std::vector<int> fds_, switch_fds_;
};

}  // namespace tracebench
