#include "tracebench/clock.h"

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

namespace tracebench {
namespace {

double now_raw_ns() { return clock_ns(CLOCK_MONOTONIC_RAW); }

// ns = (cyc * time_mult) >> time_shift  =>  hz = 1e9 * 2^shift / mult
double tsc_hz_from_perf() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) return 0;
  long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, static_cast<size_t>(page), PROT_READ, MAP_SHARED, fd, 0);
  double hz = 0;
  if (p != MAP_FAILED) {
    auto* pc = static_cast<perf_event_mmap_page*>(p);
    if (pc->cap_user_time && pc->time_mult != 0) {
      hz = 1e9 * static_cast<double>(1ULL << pc->time_shift) / static_cast<double>(pc->time_mult);
    }
    munmap(p, static_cast<size_t>(page));
  }
  close(fd);
  return hz;
}

double calibrate_tsc_hz() {
  // Three 20 ms windows; keep the median so one preemption does not skew it.
  double est[3];
  for (double& e : est) {
    double n0 = now_raw_ns();
    std::uint64_t t0 = __rdtsc();
    while (now_raw_ns() - n0 < 20e6) {}
    std::uint64_t t1 = __rdtsc();
    double n1 = now_raw_ns();
    e = static_cast<double>(t1 - t0) * 1e9 / (n1 - n0);
  }
  if (est[0] > est[1]) std::swap(est[0], est[1]);
  if (est[1] > est[2]) std::swap(est[1], est[2]);
  if (est[0] > est[1]) std::swap(est[0], est[1]);
  return est[1];
}

}  // namespace

bool cpu_has_flag(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) { return (line + " ").find(" " + flag + " ") != std::string::npos; }
  }
  return false;
}

std::string_view to_string(EndRead e) {
  switch (e) {
    case EndRead::kRdtscp: return "rdtscp";
    case EndRead::kLfenceRdtsc: return "lfence_rdtsc";
  }
  return "?";
}

std::string_view to_string(MigrationMethod m) {
  switch (m) {
    case MigrationMethod::kTscAux: return "tsc_aux";
    case MigrationMethod::kTscAuxLearned: return "tsc_aux_learned";
    case MigrationMethod::kGetcpu: return "getcpu";
  }
  return "?";
}

TscInfo probe_tsc() {
  TscInfo info;
  info.calibrated_hz = calibrate_tsc_hz();
  double perf_hz = tsc_hz_from_perf();
  info.kernel_hz = perf_hz;
  if (perf_hz > 0) {
    info.hz = perf_hz;
    info.source = "perf_event_mmap_page";
  } else {
    info.hz = info.calibrated_hz;
    info.source = "calibrated";
  }
  info.invariant = cpu_has_flag("constant_tsc") && cpu_has_flag("nonstop_tsc");
  return info;
}

}  // namespace tracebench
