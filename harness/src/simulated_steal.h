// The simulated host's stolen time (host_simulation.h: steal_hz, steal_us):
// a timer that signals the measured thread steal_hz times a second, and a
// handler that spins steal_us on it, as a hypervisor that takes the CPU away
// in short, frequent slices.  Started by the runner on the measured thread;
// stopped (the timer deleted, its signal ignored) when it goes out of scope.
//
// The signal reaches the thread only inside timed blocks (StealWindow): a
// hypervisor's stolen time interrupts no system call, and a signal does: the
// BPF verifier gives up with EAGAIN when one is pending (a ringbuf program
// failed to load five times over at 5,000 signals a second), poll and
// nanosleep return EINTR.  Outside the windows it is blocked, so at most one
// waits for the next window (a POSIX timer's signal is queued once).
#pragma once

#include <signal.h>
#include <time.h>

#include <atomic>

#include "tracebench/host_simulation.h"
#include "tracebench/status.h"

namespace tracebench {

class SimulatedSteal {
 public:
  SimulatedSteal() = default;
  ~SimulatedSteal();
  SimulatedSteal(const SimulatedSteal&) = delete;
  SimulatedSteal& operator=(const SimulatedSteal&) = delete;

  // On the calling thread; nothing when the simulation steals nothing.
  Status start(const HostSimulation& sim);

 private:
  bool timer_made_ = false, handler_set_ = false;
  timer_t timer_{};
};

namespace steal_detail {
extern std::atomic<bool> g_active;  // a SimulatedSteal is running on the measured thread
void open_window();
void close_window();
}  // namespace steal_detail

// While it lives, the simulated steal's signal reaches the calling (measured)
// thread: around a timed block's samples.  Nothing when no steal runs.
class StealWindow {
 public:
  StealWindow() {
    if (steal_detail::g_active.load(std::memory_order_relaxed)) steal_detail::open_window();
  }
  ~StealWindow() {
    if (steal_detail::g_active.load(std::memory_order_relaxed)) steal_detail::close_window();
  }
  StealWindow(const StealWindow&) = delete;
  StealWindow& operator=(const StealWindow&) = delete;
};

}  // namespace tracebench
