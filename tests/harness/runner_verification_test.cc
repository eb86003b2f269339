// The runner hands every tracer's counts to the judge: a fake tracer that
// under-records (or reports a fault) makes the benchmark an error with the
// judge's reason, an honest one passes.  Runs the real runner on a fake
// workload whose every event this test can count.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "tracebench/workload.h"
#include "tracebench/runner.h"
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

std::atomic<std::uint64_t> g_fired{0};

class CountingLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) {
      g_fired.fetch_add(1, std::memory_order_relaxed);
      asm volatile("" ::: "memory");
    }
  }
};

// Records what the workload fired while it was enabled, minus `missing`
// per enabled window, plus `faults` tracer errors.
class FakeTracer final : public Tracer {
 public:
  FakeTracer(std::string name, std::uint64_t missing, std::uint64_t faults)
      : name_(std::move(name)), missing_(missing), faults_(faults) {}
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return "test tracer"; }
  Availability available() override { return Availability::yes(); }
  std::vector<std::string> actions() const override { return {"count"}; }
  bool supports(const ProbePoint& p) const override { return p.name == "test:counting"; }
  Status attach(const AttachSpec&) override { return Status::ok(); }
  Status enable() override {
    at_enable_ = g_fired.load();
    return Status::ok();
  }
  Status disable() override {
    std::uint64_t n = g_fired.load() - at_enable_;
    recorded_ += n > missing_ ? n - missing_ : 0;
    return Status::ok();
  }
  EventCounts counts() override {
    EventCounts c;
    c.recorded = recorded_;
    c.tracer_errors = faults_;
    if (faults_) c.tracer_error_detail = "fake faults";
    return c;
  }
  void teardown() noexcept override {}

 private:
  std::string name_;
  std::uint64_t missing_, faults_;
  std::uint64_t at_enable_ = 0, recorded_ = 0;
};

TRACEBENCH_REGISTER_WORKLOAD(test_counting, Workload{
    "test_counting", "test", "a loop that counts its events",
    ProbePoint{"test:counting", ProbeKind::kNone, "", 0, "counted in the test"}, false,
    [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
      *out = std::make_unique<CountingLoop>();
      return Status::ok();
    }});
TRACEBENCH_REGISTER_TRACER(test_honest, [] { return std::make_unique<FakeTracer>("test_honest", 0, 0); });
TRACEBENCH_REGISTER_TRACER(test_under, [] { return std::make_unique<FakeTracer>("test_under", 1, 0); });
TRACEBENCH_REGISTER_TRACER(test_faulty, [] { return std::make_unique<FakeTracer>("test_faulty", 0, 7); });

TEST(RunnerVerification, EveryTracerGoesThroughTheJudge) {
  const std::string out = std::filesystem::temp_directory_path() / ("tb-verify-" + std::to_string(getpid()));
  RunOptions opt;
  opt.tracers = {"none", "test_honest", "test_under", "test_faulty"};
  opt.workloads = {"test_counting"};
  opt.quick = true;
  opt.repetitions = 2;
  opt.samples = 100;
  opt.out_base = out;
  opt.write_samples = false;
  Plan plan;
  ASSERT_TRUE(make_plan(opt, &plan));
  ASSERT_EQ(plan.specs.size(), 4u);
  RunResult run;
  std::string dir;
  Status s = run_benchmarks(opt, plan, &run, &dir);
  std::filesystem::remove_all(out);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(run.benchmarks.size(), 4u);
  for (const auto& b : run.benchmarks) {
    SCOPED_TRACE(b.name);
    if (b.tracer == "none") {
      EXPECT_EQ(b.status, "ok");
      EXPECT_EQ(b.events.verification, "not_applicable");
    } else if (b.tracer == "test_honest") {
      EXPECT_EQ(b.status, "ok") << b.error;
      EXPECT_EQ(b.events.verification, "passed");
      EXPECT_EQ(b.events.recorded, b.events.fired);
      EXPECT_GT(b.events.fired, 0u);
      EXPECT_EQ(b.events.payload_source, "none");
      EXPECT_NE(b.events.verification_reason.find("recorded"), std::string::npos);
      EXPECT_TRUE(b.overhead_ns.has_value());
    } else if (b.tracer == "test_under") {
      // One event missing per enabled window.
      EXPECT_EQ(b.status, "error");
      EXPECT_EQ(b.events.verification, "failed");
      EXPECT_LT(b.events.recorded, b.events.fired);
      EXPECT_NE(b.error.find("were fired"), std::string::npos) << b.error;
      EXPECT_EQ(b.error, b.events.verification_reason);
      EXPECT_FALSE(b.overhead_ns.has_value());
    } else {
      EXPECT_EQ(b.status, "error");
      EXPECT_EQ(b.events.tracer_errors, 7u);
      EXPECT_NE(b.error.find("7 error(s)"), std::string::npos) << b.error;
      EXPECT_NE(b.error.find("fake faults"), std::string::npos) << b.error;
    }
  }
}

}  // namespace
}  // namespace tracebench
