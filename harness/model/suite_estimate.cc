#include "suite_estimate.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tracebench::model {
namespace {

namespace fs = std::filesystem;

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

// How long a validate step measured for: its --seconds, else what the
// suite's flags give (2 s quick, 8 s by default).
double measured_for(const std::string& cmd, bool quick) {
  const std::string flag = " --seconds ";
  const auto at = cmd.find(flag);
  if (at == std::string::npos) return quick ? 2 : 8;
  return std::strtod(cmd.c_str() + at + flag.size(), nullptr);
}

// A suite.json's steps by kind, when it was made with these flags.
bool read_times(const fs::path& file, bool quick, double validation_seconds, StepTimes* out) {
  std::ifstream in(file);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || j.value("quick", !quick) != quick || !j.contains("steps") || !j["steps"].is_array())
    return false;
  StepTimes t;
  t.source = file.string();
  for (const auto& s : j["steps"]) {
    if (!s.is_object() || !s.value("seconds", nlohmann::json()).is_number()) return false;
    const std::string cmd = s.value("command", "");
    const double seconds = s["seconds"].get<double>();
    if (cmd.rfind("tracebench run ", 0) == 0) t.run.push_back(seconds);
    if (cmd.rfind("tracebench model fit ", 0) == 0) t.fit.push_back(seconds);
    if (cmd.rfind("tracebench model validate ", 0) == 0) {
      if (measured_for(cmd, quick) != validation_seconds) return false;
      t.validate.push_back(seconds);
    }
  }
  *out = std::move(t);
  return true;
}

}  // namespace

StepTimes earlier_step_times(const std::string& results, bool quick, double validation_seconds) {
  std::error_code ec;
  std::vector<fs::path> suites;
  for (fs::directory_iterator it(results, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path f = it->path() / "suite.json";
    if (it->path().filename().string().rfind("model-", 0) == 0 && fs::is_regular_file(f, ec)) suites.push_back(f);
  }
  // results/model-<UTC time>: the names sort as the times do.
  std::sort(suites.rbegin(), suites.rend());
  for (const fs::path& f : suites) {
    StepTimes t;
    if (read_times(f, quick, validation_seconds, &t)) return t;
  }
  return {};
}

std::string estimate_line(std::size_t runs, std::size_t validations, double validation_seconds,
                          const StepTimes& times) {
  const std::string steps = fmt::format("{} run{}, a fit and {} validation{} of {} s", runs, runs == 1 ? "" : "s",
                                        validations, validations == 1 ? "" : "s", validation_seconds);
  if (times.run.empty() || times.fit.empty() || (validations && times.validate.empty()))
    return fmt::format(
        "# estimate: {}; no earlier suite with these flags under results/ to time the steps from (the validations "
        "alone measure for {:.0f} s)",
        steps, validations * validation_seconds);
  const double run = mean_of(times.run), fit = mean_of(times.fit);
  const double validate = validations ? mean_of(times.validate) : 0;
  const double total = runs * run + fit + validations * validate;
  return fmt::format(
      "# estimate: about {:.0f} min: {}, at the means of {} ({} runs, {:.1f} s each; the fit {:.1f} s; "
      "validations {:.1f} s each)",
      std::max(1.0, total / 60), steps, times.source, times.run.size(), run, fit, validate);
}

}  // namespace tracebench::model
