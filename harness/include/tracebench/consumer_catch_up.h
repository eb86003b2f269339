// Waiting for a tracer's consumer before a traced block.  A tracer whose
// buffer is fixed at attach() and emptied by a consumer on another CPU (an
// LTTng channel and lttng-consumerd, a perf ring and its reader thread)
// sizes its blocks to half that buffer (Tracer::block_event_capacity), which
// holds as long as the consumer empties one block's records before the next
// traced block.  On a busy machine (another job on the consumer's CPU, the
// hypervisor taking the CPU away) it may not, and discard mode drops what
// does not fit.  Before each traced block the harness waits, outside the
// timed window, until no thread of the consumer's tasks is running or
// runnable, within a bound: the measured path is the same, only the pause
// between blocks grows.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tracebench/results.h"
#include "tracebench/tracer.h"

namespace tracebench {

// The state letter of a /proc stat line ("pid (comm) S ..."; the command
// may hold spaces and parentheses); 0 when malformed.
char parse_stat_state(const std::string& stat);

// Whether a thread of the tasks is on a CPU or waiting for one (R) or in an
// uninterruptible wait (D: a consumer writing its records out).  A task
// with tid 0 stands for every thread of its process; a task that is gone,
// or one that spins by design, is not busy.
bool consumer_busy(const std::vector<ConsumerTask>& tasks);

class ConsumerCatchUp {
 public:
  using BusyProbe = std::function<bool(const std::vector<ConsumerTask>&)>;
  explicit ConsumerCatchUp(std::chrono::microseconds bound = std::chrono::milliseconds(500),
                           BusyProbe busy = consumer_busy)
      : bound_(bound), busy_(std::move(busy)) {}

  // Before a traced block: returns once the tracer's consumer tasks are
  // idle, or after the bound (counted as a timeout); at once for a tracer
  // that names none.
  void before_traced_block(const Tracer& t);
  const CatchUpResult& tally() const { return tally_; }
  std::chrono::microseconds bound() const { return bound_; }

 private:
  std::chrono::microseconds bound_;
  BusyProbe busy_;
  CatchUpResult tally_;
};

}  // namespace tracebench
