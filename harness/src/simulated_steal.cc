#include "simulated_steal.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>

namespace tracebench {

namespace {

// A real-time signal nothing else in the suite uses.
int steal_signal() { return SIGRTMIN + 3; }

std::atomic<std::int64_t> g_steal_ns{0};

std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

void spin_away(int) {
  const int saved = errno;
  const std::int64_t until = now_ns() + g_steal_ns.load(std::memory_order_relaxed);
  while (now_ns() < until) {}
  errno = saved;
}

sigset_t steal_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, steal_signal());
  return set;
}

}  // namespace

namespace steal_detail {
std::atomic<bool> g_active{false};
void open_window() {
  const sigset_t set = steal_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}
void close_window() {
  const sigset_t set = steal_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}
}  // namespace steal_detail

Status SimulatedSteal::start(const HostSimulation& sim) {
  if (!(sim.steal_hz > 0 && sim.steal_us > 0)) return Status::ok();
  g_steal_ns.store(std::llround(sim.steal_us * 1e3), std::memory_order_relaxed);
  struct sigaction sa {};
  sa.sa_handler = spin_away;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(steal_signal(), &sa, nullptr) != 0) return errno_status("sigaction (simulated steal)", errno);
  handler_set_ = true;
  steal_detail::close_window();  // until a timed block opens it
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = steal_signal();
  ev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer_) != 0) return errno_status("timer_create (simulated steal)", errno);
  timer_made_ = true;
  const auto period_ns = static_cast<long>(std::llround(1e9 / sim.steal_hz));
  itimerspec its{};
  its.it_interval.tv_sec = period_ns / 1000000000;
  its.it_interval.tv_nsec = period_ns % 1000000000;
  its.it_value = its.it_interval;
  if (timer_settime(timer_, 0, &its, nullptr) != 0) return errno_status("timer_settime (simulated steal)", errno);
  steal_detail::g_active = true;
  return Status::ok();
}

SimulatedSteal::~SimulatedSteal() {
  steal_detail::g_active = false;
  if (timer_made_) timer_delete(timer_);
  // A signal the timer sent before it was deleted may still be pending: its
  // default action would end the process, so it is ignored from now on.
  if (handler_set_) signal(steal_signal(), SIG_IGN);
}

}  // namespace tracebench
