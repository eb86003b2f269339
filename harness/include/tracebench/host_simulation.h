// A slow, noisy host with a coarse clock, simulated on whatever machine the
// tests run on, so that what was tuned on a fast host cannot pass unnoticed.
//
//   TRACEBENCH_SIMULATE_HOST=bhyve tracebench run --quick ...
//   TRACEBENCH_SIMULATE_HOST=tsc_step=21,no_rdtscp,syscall_ns=875,steal_hz=5000,steal_us=4 ...
//
// What it changes, each on both the traced and the untraced path:
//   tsc_step    every TSC read the suite times with is rounded down to a
//               multiple of this many cycles (some hypervisors' TSC ticks
//               in steps of 21 cycles): timed regions, the clock
//               self-check, the delay tracer's spin, the injected cost;
//   no_rdtscp   CPUID's RDTSCP bit is taken as absent: regions end with
//               lfence; rdtsc; lfence and migrations are detected with
//               sched_getcpu(), as on such a host;
//   syscall_ns  each event of a workload that makes a syscall per event costs
//               this much more (a calibrated spin after the batch: a host
//               whose syscalls cost ~1 us);
//   steal_hz, steal_us
//               the measured thread loses steal_us every 1/steal_hz seconds
//               (a timer's signal that spins on it: a hypervisor that takes
//               the CPU away in short, frequent slices), plus what the
//               timer's interrupt and the signal cost here (on a VM whose
//               timer exits are dear, tens of microseconds more).
// `bhyve` is the set seen on a bhyve-like host: tsc_step=21, no_rdtscp,
// syscall_ns=875, steal_hz=5000, steal_us=4.
//
// A run on a simulated host says so in its context (`simulated_host`) and
// its warnings; it is never a figure of this machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tracebench/status.h"

namespace tracebench {

inline constexpr const char* kHostSimulationEnv = "TRACEBENCH_SIMULATE_HOST";

struct HostSimulation {
  std::uint64_t tsc_step = 1;
  bool no_rdtscp = false;
  double syscall_ns = 0;
  double steal_hz = 0;
  double steal_us = 0;
  std::string spec;  // as given; "" when nothing is simulated
  bool active() const { return !spec.empty(); }
};

// "bhyve", or a comma list of key=value (no_rdtscp takes no value).
Status parse_host_simulation(std::string_view spec, HostSimulation* out);

// The simulation the environment asks for, read once; an invalid one is
// reported by host_simulation_status() and simulates nothing.
const HostSimulation& host_simulation();
Status host_simulation_status();
// For tests: simulate `s` from now on (the TSC step included).
void set_host_simulation(const HostSimulation& s);

// The simulated cost of a syscall in TSC cycles (0 when none is simulated).
std::uint64_t simulated_syscall_cycles(const HostSimulation& s, double tsc_hz);

// The TSC step every timed read is rounded down to (1: none).
extern std::uint64_t g_simulated_tsc_step;

// A TSC value as the simulated host's clock would have shown it.
inline std::uint64_t seen_tsc(std::uint64_t raw) {
  const std::uint64_t step = g_simulated_tsc_step;
  return step > 1 ? raw - raw % step : raw;
}

}  // namespace tracebench
