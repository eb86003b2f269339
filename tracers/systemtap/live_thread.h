// A thread of the probed process whose calls the BPF runtime's user-function
// script tells apart from the workload's: its tid is the script's target()
// (stapbpf -x), and the script counts only the process's other threads.
// enable() has it call the probed function until the script says its probe
// is live; it is parked (blocked, no wakeups) the rest of the time, so it
// costs a timed block nothing.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "tracebench/status.h"

namespace tracebench::systemtap {

class LiveThread {
 public:
  LiveThread() = default;
  LiveThread(const LiveThread&) = delete;
  LiveThread& operator=(const LiveThread&) = delete;
  ~LiveThread() { stop(); }
  // Starts the thread (parked); `fn` is what it calls.  Idempotent.
  void start(void (*fn)());
  pid_t tid() const { return tid_; }
  // Has the thread call fn every 2 ms until `live()` is true (checked here,
  // every 2 ms) or `timeout_s` passes; then parks it again.
  Status fire_until(const std::function<bool()>& live, unsigned timeout_s);
  void stop() noexcept;

 private:
  void loop();
  void (*fn_)() = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool firing_ = false, quit_ = false;
  pid_t tid_ = 0;
};

}  // namespace tracebench::systemtap
