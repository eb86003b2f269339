#include "tracebench/cli.h"
#include "tracebench/run_request.h"
#include "tracebench/runner.h"

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

// One way in (run_request.h): `-o` split once, with a bare key the sole
// tracer's, a key given twice refused.
TEST(Cli, OptionArgumentsAreSplitOnce) {
  TracerOptions o;
  ASSERT_TRUE(split_option_args({"none.inject_cycles=30", "dvm.bufsize=4m"}, "", &o));
  EXPECT_EQ(o["none"]["inject_cycles"], "30");
  EXPECT_EQ(o["dvm"]["bufsize"], "4m");
  o.clear();
  EXPECT_FALSE(split_option_args({"inject_cycles=30"}, "", &o));
  ASSERT_TRUE(split_option_args({"inject_cycles=30"}, "none", &o));
  EXPECT_EQ(o["none"]["inject_cycles"], "30");
  o.clear();
  Status s = split_option_args({"none.inject_cycles=1", "inject_cycles=2"}, "none", &o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("given twice"), std::string::npos) << s.message();
}

// The plan parses a tracer's options once; the typed values travel in each
// planned benchmark to its attach spec.
TEST(Cli, PlanCarriesTheParsedOptionsToTheAttachSpec) {
  RunOptions opt;
  opt.tracers = {"none"};
  opt.workloads = {"getpid"};
  opt.options["none"]["inject_cycles"] = "30";
  Plan plan;
  ASSERT_TRUE(make_plan(opt, &plan));
  ASSERT_EQ(plan.specs.size(), 1u);
  ASSERT_TRUE(plan.specs[0].options);
  EXPECT_TRUE(plan.specs[0].options->given("inject_cycles"));
  EXPECT_EQ(plan.specs[0].options->number("inject_cycles"), 30u);
  AttachSpec as;
  ASSERT_TRUE(attach_spec_of(plan.specs[0], opt, &as));
  EXPECT_EQ(as.parsed_options, plan.specs[0].options);
  EXPECT_EQ(as.options.at("inject_cycles"), "30");
  // One benchmark planned for another command: the same checks and values.
  AttachSpec single;
  ASSERT_TRUE(plan_single_run({"none", "getpid", "default", 0, {"inject_cycles=30"}}, &single));
  ASSERT_TRUE(single.parsed_options);
  EXPECT_EQ(single.parsed_options->number("inject_cycles"), 30u);
}

// A payload the workload cannot hand over (the module fires at most
// TB_KMOD_MAX_PAYLOAD bytes) is refused by the plan, before the module is
// opened: also when planning for a guest, where the module is.
TEST(Cli, PayloadBeyondTheWorkloadsLimitIsRefusedAtPlanTime) {
  std::string out, err;
  EXPECT_EQ(run_cli({"run", "--check-for-guest", "2", "-t", "none", "-w", "kmod_payload", "-p", "8192"}, &out, &err),
            2);
  EXPECT_NE(err.find("kmod_payload carries at most 4096 bytes per event"), std::string::npos) << err;
  EXPECT_EQ(run_cli({"run", "--check-for-guest", "2", "-t", "none", "-w", "kmod_payload", "-p", "4096"}, &out, &err), 0)
      << err;
  // In a sweep with a size it can carry: that one runs, the other is skipped.
  EXPECT_EQ(run_cli({"run", "--check-for-guest", "2", "-t", "none", "-w", "kmod_payload", "-p", "64", "-p", "8192"},
                    &out, &err),
            0)
      << err;
  EXPECT_NE(err.find("none/kmod_payload/none/payload:8192: kmod_payload carries at most 4096"), std::string::npos)
      << err;
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
  EXPECT_EQ(
      run_cli({"run", "-t", "none", "-w", "getpid", "--gap-us", "1000", "-j", "1", "-j", "2", "--plan"}, nullptr, &err),
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
  // A payload no selected workload carries: refused before any tracer is asked.
  EXPECT_EQ(run_cli({"run", "-t", "none", "-w", "ust_array64", "-p", "0", "--plan"}, &out, &err), 2);
  EXPECT_NE(err.find("--payload 0: ust_array64 carries exactly 64 bytes"), std::string::npos) << err;
}

}  // namespace
}  // namespace tracebench
