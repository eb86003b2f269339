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

namespace {

std::string case_result(const BenchmarkResult& b) {
  if (b.status == "skipped") return "skip";
  const std::string& v = b.events.verification;
  const bool events_right = v == "passed" || v == "not_applicable";
  if (!events_right) return "fail";
  if (b.status == "ok") return "pass";
  return b.status == "unsteady" ? "unknown" : "fail";
}

}  // namespace

std::vector<CaseLine> benchmark_cases(const RunResult& run) {
  std::vector<CaseLine> cases;
  for (const auto& b : run.benchmarks)
    cases.push_back(
        {case_name(b.name), case_result(b), b.overhead_ns ? fmt::format("{:.3f}", b.overhead_ns->median) : "-"});
  return cases;
}

}  // namespace tracebench::lava
