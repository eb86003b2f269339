// What an independent tool recorded of the events the reference loop fired,
// and whether that accounts for them.
#pragma once

#include <cstdint>
#include <string>

namespace tracebench::crosscheck {

// What the tool recorded of a traced run's events.
struct ToolCounts {
  bool counted = false;  // the tool reports its count (perf bench, the loop alone: nothing to count)
  std::uint64_t fired = 0, recorded = 0, lost = 0;
  std::uint64_t payload_checked = 0, payload_bad = 0;
  std::string how;  // where the count comes from ("bpftrace's @ map", "perf report --stats", ...)
};

// Every event the loop fired is accounted for (recorded + lost == fired),
// at most 5% were lost (the suite's --max-lost-percent default), and no
// payload differs: the reference measured what it claims.
bool counts_verified(const ToolCounts& c);
std::string describe_counts(const ToolCounts& c);

}  // namespace tracebench::crosscheck
