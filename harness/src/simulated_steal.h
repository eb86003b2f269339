// The simulated host's stolen time (host_simulation.h: steal_hz, steal_us):
// a timer that signals the measured thread steal_hz times a second, and a
// handler that spins steal_us on it, as a hypervisor that takes the CPU away
// in short, frequent slices.  Started by the runner on the measured thread;
// stopped (the timer deleted, its signal ignored) when it goes out of scope.
#pragma once

#include <signal.h>
#include <time.h>

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

}  // namespace tracebench
