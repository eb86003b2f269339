// Helpers the adapters share: files, processes, address lookups.  One
// meaning each, so that adapters agree (one `pid_alive`, one way to map an
// address to the file a uprobe needs).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench::common {

// The whole file; "" when it cannot be read (read_file says which).
std::string read_text(const std::string& path);
bool read_file(const std::string& path, std::string* out);

// The process exists and has not exited (a zombie has), whoever owns it.
bool pid_alive(pid_t pid);

// CPUs in /sys/devices/system/cpu/online ("0-3,6").
std::vector<int> online_cpus();

// A runtime address in `pid` as (file, file offset) via /proc/<pid>/maps:
// what a uprobe needs.  An error says why not (anonymous, not executable,
// the binary replaced on disk, unmapped).
Status address_to_file_offset(pid_t pid, std::uintptr_t addr, std::string* file, std::uint64_t* offset);

}  // namespace tracebench::common
