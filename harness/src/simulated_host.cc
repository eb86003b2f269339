#include "tracebench/simulated_host.h"

#include "injected_cost.h"
#include "simulated_steal.h"
#include "tracebench/host_simulation.h"

namespace tracebench {

std::uint64_t simulated_syscall_cycles_per_event(ProbeKind kind, double tsc_hz) {
  const bool syscall_per_event = kind == ProbeKind::kSyscall || kind == ProbeKind::kMarker;
  return syscall_per_event ? simulated_syscall_cycles(host_simulation(), tsc_hz) : 0;
}

std::unique_ptr<WorkloadState> with_simulated_syscalls(std::unique_ptr<WorkloadState> w, ProbeKind kind,
                                                       double tsc_hz) {
  const std::uint64_t cycles = simulated_syscall_cycles_per_event(kind, tsc_hz);
  if (cycles == 0) return w;
  return std::make_unique<InjectedCost>(std::move(w), cycles);
}

SimulatedHostSteal::SimulatedHostSteal() = default;
SimulatedHostSteal::~SimulatedHostSteal() = default;

Status SimulatedHostSteal::start() {
  steal_ = std::make_unique<SimulatedSteal>();
  return steal_->start(host_simulation());
}

SimulatedHostSteal::Window::Window() {
  if (steal_detail::g_active.load(std::memory_order_relaxed)) steal_detail::open_window();
}

SimulatedHostSteal::Window::~Window() {
  if (steal_detail::g_active.load(std::memory_order_relaxed)) steal_detail::close_window();
}

}  // namespace tracebench
