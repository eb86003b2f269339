// Time the hypervisor took from this guest's CPUs, for tests that hold a
// clock which runs on through it (perf's task-clock and cpu-clock) against
// one that does not (a thread's own CPU clock and schedstat, which leave
// steal out under paravirt time accounting).
#pragma once

#include <unistd.h>

#include "tracebench/system.h"

namespace tracebench::test {

// /proc/stat's steal over all CPUs, in ns (the harness's snapshot).
inline double steal_ns() { return cpu_time_snapshot().steal_s * 1e9; }

// What a clock that runs on through steal may be ahead by, `stolen` ns seen
// since the start: that, and one tick of /proc/stat's granularity when it
// saw any.
inline double steal_allowance_ns(double stolen) {
  return stolen > 0 ? stolen + 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK)) : 0.0;
}

}  // namespace tracebench::test
