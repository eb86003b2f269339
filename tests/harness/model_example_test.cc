// The smallest tracer that declares a Table 7 scenario (Tracer::model())
// appears in `tracebench model suite` with no change to the harness: its
// runs, the fit and its validation are planned from its description alone.
// It is registered here, in the test binary, as an adapter registers itself
// in its folder; it is never attached (`--plan` runs nothing).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tracebench/cli.h"
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

class ExampleTracer final : public Tracer {
 public:
  std::string_view name() const override { return "model_example"; }
  std::string_view description() const override { return "a tracer that only describes itself to the model"; }
  Availability available() override { return Availability::no("a test's example; it records nothing"); }
  std::vector<std::string> actions() const override { return {"count"}; }
  bool supports(const ProbePoint& p) const override { return p.kind == ProbeKind::kSyscall; }
  ModelDescription model() const override {
    ModelDescription d;
    d.scenarios = {model_scenario("sys", kSysWhat, "getpid", "count", 0, 1000)};
    return d;
  }
  Status attach(const AttachSpec&) override { return Status::error("model_example is never attached"); }
  Status enable() override { return Status::ok(); }
  Status disable() override { return Status::ok(); }
  EventCounts counts() override { return {}; }
  void teardown() noexcept override {}
};

TRACEBENCH_REGISTER_TRACER(model_example, [] { return std::make_unique<ExampleTracer>(); });

std::string plan(std::vector<std::string> args) {
  args.insert(args.begin(), {"tracebench", "model", "suite", "--plan", "--quick", "--out", "OUT"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  const int rc = cli_main(static_cast<int>(argv.size()), argv.data());
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << out;
  return out;
}

TEST(ModelExample, ItsScenarioIsPlannedFromItsDescription) {
  EXPECT_EQ(plan({"-t", "model_example"}),
            "tracebench run -t model_example -w getpid -a count -p 0 --quick --out OUT/runs\n"
            "tracebench run -t model_example -w getpid -a count -p 0 --quick --out OUT/runs\n"
            "tracebench run -t model_example -w getpid -a count -p 0 -n 10 --quick --out OUT/runs\n"
            "tracebench run -t model_example -w getpid -a count -p 0 --gap-us 1000 --quick --out OUT/runs\n"
            "tracebench run -t model_example -w getpid -a count -p 0 --gap-us 1000 --quick --out OUT/runs\n"
            "tracebench model fit OUT/runs --out OUT/model.json\n"
            "tracebench model validate --model OUT/model.json -t model_example -w getpid -a count --rate 1000 "
            "--quick --out OUT/validation/model_example-sys.json\n"
            "# estimate: 5 runs, a fit and 1 validation of 2 s; no earlier suite with these flags under results/ to "
            "time the steps from (the validations alone measure for 2 s)\n");
}

TEST(ModelExample, TheSuiteOfEveryTracerHasIt) {
  const std::string all = plan({});
  EXPECT_NE(all.find("tracebench run -t model_example -w getpid -a count -p 0 --quick"), std::string::npos) << all;
  EXPECT_NE(all.find("--out OUT/validation/model_example-sys.json"), std::string::npos) << all;
}

}  // namespace
}  // namespace tracebench
