#include "machine_state.h"

#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace tracebench::crosscheck {
namespace {

void pin(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  sched_setaffinity(0, sizeof set, &set);
}

double now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

}  // namespace

double probe_speed_ns(int cpu, const std::vector<int>& restore) {
  constexpr int kChunks = 50, kChunk = 100;
  pin({cpu});
  for (int i = 0; i < 500; ++i) syscall(SYS_getpid);
  std::vector<double> per(kChunks);
  for (double& p : per) {
    const double a = now_ns();
    for (int i = 0; i < kChunk; ++i) syscall(SYS_getpid);
    p = (now_ns() - a) / kChunk;
  }
  pin(restore);
  std::nth_element(per.begin(), per.begin() + kChunks / 2, per.end());
  return per[kChunks / 2];
}

bool steady(const std::vector<double>& probes_ns, double tolerance) {
  if (probes_ns.empty()) return true;
  const auto [lo, hi] = std::minmax_element(probes_ns.begin(), probes_ns.end());
  return *lo > 0 && std::isfinite(*hi) && *hi / *lo - 1.0 <= tolerance;
}

}  // namespace tracebench::crosscheck
