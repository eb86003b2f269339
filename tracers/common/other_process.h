// Another process of this binary, for a probe filtered to a process that is
// not the one measured (`ebpf.pid_filter`): forked when the tracer attaches,
// it waits on a socket and calls the probed function as many times as it is
// asked, so a tracer can prove its probe is live for that process while the
// measured one's hits are filtered out.  It ends with stop(), with its
// parent (PR_SET_PDEATHSIG) or at the first signal (default dispositions).
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "tracebench/status.h"

namespace tracebench::common {

class OtherProcess {
 public:
  OtherProcess() = default;
  OtherProcess(const OtherProcess&) = delete;
  OtherProcess& operator=(const OtherProcess&) = delete;
  ~OtherProcess() { stop(); }

  // Forks the process; `function` is an address in this binary of a
  // function it may call with no argument (a probe site's `void f()`).
  Status start(std::uintptr_t function);
  // `n` calls of the function in the other process; returns once made.
  Status call(std::uint64_t n);
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // Kills and reaps it; nothing when none runs.
  void stop() noexcept;

 private:
  pid_t pid_ = -1;
  int sock_ = -1;  // a socket pair's end: the calls asked for, and done
};

}  // namespace tracebench::common
