// What the adapter tests that drive a tracer directly against the running
// kernel share: the getpid probe and its firing loop, an AttachSpec builder
// and a whole-file reader (tracefs files, /proc).
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "tracebench/tracer.h"

namespace tracebench::test {

inline ProbePoint getpid_probe() {
  return ProbePoint{"syscall:getpid", ProbeKind::kSyscall, "getpid", 0, "getpid(2)"};
}

inline void fire_getpid(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) syscall(SYS_getpid);
}

inline AttachSpec spec_for(ProbePoint p, std::map<std::string, std::string> options = {}) {
  AttachSpec s;
  s.probe = std::move(p);
  s.options = std::move(options);
  return s;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tracebench::test
