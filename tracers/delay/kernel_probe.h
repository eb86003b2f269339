// The delay tracer's kernel half: the companion module's delay probe on its
// own tracepoint tracebench:tracebench_fixed (kmod/delay_probe.c), driven
// through /dev/tracebench.  The module calibrates the probe in the kernel
// (its clock's rate against ktime_get_raw_ns(), a firing's cost through the
// real tracepoint) and registers it only while enabled, so an untraced
// event pays nothing for it.  Closing the device detaches it.
#pragma once

#include <cstdint>
#include <string>

#include "tracebench/status.h"

namespace tbdelay {

// The probe point the kernel half serves (bench/kmod.cc's kmod_fixed).
inline constexpr const char* kKernelProbeTarget = "tracebench:tracebench_fixed";

// What DELAY_SET chose and measured.
struct KernelCalibration {
  std::uint64_t clock_hz = 0;     // the module's clock against ktime_get_raw_ns()
  std::uint32_t kernel_khz = 0;   // the TSC rate the kernel uses (0: unknown)
  std::uint64_t spin_cycles = 0;  // the probe's spin
  double least_cycles = 0;        // a firing with the shortest spin
  double firing_cycles = 0;       // a firing with the spin chosen
  double firing_iqr_cycles = 0;   // the interquartile range of the windows behind it, per event
  double untraced_cycles = 0;     // an event of FIRE's loop without the probe
  double ns(double cycles) const { return clock_hz ? cycles / static_cast<double>(clock_hz) * 1e9 : 0; }
  double least_ns() const { return ns(least_cycles); }
  double firing_ns() const { return ns(firing_cycles); }
};

// What the probe did since DELAY_SET.
struct KernelProbeStatus {
  std::uint64_t firings = 0;
  std::uint64_t spent_cycles = 0;      // in the probe, first clock read to last
  std::uint64_t min_spent_cycles = 0;  // ... in the shortest firing (0: none)
  std::uint64_t enabled_cycles = 0;    // the enabled intervals, by the module's clock
  std::uint64_t enabled_ns = 0;        // ... and by ktime_get_raw_ns()
};

class KernelProbe {
 public:
  KernelProbe() = default;
  ~KernelProbe() { close(); }
  KernelProbe(const KernelProbe&) = delete;
  KernelProbe& operator=(const KernelProbe&) = delete;

  // Opens the device and checks the module's ABI and its delay probe.
  tracebench::Status open();
  // Calibrates the probe for `ns` per firing (the module refuses a `ns`
  // below its shortest firing: the error says what that costs here).
  tracebench::Status calibrate(std::uint32_t ns, KernelCalibration* out);
  tracebench::Status enable(bool on);
  tracebench::Status status(KernelProbeStatus* out);
  // Detaches the probe (the module does it when the file closes).
  void close() noexcept;

 private:
  int fd_ = -1;
};

// Why the kernel half cannot run here, or "" when it can: no module, an old
// one, no permission.
std::string kernel_probe_unavailable();

}  // namespace tbdelay
