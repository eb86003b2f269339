// What the adapter tests that drive a tracer directly against the running
// kernel share: the getpid probe and its firing loop, the profile probe and
// a spin on the thread's CPU clock, an AttachSpec builder, a whole-file
// reader (tracefs files, /proc) and a workload fired around an enabled window.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "tracebench/tracer.h"
#include "tracebench/workload.h"

namespace tracebench::test {

inline ProbePoint getpid_probe() { return ProbePoint{"syscall:getpid", ProbeKind::kSyscall, "getpid", 0, "getpid(2)"}; }

inline void fire_getpid(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) syscall(SYS_getpid);
}

// The tracer's timer on the firing thread's CPU clock (bench/profile.cc's).
inline ProbePoint profile_probe() { return {"profile:cpu-clock", ProbeKind::kProfile, "cpu-clock", 0, ""}; }

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Burns `seconds` of this thread's CPU time.
inline void spin_cpu(double seconds) {
  const double until = thread_cpu_seconds() + seconds;
  while (thread_cpu_seconds() < until) {}
}

inline AttachSpec spec_for(ProbePoint p, std::map<std::string, std::string> options = {}) {
  AttachSpec s;
  s.probe = std::move(p);
  s.options = std::move(options);
  return s;
}

// `n` events of `w` before enable(), as many while enabled and after
// disable(), then drain(): a tracer that counts exactly recorded the middle
// n alone.  False, with what failed in *why, when a step did.
inline bool fire_around_enabled(Tracer& t, WorkloadState& w, std::uint64_t n, std::string* why) {
  w.fire(n);  // not enabled yet: unseen
  Status s = t.enable();
  if (s) {
    w.fire(n);
    s = t.disable();
  }
  if (s) {
    w.fire(n);
    s = t.drain();
  }
  if (!s) *why = s.message();
  return static_cast<bool>(s);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tracebench::test
