// `model suite --plan`'s estimate: the steps timed by an earlier suite's
// suite.json with the same flags (the newest), or no total without one.
#include "harness/model/suite_estimate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tracebench::model {
namespace suite_estimate_test {

namespace fs = std::filesystem;

class SuiteEstimate : public ::testing::Test {
 protected:
  void SetUp() override {
    results_ = fs::temp_directory_path() / fmt::format("tracebench-suite-estimate-{}", getpid());
    fs::remove_all(results_);
    fs::create_directories(results_);
  }
  void TearDown() override { fs::remove_all(results_); }

  // results/<name>/suite.json with runs of `run_s` seconds each, a fit of
  // 1.5 s and validations of `validate_s` (their command's flags: `flags`).
  void suite(const std::string& name, bool quick, std::vector<double> run_s, std::vector<double> validate_s,
             const std::string& flags) {
    nlohmann::json steps = nlohmann::json::array();
    for (double s : run_s) steps.push_back({{"command", "tracebench run -t perf --quick --out x"}, {"seconds", s}});
    steps.push_back({{"command", "tracebench model fit x/runs --out x/model.json"}, {"seconds", 1.5}});
    for (double s : validate_s)
      steps.push_back(
          {{"command", "tracebench model validate --model m -t perf " + flags + " --out v"}, {"seconds", s}});
    fs::create_directories(results_ / name);
    std::ofstream(results_ / name / "suite.json") << nlohmann::json{{"quick", quick}, {"steps", steps}}.dump();
  }
  fs::path results_;
};

TEST_F(SuiteEstimate, WithoutAnEarlierSuiteNoTotal) {
  const StepTimes t = earlier_step_times((results_ / "absent").string(), true, 2);
  EXPECT_TRUE(t.source.empty());
  const std::string line = estimate_line(51, 8, 2, t);
  EXPECT_EQ(line,
            "# estimate: 51 runs, a fit and 8 validations of 2 s; no earlier suite with these flags under results/ "
            "to time the steps from (the validations alone measure for 16 s)");
}

TEST_F(SuiteEstimate, TheNewestSuiteWithTheSameFlagsTimesTheSteps) {
  suite("model-20261130T100000Z", true, {2.0, 3.0, 4.0}, {3.5, 4.5}, "--quick");
  suite("model-20261130T120000Z", true, {2.0, 6.0, 10.0, 12.0}, {5.0, 7.0}, "--quick");  // the newest quick one
  suite("model-20261201T080000Z", false, {30.0}, {9.0}, "--seconds 8");                  // not quick
  fs::create_directories(results_ / "model-20261201T090000Z");
  std::ofstream(results_ / "model-20261201T090000Z" / "suite.json") << "{ cut";  // unreadable: skipped
  suite("other-20261201T100000Z", true, {1.0}, {1.0}, "--quick");                // not a model-* folder
  const StepTimes t = earlier_step_times(results_.string(), true, 2);
  EXPECT_EQ(t.source, (results_ / "model-20261130T120000Z" / "suite.json").string());
  EXPECT_EQ(t.run, (std::vector<double>{2.0, 6.0, 10.0, 12.0}));
  // 50 runs x 7.5 s (the mean) + 1.5 + 8 x 6 s = 424.5 s: about 7 min.
  EXPECT_EQ(estimate_line(50, 8, 2, t),
            fmt::format("# estimate: about 7 min: 50 runs, a fit and 8 validations of 2 s, at the means of {} (4 "
                        "runs, 7.5 s each; the fit 1.5 s; validations 6.0 s each)",
                        t.source));
  // Validations of another length: that suite is not this plan's.
  EXPECT_TRUE(earlier_step_times(results_.string(), false, 16).source.empty());
  EXPECT_EQ(earlier_step_times(results_.string(), false, 8).source,
            (results_ / "model-20261201T080000Z" / "suite.json").string());
}

}  // namespace suite_estimate_test
}  // namespace tracebench::model
