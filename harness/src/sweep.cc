#include "tracebench/sweep.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tracebench {

std::vector<std::size_t> quick_payloads(const std::string& action, ProbeKind kind,
                                        const std::vector<std::size_t>& sweep) {
  const bool counts = action == "count" || action == "none";
  if (!counts || kind == ProbeKind::kMarker || sweep.size() < 2) return sweep;
  return {sweep.front()};
}

Status settle_sweep(std::vector<std::string> not_applicable, Plan* plan) {
  if (not_applicable.empty()) return Status::ok();
  std::sort(not_applicable.begin(), not_applicable.end());
  if (plan->specs.empty())
    return Status::error(fmt::format("nothing to run: none of the {} planned combination(s) applies:\n  {}",
                                     not_applicable.size(), fmt::join(not_applicable, "\n  ")));
  for (const auto& line : not_applicable) {
    // "what: why", the first ": " splitting them (a benchmark name has none).
    const auto at = line.find(": ");
    if (at == std::string::npos)
      plan->skipped.emplace_back(line, "does not apply");
    else
      plan->skipped.emplace_back(line.substr(0, at), line.substr(at + 2));
  }
  return Status::ok();
}

}  // namespace tracebench
