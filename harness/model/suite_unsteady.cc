#include "suite_unsteady.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace tracebench::model {

namespace fs = std::filesystem;

std::set<std::string> run_folders(const std::string& runs) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) names.insert(it->path().filename().string());
  return names;
}

std::vector<std::string> unsteady_since(const std::string& runs, const std::set<std::string>& before) {
  std::vector<std::string> names;
  for (const auto& folder : run_folders(runs)) {
    if (before.count(folder)) continue;
    std::ifstream in(fs::path(runs) / folder / "result.json");
    // A result that cannot be read has no benchmark for the fit either way;
    // the fit says so (model fit reads every result).
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array()) continue;
    for (const auto& b : j["benchmarks"])
      if (b.value("status", "") == "unsteady") names.push_back(b.value("name", "?"));
  }
  return names;
}

int measure_until_steady(const std::function<int()>& step, const std::string& runs, int attempts, std::ostream& say) {
  for (int attempt = 1;; ++attempt) {
    const std::set<std::string> before = run_folders(runs);
    const int rc = step();
    if (rc != 0) return rc;
    const std::vector<std::string> unsteady = unsteady_since(runs, before);
    if (unsteady.empty()) return 0;
    if (attempt >= attempts) {
      say << fmt::format("    unsteady in {} attempts: {}; the fit goes without it\n", attempts,
                         fmt::join(unsteady, ", "))
          << std::flush;
      return 0;
    }
    say << fmt::format("    unsteady (the overhead changed level, no figure): {}; measured again ({} of {})\n",
                       fmt::join(unsteady, ", "), attempt + 1, attempts)
        << std::flush;
  }
}

}  // namespace tracebench::model
