// One reference loop program (loops/loop_protocol.h), driven over its stdin
// and stdout: started pinned to the measured CPU, one timed run per request.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "cases.h"
#include "child.h"
#include "env.h"

namespace tracebench::crosscheck {

struct LoopRun {
  std::uint64_t fired = 0;  // events it fired (warm-up included): what a tracer must have seen
  std::uint64_t calls = 0, chunk = 0;
  double median_chunk_ns = 0;  // the median chunk, ns per event
  double mean_ns = 0;          // the whole timed run, ns per event
  double getpid_ns = 0;        // right after it, a getpid: the machine's speed then (0: not probed)
};

class LoopProcess {
 public:
  Status start(const Env& env, const LoopSide& loop);
  pid_t pid() const { return child_.pid(); }
  const std::string& path() const { return path_; }
  Status run(LoopRun* out);
  // Asks it to end; killed if it does not within a few seconds.
  void stop();

 private:
  Child child_;
  std::string path_;
  std::uint64_t warm_ = 0;  // LoopSide::warm
};

}  // namespace tracebench::crosscheck
