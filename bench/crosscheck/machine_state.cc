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

bool steady(const std::vector<double>& seen_ns, double fastest_ns, double tolerance) {
  if (seen_ns.empty()) return true;
  const double hi = *std::max_element(seen_ns.begin(), seen_ns.end());
  return fastest_ns > 0 && std::isfinite(hi) && hi / fastest_ns - 1.0 <= tolerance;
}

bool one_state(const std::vector<double>& seen_ns, double tolerance) {
  if (seen_ns.empty()) return true;
  const auto [lo, hi] = std::minmax_element(seen_ns.begin(), seen_ns.end());
  return *lo > 0 && std::isfinite(*hi) && *hi / *lo - 1.0 <= tolerance;
}

}  // namespace tracebench::crosscheck
