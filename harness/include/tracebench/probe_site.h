// A probe point that cannot be shared.  A uprobe traps in every process that
// maps the probed file: the kernel writes an int3 (or, where it optimises a
// 5-byte nop, a jump) into each mapping's copy of the page, while the file
// on disk keeps the original bytes.  So while no tracer of this run is
// attached, the executable's code as mapped here must equal the file: a
// difference is a probe someone else placed (a SIGKILLed run's, a bpftrace,
// another tracebench) whose traps would be in the baseline, and the
// benchmark fails with what was found instead of a figure.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench {

// One line of /proc/<pid>/maps.
struct MappedRange {
  std::uintptr_t start = 0, end = 0;
  std::uint64_t file_offset = 0;
  bool executable = false;
  dev_t dev = 0;
  ino_t inode = 0;
  std::string path;
};
// The mapping that holds `address` in `maps` (the text of /proc/<pid>/maps).
bool find_mapping(std::string_view maps, std::uintptr_t address, MappedRange* out);

// The offsets at which `mapped` and `on_disk` differ (compared over the
// shorter of the two), at most `max` of them; `total` gets how many there are.
std::vector<std::size_t> differing_offsets(const std::uint8_t* mapped, const std::uint8_t* on_disk, std::size_t n,
                                           std::size_t max, std::size_t* total);

// Lines of uprobe_events (its text) that probe `file`: those whose path names
// the same inode (`dev`, `inode`), or, when the path cannot be looked up,
// the same path.
std::vector<std::string> uprobe_entries_on(std::string_view uprobe_events, const std::string& file, dev_t dev,
                                           ino_t inode);

// Compares code of this process as mapped with the file it maps, byte for
// byte: with an `address` (a probe site), its first instructions, up to the
// next 16-byte boundary (where the next function of a site family starts, so
// a probe on a neighbour is not this site's); with 0, the whole executable
// mapping of this binary (a site whose address the harness does not know,
// such as a USDT note's).  The error names the file, where it differs, the
// uprobe_events entries on the file, and what to do.  `unchecked` gets a
// reason when the comparison could not be made (the file unreadable): a
// warning, not a verdict.
Status check_probe_site_unshared(std::uintptr_t address, const std::string& probe, std::string* unchecked);

// The check for a workload's probe point: a user function's site, this
// binary's code for a USDT or LTTng-UST site (their addresses are the
// tracers' to find), nothing for probes in the kernel (a uprobe in user
// space does not move their events).
Status check_probe_point_unshared(const ProbePoint& p, std::string* unchecked);

}  // namespace tracebench
