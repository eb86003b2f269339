#include "counts.h"

#include <fmt/format.h>

namespace tracebench::crosscheck {

bool counts_verified(const ToolCounts& c) {
  return c.counted && c.recorded > 0 && c.recorded + c.lost == c.fired && c.lost * 20 <= c.fired && c.payload_bad == 0;
}

std::string describe_counts(const ToolCounts& c) {
  if (!c.counted) return "nothing recorded to count";
  std::string s = fmt::format("recorded {} + lost {} of {} fired", c.recorded, c.lost, c.fired);
  if (c.payload_checked > 0)
    s += fmt::format(", {} events' fields checked, {} differ", c.payload_checked, c.payload_bad);
  return s;
}

}  // namespace tracebench::crosscheck
