// The model suite measures again while a run comes out unsteady: a step
// that writes crafted run folders, as `tracebench run` does.
#include "harness/model/suite_unsteady.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace tracebench::model {
namespace {

namespace fs = std::filesystem;

class SuiteUnsteady : public ::testing::Test {
 protected:
  void SetUp() override {
    runs_ = fs::temp_directory_path() / fmt::format("tracebench-suite-unsteady-{}", getpid());
    fs::remove_all(runs_);
  }
  void TearDown() override { fs::remove_all(runs_); }

  // A step that writes one run folder whose benchmark has `status`, one of
  // `statuses` per call in turn, and returns `rc`.
  std::function<int()> step(std::vector<std::string> statuses, int rc = 0) {
    return [this, statuses, rc] {
      const std::string status = statuses[std::min(calls_, statuses.size() - 1)];
      const fs::path dir = runs_ / fmt::format("run-{}", calls_++);
      fs::create_directories(dir);
      std::ofstream(dir / "result.json") << fmt::format(
          R"({{"benchmarks": [{{"name": "t/w/a/payload:0/threads:1", "status": "{}"}},)"
          R"( {{"name": "t/w/a/payload:64/threads:1", "status": "ok"}}]}})",
          status);
      return rc;
    };
  }

  fs::path runs_;
  std::size_t calls_ = 0;
};

TEST_F(SuiteUnsteady, MeasuresAgainUntilNoBenchmarkIsUnsteady) {
  std::ostringstream say;
  EXPECT_EQ(measure_until_steady(step({"unsteady", "ok"}), runs_.string(), kUnsteadyAttempts, say), 0);
  EXPECT_EQ(calls_, 2u);
  EXPECT_NE(say.str().find("unsteady (the overhead changed level, no figure): t/w/a/payload:0/threads:1; measured "
                           "again (2 of 3)"),
            std::string::npos)
      << say.str();
  // Both attempts are kept: nothing measured is thrown away.
  EXPECT_EQ(run_folders(runs_.string()).size(), 2u);
}

TEST_F(SuiteUnsteady, SteadyRunIsMeasuredOnce) {
  std::ostringstream say;
  EXPECT_EQ(measure_until_steady(step({"ok"}), runs_.string(), kUnsteadyAttempts, say), 0);
  EXPECT_EQ(calls_, 1u);
  EXPECT_EQ(say.str(), "");
}

TEST_F(SuiteUnsteady, GivesUpAfterTheAttemptsAndSaysSo) {
  std::ostringstream say;
  EXPECT_EQ(measure_until_steady(step({"unsteady"}), runs_.string(), kUnsteadyAttempts, say), 0);
  EXPECT_EQ(calls_, 3u);
  EXPECT_NE(say.str().find("unsteady in 3 attempts: t/w/a/payload:0/threads:1; the fit goes without it"),
            std::string::npos)
      << say.str();
}

TEST_F(SuiteUnsteady, FailedStepIsNotRepeated) {
  std::ostringstream say;
  EXPECT_EQ(measure_until_steady(step({"unsteady"}, 1), runs_.string(), kUnsteadyAttempts, say), 1);
  EXPECT_EQ(calls_, 1u);
}

TEST_F(SuiteUnsteady, OnlyTheNewRunsFoldersAreRead) {
  // An unsteady run of an earlier step is not this step's.
  step({"unsteady"})();
  const auto before = run_folders(runs_.string());
  step({"ok"})();
  EXPECT_TRUE(unsteady_since(runs_.string(), before).empty());
  EXPECT_EQ(unsteady_since(runs_.string(), {}).size(), 1u);
  // A folder without a readable result has nothing for the fit either way.
  fs::create_directories(runs_ / "broken");
  std::ofstream(runs_ / "broken" / "result.json") << "{not json";
  EXPECT_EQ(unsteady_since(runs_.string(), before).size(), 0u);
}

}  // namespace
}  // namespace tracebench::model
