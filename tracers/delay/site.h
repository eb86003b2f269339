// The delay tracer's probe site: a known cost on the traced path only.
//
//   tbdelay::site();   // in a workload, where its events fire
//
// The tracer's enable() stores the handler's spin (TSC cycles) in one switch
// and disable() stores 0, so an untraced event pays one load and a
// predicted-not-taken branch, and a traced one the same plus the handler: a
// call that busy-waits the calibrated cycles (rdtsc spin).  Both blocks run
// the same code; the difference is the handler alone, which is what the
// suite must recover (`tracebench selftest`).
#pragma once

#include <atomic>
#include <cstdint>

namespace tbdelay {

// Cycles the handler spins per event while the tracer is enabled; 0 while
// it is not (the switch).
extern std::atomic<std::uint64_t> g_spin_cycles;

// The handler: counts the event for the firing thread, then spins until
// `cycles` TSC cycles have passed since it began.  Out of line, so that the
// untraced path stays a load and a branch.
void handle(std::uint64_t cycles);

inline void site() {
  const std::uint64_t cycles = g_spin_cycles.load(std::memory_order_relaxed);
  if (__builtin_expect(cycles != 0, 0)) handle(cycles);
}

// Probe points whose name begins with this carry a site (bench/delay_sites.cc):
// the only ones the delay tracer supports.
inline constexpr const char* kProbePrefix = "delay:";

}  // namespace tbdelay
