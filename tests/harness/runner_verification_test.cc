// The runner hands every tracer's counts to the judge: a fake tracer that
// under-records (or reports a fault) makes the benchmark an error with the
// judge's reason, an honest one passes.  Runs the real runner on a fake
// workload whose every event this test can count.
#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "tracebench/clock.h"
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

double thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }
void burn_cpu_ns(double ns) {
  double until = thread_cpu_ns() + ns;
  while (thread_cpu_ns() < until) asm volatile("" ::: "memory");
}

// An honest tracer with a consumer: a reader thread burning 1 ms of CPU
// every 2 ms from attach to drain, and 1 ms of the caller's CPU in each
// disable() and drain() (it "reads on the caller").  Knows what the harness
// must find.  The reader starts on the measured thread's CPU (it inherits
// its pinning), where it runs only while that thread sleeps: disable()
// waits for its first two bursts, so it has burned 2 ms whatever the run's
// length.
class ConsumerTracer final : public Tracer {
 public:
  std::string_view name() const override { return "test_consumer"; }
  std::string_view description() const override { return "test tracer with a consumer"; }
  Availability available() override { return Availability::yes(); }
  std::vector<std::string> actions() const override { return {"count"}; }
  bool supports(const ProbePoint& p) const override { return p.name == "test:counting"; }
  Status attach(const AttachSpec&) override {
    reader_ = std::thread([this] {
      tid_.store(static_cast<int>(syscall(SYS_gettid)));
      while (!stop_.load()) {
        burn_cpu_ns(1e6);
        bursts_.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      reader_cpu_ns_ = thread_cpu_ns();
    });
    while (tid_.load() == 0) std::this_thread::yield();
    return Status::ok();
  }
  Status enable() override {
    at_enable_ = g_fired.load();
    return Status::ok();
  }
  Status disable() override {
    recorded_ += g_fired.load() - at_enable_;
    for (int i = 0; i < 5000 && bursts_.load() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    burn_cpu_ns(1e6);
    ++caller_calls_;
    return Status::ok();
  }
  Status drain() override {
    stop_.store(true);
    if (reader_.joinable()) reader_.join();
    burn_cpu_ns(1e6);
    ++caller_calls_;
    return Status::ok();
  }
  EventCounts counts() override {
    EventCounts c;
    c.recorded = recorded_;
    c.consumer_wakeups = 42;
    return c;
  }
  std::vector<ConsumerTask> consumer_tasks() const override { return {{"reader", getpid(), tid_.load()}}; }
  bool reads_on_caller() const override { return true; }
  nlohmann::json details() const override {
    return {{"reader_cpu_ns", reader_cpu_ns_}, {"caller_calls", caller_calls_}};
  }
  void teardown() noexcept override {
    stop_.store(true);
    if (reader_.joinable()) reader_.join();
  }

 private:
  std::thread reader_;
  std::atomic<bool> stop_{false};
  std::atomic<int> tid_{0};
  std::atomic<int> bursts_{0};
  double reader_cpu_ns_ = 0;
  int caller_calls_ = 0;
  std::uint64_t at_enable_ = 0, recorded_ = 0;
};

// A tracer whose consumer needs 20 ms after each traced block to write its
// records out, and whose buffer takes nothing while it has not (discard
// mode with a full buffer): a block enabled while the consumer is busy
// loses all its events.  disable() wakes it as a writer wakes its
// consumer (LTTng-UST's wakeup pipe): a futex, so it is runnable at once.
// The harness must wait for it.
class LaggingTracer final : public Tracer {
 public:
  std::string_view name() const override { return "test_lagging"; }
  std::string_view description() const override { return "test tracer with a slow consumer"; }
  Availability available() override { return Availability::yes(); }
  std::vector<std::string> actions() const override { return {"count"}; }
  bool supports(const ProbePoint& p) const override { return p.name == "test:counting"; }
  Status attach(const AttachSpec&) override {
    writer_ = std::thread([this] {
      tid_.store(static_cast<int>(syscall(SYS_gettid)));
      std::unique_lock<std::mutex> lock(mu_);
      while (!stop_) {
        wake_.wait(lock, [this] { return stop_ || backlog_; });
        if (!backlog_) continue;
        lock.unlock();
        burn_cpu_ns(20e6);
        lock.lock();
        backlog_ = false;
      }
    });
    while (tid_.load() == 0) std::this_thread::yield();
    return Status::ok();
  }
  Status enable() override {
    std::lock_guard<std::mutex> lock(mu_);
    full_ = backlog_;
    at_enable_ = g_fired.load();
    return Status::ok();
  }
  Status disable() override {
    std::lock_guard<std::mutex> lock(mu_);
    (full_ ? lost_ : recorded_) += g_fired.load() - at_enable_;
    backlog_ = true;
    wake_.notify_one();
    return Status::ok();
  }
  Status drain() override {
    teardown();
    return Status::ok();
  }
  EventCounts counts() override {
    EventCounts c;
    c.recorded = recorded_;
    c.lost = lost_;
    return c;
  }
  std::vector<ConsumerTask> consumer_tasks() const override { return {{"writer", getpid(), tid_.load()}}; }
  void teardown() noexcept override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      wake_.notify_one();
    }
    if (writer_.joinable()) writer_.join();
  }

 private:
  std::thread writer_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false, backlog_ = false;
  std::atomic<int> tid_{0};
  bool full_ = false;
  std::uint64_t at_enable_ = 0, recorded_ = 0, lost_ = 0;
};

TRACEBENCH_REGISTER_WORKLOAD(test_counting,
                             Workload{"test_counting", "test", "a loop that counts its events",
                                      ProbePoint{"test:counting", ProbeKind::kNone, "", 0, "counted in the test"},
                                      false, [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
                                        *out = std::make_unique<CountingLoop>();
                                        return Status::ok();
                                      }});
TRACEBENCH_REGISTER_TRACER(test_honest, [] { return std::make_unique<FakeTracer>("test_honest", 0, 0); });
TRACEBENCH_REGISTER_TRACER(test_under, [] { return std::make_unique<FakeTracer>("test_under", 1, 0); });
TRACEBENCH_REGISTER_TRACER(test_faulty, [] { return std::make_unique<FakeTracer>("test_faulty", 0, 7); });
TRACEBENCH_REGISTER_TRACER(test_consumer, [] { return std::make_unique<ConsumerTracer>(); });
TRACEBENCH_REGISTER_TRACER(test_lagging, [] { return std::make_unique<LaggingTracer>(); });

// The same loop named as N sites (a many-probe workload): only a tracer
// that attaches to every site may be planned on it, or it would count the
// first site's share of the events.
ProbePoint counting_sites() {
  ProbePoint p{"test:counting", ProbeKind::kNone, "", 0, "counted in the test, at two sites"};
  p.more_sites.push_back({"second_site", 0});
  return p;
}
Workload counting_sites_workload() {
  Workload w{"test_counting_sites",
             "test",
             "a loop that counts its events at two sites",
             counting_sites(),
             false,
             [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
               *out = std::make_unique<CountingLoop>();
               return Status::ok();
             }};
  w.only_when_named = true;
  return w;
}
TRACEBENCH_REGISTER_WORKLOAD(test_counting_sites, counting_sites_workload());

TEST(RunnerPlan, ManySitesOnlyWhenNamedAndWithATracerThatAttachesToEvery) {
  RunOptions opt;
  opt.tracers = {"none", "test_honest"};
  opt.workloads = {"test_counting", "test_counting_sites"};
  Plan plan;
  ASSERT_TRUE(make_plan(opt, &plan));
  std::vector<std::string> names;
  for (const auto& s : plan.specs) names.push_back(s.tracer + "/" + s.workload);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"none/test_counting", "none/test_counting_sites", "test_honest/test_counting"}));
  // Run when named only: not in a run of every workload.
  opt.tracers = {"none"};
  opt.workloads = {};
  ASSERT_TRUE(make_plan(opt, &plan));
  std::set<std::string> all;
  for (const auto& s : plan.specs) all.insert(s.workload);
  EXPECT_TRUE(all.count("test_counting"));
  EXPECT_FALSE(all.count("test_counting_sites"));
  // Asked for alone: refused, with what it does trace.
  opt.tracers = {"test_honest"};
  opt.workloads = {"test_counting_sites"};
  const Status st = make_plan(opt, &plan);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("supports none of the selected workloads (test_counting_sites)"), std::string::npos)
      << st.message();
}

// A tracer whose kernel runs its `count` action and refuses `record` (as a
// kernel refuses one eBPF attach type): Tracer::available_for.
class HalfKernelTracer final : public Tracer {
 public:
  std::string_view name() const override { return "test_half_kernel"; }
  std::string_view description() const override { return "test tracer, one action refused by the kernel"; }
  Availability available() override { return Availability::yes(); }
  std::vector<std::string> actions() const override { return {"count", "record"}; }
  bool supports(const ProbePoint& p) const override { return p.name == "test:counting"; }
  Availability available_for(const AttachSpec& spec) const override {
    return spec.action == "record" ? Availability::no("record: refused by this kernel (test)") : Availability::yes();
  }
  Status attach(const AttachSpec&) override { return Status::ok(); }
  Status enable() override { return Status::ok(); }
  Status disable() override { return Status::ok(); }
  EventCounts counts() override { return {}; }
  void teardown() noexcept override {}
};
TRACEBENCH_REGISTER_TRACER(test_half_kernel, [] { return std::make_unique<HalfKernelTracer>(); });

TEST(RunnerPlan, ASpecTheKernelRefusesIsLeftOutWithWhy) {
  RunOptions opt;
  opt.tracers = {"test_half_kernel"};
  opt.workloads = {"test_counting"};
  opt.actions = {"count", "record"};
  Plan plan;
  const Status first = make_plan(opt, &plan);
  ASSERT_TRUE(first) << first.message();
  ASSERT_EQ(plan.specs.size(), 1u);
  EXPECT_EQ(plan.specs[0].action, "count");
  const auto said = std::find_if(plan.skipped.begin(), plan.skipped.end(),
                                 [](const auto& s) { return s.first.find("/record/") != std::string::npos; });
  ASSERT_NE(said, plan.skipped.end());
  EXPECT_EQ(said->second, "record: refused by this kernel (test)");
  // Asked for alone: nothing to run, and why.
  opt.actions = {"record"};
  const Status st = make_plan(opt, &plan);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("record: refused by this kernel (test)"), std::string::npos) << st.message();
  // Planned for a guest: its kernel answers there, not this one.
  opt.plan_for_guest = true;
  ASSERT_TRUE(make_plan(opt, &plan));
  ASSERT_EQ(plan.specs.size(), 1u);
  EXPECT_EQ(plan.specs[0].action, "record");
}

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

// A quick run of `tracers` on test_counting (2 repetitions of 100 samples,
// no sample files), its folder removed after.
Status quick_counting_run(const std::vector<std::string>& tracers, RunResult* run) {
  const std::string out = std::filesystem::temp_directory_path() / ("tb-runner-" + std::to_string(getpid()));
  RunOptions opt;
  opt.tracers = tracers;
  opt.workloads = {"test_counting"};
  opt.quick = true;
  opt.repetitions = 2;
  opt.samples = 100;
  opt.out_base = out;
  opt.write_samples = false;
  Plan plan;
  if (Status s = make_plan(opt, &plan); !s) return s;
  std::string dir;
  const Status s = run_benchmarks(opt, plan, run, &dir);
  std::filesystem::remove_all(out);
  return s;
}

// The consumer's CPU is measured from the tracer's own tasks and calls: the
// reader thread's time (read before drain() joins it) and 1 ms per
// disable()/drain() on the caller.
TEST(RunnerConsumer, MeasuresTheReaderThreadAndTheCallersReads) {
  RunResult run;
  const Status s = quick_counting_run({"test_consumer", "test_honest"}, &run);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(run.benchmarks.size(), 2u);
  for (const auto& b : run.benchmarks) {
    SCOPED_TRACE(b.name);
    ASSERT_EQ(b.status, "ok") << b.error;
    if (b.tracer == "test_honest") {
      // No consumer task, no reads on the caller: nothing to say.
      EXPECT_FALSE(b.consumer.has_value());
      continue;
    }
    ASSERT_TRUE(b.consumer.has_value());
    const ConsumerResult& c = *b.consumer;
    double reader = b.tracer_details.at("reader_cpu_ns").get<double>();
    int calls = b.tracer_details.at("caller_calls").get<int>();
    ASSERT_EQ(c.tasks.size(), 1u);
    EXPECT_EQ(c.tasks[0].role, "reader");
    EXPECT_EQ(c.tasks[0].pid, getpid());
    // Read before the join: at most the thread's whole time, and short of it
    // by at most the last few ms it ran.
    EXPECT_LE(c.tasks[0].cpu_ns, reader);
    EXPECT_GE(c.tasks[0].cpu_ns, reader - 5e6);
    EXPECT_GT(c.tasks[0].cpu_ns, 2e6);  // at least two of its 1 ms bursts
    EXPECT_GE(c.caller_cpu_ns, calls * 1e6);
    EXPECT_LT(c.caller_cpu_ns, calls * 1e6 + 50e6);
    EXPECT_DOUBLE_EQ(c.cpu_ns, c.tasks[0].cpu_ns + c.caller_cpu_ns);
    EXPECT_EQ(c.records, b.events.recorded);
    ASSERT_TRUE(c.wakeups.has_value());
    EXPECT_EQ(*c.wakeups, 42u);
    EXPECT_TRUE(c.precise);
    EXPECT_GT(c.window_s, 0.0);
    // Inside the traced blocks alone: some of the reader's time, not all (it
    // burns in the baseline blocks too), and none of the caller's.
    ASSERT_TRUE(c.traced_cpu_ns.has_value());
    EXPECT_GT(*c.traced_cpu_ns, 0);
    EXPECT_LT(*c.traced_cpu_ns, c.tasks[0].cpu_ns);
  }
}

// A consumer that is still writing the last block out when the next is
// due: the harness waits for it before each traced block (outside the timed
// window), so no block finds the buffer full, and says how often it waited.
TEST(RunnerConsumer, WaitsForAConsumerThatLagsBeforeEachTracedBlock) {
  RunResult run;
  const Status s = quick_counting_run({"test_lagging"}, &run);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(run.benchmarks.size(), 1u);
  const BenchmarkResult& b = run.benchmarks[0];
  ASSERT_EQ(b.status, "ok") << b.error;
  EXPECT_EQ(b.events.lost, 0u);
  EXPECT_GT(b.events.recorded, 0u);
  EXPECT_EQ(b.events.verification, "passed") << b.events.verification_reason;
  ASSERT_TRUE(b.consumer.has_value());
  ASSERT_TRUE(b.consumer->catch_up.has_value());
  const CatchUpResult& w = *b.consumer->catch_up;
  EXPECT_GT(w.waits, 0u);
  EXPECT_EQ(w.timeouts, 0u);
  EXPECT_GE(w.seconds, 0.005 * static_cast<double>(w.waits));
}

// `run --gap-us`: the thread sleeps that long before each sample, outside
// it; a sample is the workload's smallest batch; a block about 100 ms of
// gaps; the name says the gap.
TEST(RunnerGap, SleepsBeforeEachSample) {
  const std::string out = std::filesystem::temp_directory_path() / ("tb-gap-" + std::to_string(getpid()));
  RunOptions opt;
  opt.tracers = {"test_consumer"};
  opt.workloads = {"test_counting"};
  opt.quick = true;
  opt.repetitions = 2;
  opt.samples = 1000;
  opt.gap_us = 2000;
  opt.out_base = out;
  opt.write_samples = false;
  Plan plan;
  ASSERT_TRUE(make_plan(opt, &plan));
  ASSERT_EQ(plan.specs.size(), 1u);
  EXPECT_EQ(plan.specs[0].name(), "test_consumer/test_counting/count/payload:0/threads:1/gap_us:2000");
  RunResult run;
  std::string dir;
  const double t0 = clock_ns(CLOCK_MONOTONIC);
  Status s = run_benchmarks(opt, plan, &run, &dir);
  const double took = clock_ns(CLOCK_MONOTONIC) - t0;
  std::filesystem::remove_all(out);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(run.benchmarks.size(), 1u);
  const BenchmarkResult& b = run.benchmarks[0];
  ASSERT_EQ(b.status, "ok") << b.error;
  EXPECT_EQ(b.gap_us, 2000u);
  EXPECT_EQ(b.batch, 1u);
  EXPECT_EQ(b.samples_per_block, 50u);  // 100 ms of 2 ms gaps
  // 2 repetitions of two blocks of 50 samples, each after 2 ms asleep.
  EXPECT_GE(took, 2 * 2 * 50 * 2e6);
  // Asleep outside the timed region: a sample times one counted event after
  // the gap, not the gap.  A sleep inside it would make every sample at
  // least the 2 ms gap; one event on a cold cache is microseconds, so the
  // bound is a hundredth of the gap (in ns, whatever this host's TSC rate).
  const double gap_ns = 2000 * 1e3;
  ASSERT_GT(b.traced.ns.n, 0u);
  ASSERT_GT(b.baseline.ns.n, 0u);
  EXPECT_LT(b.traced.ns.p50, gap_ns / 100) << "the gap was timed (traced)";
  EXPECT_LT(b.baseline.ns.p50, gap_ns / 100) << "the gap was timed (baseline)";
  EXPECT_EQ(b.events.recorded, b.events.fired);
}

}  // namespace
}  // namespace tracebench
