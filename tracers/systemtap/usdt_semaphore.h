// A USDT site's semaphore in a running process: sys/sdt.h's guarded sites
// fire only while it is above 0, and a tracer raises it when it places the
// site's probe in the process (SystemTap's runtime writes it itself).  The
// adapter reads it to see the probe placed before a timed block.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "tracebench/status.h"

namespace tracebench::systemtap {

// The address a file offset of `exe` has in a process, from its maps
// (`maps`: the text of /proc/<pid>/maps); 0 when no mapping of exe holds it.
std::uint64_t mapped_address(const std::string& maps, const std::string& exe, std::uint64_t file_offset);

class UsdtSemaphore {
 public:
  // Finds provider:name's semaphore in `exe` (its SDT notes) and where
  // `pid` maps it.  An unguarded site (no semaphore) is an error.
  Status locate(pid_t pid, const std::string& exe, const std::string& provider, const std::string& name);
  // Its value now (through /proc/<pid>/mem).
  Status read(unsigned* value) const;

 private:
  pid_t pid_ = 0;
  std::uint64_t address_ = 0;
};

}  // namespace tracebench::systemtap
