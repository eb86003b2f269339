#include "lava_cases.h"

#include <fmt/format.h>

namespace tracebench::lava {

std::string case_name(const std::string& benchmark) {
  std::string out;
  for (char c : benchmark) {
    bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += c == '/' ? '.' : keep ? c : '_';
  }
  return out;
}

std::vector<CaseLine> benchmark_cases(const RunResult& run) {
  std::vector<CaseLine> cases;
  for (const auto& b : run.benchmarks) {
    const std::string& v = b.events.verification;
    const bool pass = b.status == "ok" && (v == "passed" || v == "not_applicable");
    cases.push_back({case_name(b.name), pass ? "pass" : "fail",
                     b.overhead_ns ? fmt::format("{:.3f}", b.overhead_ns->median) : "-"});
  }
  return cases;
}

}  // namespace tracebench::lava
