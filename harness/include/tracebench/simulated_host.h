// A simulated host (host_simulation.h) where a command fires a workload
// outside the runner's timed blocks (`model validate`'s paced segments): the
// same calibrated costs the blocks get, on the untraced and the traced path
// alike, so that what was tuned on a fast host meets the slow one there too.
#pragma once

#include <cstdint>
#include <memory>

#include "tracebench/status.h"
#include "tracebench/tracer.h"
#include "tracebench/workload.h"

namespace tracebench {

class SimulatedSteal;

// The simulated host's slow syscall in TSC cycles per event of a workload
// of this probe kind: where each event makes one (a syscall probe, a
// trace_marker write), else 0; 0 when nothing is simulated.  The runner's
// blocks and the paced runs add it alike.
std::uint64_t simulated_syscall_cycles_per_event(ProbeKind kind, double tsc_hz);

// `w` with the simulated host's slow syscalls (above); `w` itself when
// they add nothing.
std::unique_ptr<WorkloadState> with_simulated_syscalls(std::unique_ptr<WorkloadState> w, ProbeKind kind, double tsc_hz);

// The simulated host's stolen slices on the calling (measured) thread, from
// start() until it goes out of scope, reaching it only while a Window lives
// (a window spans a paced segment; the paced loop's sleeps restart on EINTR).
class SimulatedHostSteal {
 public:
  SimulatedHostSteal();
  ~SimulatedHostSteal();
  SimulatedHostSteal(const SimulatedHostSteal&) = delete;
  SimulatedHostSteal& operator=(const SimulatedHostSteal&) = delete;
  Status start();  // nothing when the simulation steals nothing

  class Window {
   public:
    Window();
    ~Window();
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;
  };

 private:
  std::unique_ptr<SimulatedSteal> steal_;
};

}  // namespace tracebench
