#include "tracebench/cli.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace tracebench {
namespace {

int run_cli(std::vector<std::string> args, std::string* out = nullptr, std::string* err = nullptr) {
  // `run` checks its --out (default: results/ in the working directory)
  // before anything else: give it a writable one, so these tests run where
  // the build tree is read-only (`ctest -L unit` as a user who did not build).
  if (!args.empty() && args[0] == "run" && std::find(args.begin(), args.end(), "--out") == args.end()) {
    args.push_back("--out");
    args.push_back((std::filesystem::temp_directory_path() / "tracebench-cli-test").string());
  }
  args.insert(args.begin(), "tracebench");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  int rc = cli_main(static_cast<int>(argv.size()), argv.data());
  std::string o = testing::internal::GetCapturedStdout();
  std::string e = testing::internal::GetCapturedStderr();
  if (out) *out = o;
  if (err) *err = e;
  return rc;
}

TEST(Cli, RequiresASubcommand) { EXPECT_NE(run_cli({}), 0); }

TEST(Cli, ListJsonNamesTracersAndWorkloads) {
  std::string out;
  ASSERT_EQ(run_cli({"list", "--json"}, &out), 0);
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["tracers"][0]["name"], "none");
  bool has_getpid = false;
  for (const auto& w : j["workloads"]) has_getpid |= w["name"] == "getpid";
  EXPECT_TRUE(has_getpid);
}

TEST(Cli, EnvGivesEveryTracerAVerdictAndUnavailableOnesOnlyTheirReason) {
  std::string out;
  ASSERT_EQ(run_cli({"env", "--json"}, &out), 0);
  auto j = nlohmann::json::parse(out);
  ASSERT_FALSE(j["tracers"].empty());
  for (const auto& t : j["tracers"]) {
    SCOPED_TRACE(t.dump());
    if (t["available"].get<bool>()) {
      EXPECT_FALSE(t.contains("reason"));
    } else {
      EXPECT_FALSE(t["reason"].get<std::string>().empty());
      EXPECT_FALSE(t.contains("details"));  // a tracer that cannot run has no configuration to show
    }
  }
  EXPECT_EQ(j["tracers"][0]["name"], "none");
  EXPECT_TRUE(j["tracers"][0]["available"].get<bool>());
}

TEST(Cli, UnknownTracerIsAClearError) {
  std::string err;
  EXPECT_EQ(run_cli({"run", "--tracer", "nosuch", "--plan"}, nullptr, &err), 2);
  EXPECT_NE(err.find("unknown tracer 'nosuch'"), std::string::npos) << err;
}

TEST(Cli, UnknownWorkloadIsAClearError) {
  std::string err;
  EXPECT_EQ(run_cli({"run", "--workload", "nosuch", "--plan"}, nullptr, &err), 2);
  EXPECT_NE(err.find("unknown workload 'nosuch'"), std::string::npos) << err;
}

TEST(Cli, OptionsMustNameTheirTracer) {
  std::string err;
  EXPECT_EQ(run_cli({"run", "--tracer", "none", "--option", "wakeup=1", "--plan"}, nullptr, &err), 2);
  EXPECT_NE(err.find("<tracer>.<key>=<value>"), std::string::npos) << err;
  EXPECT_EQ(run_cli({"run", "--tracer", "none", "--option", "bogus.k=v", "--plan"}, nullptr, &err), 2);
  EXPECT_NE(err.find("unknown tracer 'bogus'"), std::string::npos) << err;
}

TEST(Cli, ThreadsAndRepetitionsAreRangeChecked) {
  EXPECT_EQ(run_cli({"run", "--tracer", "none", "--threads", "0", "--plan"}), 2);
  EXPECT_EQ(run_cli({"run", "--tracer", "none", "--threads", "4096", "--plan"}), 2);
  EXPECT_EQ(run_cli({"run", "--tracer", "none", "--repetitions", "1", "--plan"}), 2);
  EXPECT_NE(run_cli({"run", "--tracer", "none", "--repetitions", "x", "--plan"}), 0);
}

TEST(Cli, PlanExpandsPayloadSweepOnlyForPayloadWorkloads) {
  std::string out;
  ASSERT_EQ(run_cli({"run", "--tracer", "none", "--workload", "write_null", "--workload", "getpid", "--payload", "0",
                     "--payload", "256", "--plan"},
                    &out),
            0);
  EXPECT_NE(out.find("none/write_null/none/payload:256/threads:1"), std::string::npos) << out;
  EXPECT_NE(out.find("none/getpid/none/payload:0/threads:1"), std::string::npos) << out;
  EXPECT_EQ(out.find("none/getpid/none/payload:256"), std::string::npos) << out;
}

// `-p 0` is what a workload without a payload runs at: accepted (the model's
// handler-count commands say `-p 0` for every workload); `-p 64` is refused.
TEST(Cli, PayloadZeroAloneIsAcceptedForAWorkloadWithoutOne) {
  std::string out;
  ASSERT_EQ(run_cli({"run", "-t", "none", "-w", "getpid", "-p", "0", "--plan"}, &out), 0) << out;
  EXPECT_NE(out.find("none/getpid/none/payload:0/threads:1"), std::string::npos) << out;
  EXPECT_NE(run_cli({"run", "-t", "none", "-w", "getpid", "-p", "0", "-p", "64", "--plan"}, &out), 0);
}

TEST(Cli, GapIsNamedRangeCheckedAndForOneThread) {
  std::string out, err;
  ASSERT_EQ(run_cli({"run", "-t", "none", "-w", "getpid", "--gap-us", "1000", "--plan"}, &out), 0) << out;
  EXPECT_NE(out.find("none/getpid/none/payload:0/threads:1/gap_us:1000"), std::string::npos) << out;
  EXPECT_EQ(run_cli({"run", "-t", "none", "-w", "getpid", "--gap-us", "0", "--plan"}, nullptr, &err), 2);
  EXPECT_NE(err.find("--gap-us 0 is outside 1..100000"), std::string::npos) << err;
  EXPECT_EQ(run_cli({"run", "-t", "none", "-w", "getpid", "--gap-us", "1000", "-j", "1", "-j", "2", "--plan"}, nullptr,
                    &err),
            2);
  EXPECT_NE(err.find("use it with one thread"), std::string::npos) << err;
}

TEST(Cli, QuickSweepIsSmallerThanTheFullOne) {
  std::string quick, full;
  ASSERT_EQ(run_cli({"run", "--tracer", "none", "--workload", "write_null", "--quick", "--plan"}, &quick), 0);
  ASSERT_EQ(run_cli({"run", "--tracer", "none", "--workload", "write_null", "--plan"}, &full), 0);
  EXPECT_LT(std::count(quick.begin(), quick.end(), '\n'), std::count(full.begin(), full.end(), '\n'));
  EXPECT_NE(full.find("payload:4096"), std::string::npos);
}

// A sweep runs what applies and lists the rest; refused only when nothing applies.
TEST(Cli, SweepSkipsWhatDoesNotApplyAndRefusesOnlyWhenNothingDoes) {
  std::string out, err;
  ASSERT_EQ(run_cli({"run", "-t", "none", "-w", "write_null", "-w", "ust_array64", "-p", "0", "-p", "64", "--plan"},
                    &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("none/ust_array64/none/payload:64/threads:1"), std::string::npos) << out;
  EXPECT_NE(out.find("none/write_null/none/payload:0/threads:1"), std::string::npos) << out;
  EXPECT_EQ(out.find("ust_array64/none/payload:0"), std::string::npos) << out;
  EXPECT_NE(err.find("skipping none/ust_array64/none/payload:0: ust_array64 carries exactly 64 bytes"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("plan: 3 benchmark(s) to run"), std::string::npos) << err;
  EXPECT_EQ(run_cli({"run", "-t", "none", "-w", "ust_array64", "-p", "0", "--plan"}, &out, &err), 2);
  EXPECT_NE(err.find("nothing to run: none of the 1 planned combination(s) applies"), std::string::npos) << err;
}

}  // namespace
}  // namespace tracebench
