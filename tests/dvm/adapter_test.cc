// The "dvm" Tracer adapter driven the way the harness drives it, on the
// D-VM workloads of bench/dvm_workloads.cc.
#include <gtest/gtest.h>
#include <sched.h>

#include "tracers/common/proc.h"

#include "tracebench/workload.h"
#include "tracebench/verification.h"
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

struct Fired {
  EventCounts counts;
  nlohmann::json details;
};

Fired run(const std::string& workload, const std::string& action, std::size_t payload, std::uint64_t n,
          std::map<std::string, std::string> options = {}) {
  // A missing tracer, workload or state is a failure of this test, never a
  // crash of the binary (which would hide every other test's result).
  auto t = make_tracer("dvm");
  const Workload* w = find_workload(workload);
  if (!t || !w) {
    ADD_FAILURE() << "no dvm tracer or no workload " << workload;
    return {};
  }
  EXPECT_TRUE(t->available().ok);
  EXPECT_TRUE(t->supports(w->probe));
  AttachSpec spec;
  spec.probe = w->probe;
  spec.action = action;
  spec.payload_bytes = payload;
  spec.options = options;
  Status st = t->attach(spec);
  if (!st) {
    ADD_FAILURE() << "attach: " << st.message();
    t->teardown();
    return {};
  }
  WorkloadParams wp;
  wp.payload_bytes = payload;
  std::unique_ptr<WorkloadState> state;
  if (Status s = w->setup(wp, &state); !s || !state) {
    ADD_FAILURE() << "workload setup: " << s.message();
    t->teardown();
    return {};
  }
  // Interleaved like the harness: baseline (disabled) blocks fire nothing.
  for (int rep = 0; rep < 3; rep++) {
    state->fire(1000);  // baseline, tracer disabled
    EXPECT_TRUE(t->enable());
    state->fire(n);
    EXPECT_TRUE(t->disable());
  }
  EXPECT_TRUE(t->drain());
  Fired f{t->counts(), t->details()};
  t->teardown();
  t->teardown();  // safe twice
  return f;
}

TEST(DvmAdapter, CountIsExact) {
  for (const char* w : {"dvm_hot", "dvm_func", "dvm_getpid"}) {
    SCOPED_TRACE(w);
    Fired f = run(w, "count", 0, 5000);
    EXPECT_EQ(f.counts.recorded, 15000u);
    EXPECT_EQ(f.counts.lost, 0u);
    EXPECT_EQ(f.details["probe_firings"], 15000u);
  }
}

// empty: the flow alone (a clause with no action); its events are the
// clause's firings, every one of them.
TEST(DvmAdapter, EmptyClauseCountsItsFirings) {
  for (const char* w : {"dvm_hot", "dvm_func", "dvm_getpid"}) {
    SCOPED_TRACE(w);
    Fired f = run(w, "empty", 0, 5000);
    EXPECT_EQ(f.counts.recorded, 15000u);
    EXPECT_EQ(f.counts.lost, 0u);
    EXPECT_EQ(f.details["ecb_firings"], 15000u);
    EXPECT_NE(f.details["script"].get<std::string>().find("{ }"), std::string::npos) << f.details["script"];
    EXPECT_TRUE(judge_events(f.counts, 15000, 0, false).passed());
  }
}

// disabled: the workload's site has no clause while the session is live on
// dtrace:::ERROR; nothing fires, nothing is recorded, and the judge passes it.
TEST(DvmAdapter, DisabledProbeRecordsNothing) {
  for (const char* w : {"dvm_hot", "dvm_getpid"}) {
    SCOPED_TRACE(w);
    Fired f = run(w, "disabled", 0, 5000);
    EXPECT_TRUE(f.counts.probe_disabled);
    EXPECT_EQ(f.counts.recorded, 0u);
    EXPECT_EQ(f.details["probe_firings"], 0u);
    EXPECT_NE(f.details["script"].get<std::string>().find("dtrace:::ERROR"), std::string::npos);
    EXPECT_TRUE(judge_events(f.counts, 15000, 0, false).passed());
  }
}

TEST(DvmAdapter, RecordPayloadAndDropsAddUp) {
  Fired f = run("dvm_hot", "record", 64, 20000, {{"bufsize", "64k"}});
  EXPECT_EQ(f.counts.recorded + f.counts.lost, 60000u);
  EXPECT_GT(f.counts.recorded, 0u);
  EXPECT_EQ(f.details["errors"], 0u);
  // Every recorded payload byte was checked against the workload's pattern.
  EXPECT_EQ(f.counts.payload_source, PayloadSource::kWorkload);
  EXPECT_EQ(f.counts.payload_checked_events, f.counts.recorded);
  EXPECT_EQ(f.counts.payload_verified, f.counts.recorded * 64);
  EXPECT_EQ(f.counts.payload_mismatched_events, 0u);
  // The events add up, and so many were lost that the figure would mix
  // recording with dropping: partial, not passed.
  Verification v = judge_events(f.counts, 60000, 64, true);
  EXPECT_EQ(v.verdict, Verdict::kPartial) << v.reason;
  Fired g = run("dvm_hot", "record", 0, 1000);
  EXPECT_EQ(g.counts.recorded, 3000u);
  // Its consumer wakes on the switchrate timer, not on records.
  EXPECT_TRUE(f.counts.consumer_wakes_on_timer);
  EXPECT_GT(f.counts.consumer_wakeups, 0);
}

// The consumer thread pins itself away from the measured CPU (the thread
// that attaches is pinned there and a new thread inherits its pin), unless
// consumer_cpu says otherwise, and then the result says so.
TEST(DvmAdapter, ConsumerRunsAwayFromTheMeasuredCpu) {
  const std::vector<int> cpus = online_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one online CPU";
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  const int measured = cpus.back();
  CPU_ZERO(&one);
  CPU_SET(measured, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  auto consumer_cpus = [](const std::map<std::string, std::string>& options, nlohmann::json* details) {
    std::vector<int> where;
    auto t = make_tracer("dvm");
    AttachSpec spec;
    spec.probe = find_workload("dvm_hot")->probe;
    spec.action = "record";
    spec.options = options;
    if (Status s = t->attach(spec); !s) {
      ADD_FAILURE() << s.message();
      return where;
    }
    EXPECT_TRUE(t->enable());
    const std::vector<ConsumerTask> tasks = t->consumer_tasks();
    EXPECT_EQ(tasks.size(), 1u);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (!tasks.empty()) { EXPECT_EQ(sched_getaffinity(tasks[0].tid, sizeof set, &set), 0); }
    for (int c = 0; c < CPU_SETSIZE; c++)
      if (CPU_ISSET(c, &set)) where.push_back(c);
    EXPECT_TRUE(t->disable());
    *details = t->details();
    t->teardown();
    return where;
  };
  nlohmann::json d;
  std::vector<int> away = consumer_cpus({}, &d);
  EXPECT_EQ(away, std::vector<int>{cpus.front()});
  EXPECT_EQ(d["options"]["consumer_cpu"], cpus.front());
  EXPECT_FALSE(d.contains("warnings"));
  std::vector<int> shared = consumer_cpus({{"consumer_cpu", std::to_string(measured)}}, &d);
  EXPECT_EQ(shared, std::vector<int>{measured});
  ASSERT_TRUE(d.contains("warnings"));
  EXPECT_NE(d["warnings"][0].get<std::string>().find("measured CPU"), std::string::npos);
  ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
  // A CPU that is not online is refused before anything starts.
  auto t = make_tracer("dvm");
  AttachSpec spec;
  spec.probe = find_workload("dvm_hot")->probe;
  spec.options = {{"consumer_cpu", "4000"}};
  Status s = t->validate(spec);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("not an online CPU"), std::string::npos) << s.message();
}

TEST(DvmAdapter, PredicateFalseHasTenEcbsAndCountsOnce) {
  Fired f = run("dvm_getpid", "predicate-false", 0, 2000);
  EXPECT_EQ(f.details["ecbs"], 10u);
  EXPECT_EQ(f.counts.recorded, 6000u);
  EXPECT_EQ(f.details["ecb_firings"], 6000u);
  Fired g = run("dvm_hot", "predicate-false", 0, 100, {{"ecbs", "3"}});
  EXPECT_EQ(g.details["ecbs"], 3u);
}

// The handler-count sweep for the cost model: count with ecbs=N enables N
// clauses; acting ones each count every firing (checked equal), false ones
// never run their action; details say which.
TEST(DvmAdapter, CountWithEcbsIsAHandlerSweep) {
  Fired f = run("dvm_hot", "count", 0, 1000, {{"ecbs", "4"}});
  EXPECT_EQ(f.details["ecbs"], 4u);
  EXPECT_EQ(f.details["extra_predicate"], "true");
  EXPECT_EQ(f.counts.recorded, 3000u);
  EXPECT_EQ(f.counts.tracer_errors, 0u) << f.counts.tracer_error_detail;
  EXPECT_EQ(f.details["ecb_firings"], 4u * 3000);
  Fired g = run("dvm_hot", "count", 0, 1000, {{"ecbs", "4"}, {"extra_predicate", "false"}});
  EXPECT_EQ(g.details["extra_predicate"], "false");
  EXPECT_EQ(g.counts.recorded, 3000u);
  EXPECT_EQ(g.details["ecb_firings"], 3000u) << "false predicates run no action";
  Fired one = run("dvm_hot", "count", 0, 100);
  EXPECT_EQ(one.details["ecbs"], 1u);
  EXPECT_FALSE(one.details.contains("extra_predicate"));
  // extra_predicate is the count action's.
  auto t = make_tracer("dvm");
  AttachSpec spec;
  spec.probe = find_workload("dvm_hot")->probe;
  spec.action = "record";
  spec.options = {{"extra_predicate", "false"}};
  Status st = t->validate(spec);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("applies to the count action"), std::string::npos) << st.message();
}

TEST(DvmAdapter, PrintfQuantizeAndScript) {
  EXPECT_EQ(run("dvm_hot", "printf", 0, 1000).counts.recorded, 3000u);
  EXPECT_EQ(run("dvm_hot", "quantize", 0, 1000).counts.recorded, 3000u);
  Fired s = run("dvm_hot", "script", 0, 1000, {{"script", "$probe /arg0 % 2/ { @odd = count(); }"}});
  EXPECT_EQ(s.counts.recorded, 3000u);  // probe firings
  EXPECT_EQ(s.details["ecb_firings"], 1500u);
}

TEST(DvmAdapter, ScriptThatFaultsOnEveryFiringFails) {
  // Reads through a null pointer on every firing: the probe fires, no ECB
  // completes, and every firing is a fault.
  Fired f = run("dvm_hot", "script", 0, 1000, {{"script", "$probe { trace(*(arg0 - arg0)); }"}});
  EXPECT_EQ(f.details["errors"], 3000u) << f.details.dump();
  EXPECT_EQ(f.counts.tracer_errors, 3000u);
  EXPECT_NE(f.counts.tracer_error_detail.find("3000 x"), std::string::npos) << f.counts.tracer_error_detail;
  Verification v = judge_events(f.counts, 3000, 0, false);
  EXPECT_TRUE(v.failed());
  EXPECT_NE(v.reason.find("3000 error(s)"), std::string::npos) << v.reason;
}

TEST(DvmAdapter, ScriptPayloadIsNotClaimed) {
  // A user script copies what it likes (here half the payload); only the
  // record action's tracemem() is checked, and only it claims the payload.
  Fired f = run("dvm_hot", "script", 64, 1000, {{"script", "$probe { tracemem(arg1, 32); }"}});
  EXPECT_EQ(f.counts.payload_source, PayloadSource::kNone);
  EXPECT_EQ(f.counts.payload_verified, 0u);
  Verification v = judge_events(f.counts, 3000, 64, true);
  EXPECT_TRUE(v.passed()) << v.reason;
}

TEST(DvmAdapter, RejectsWhatItCannotDo) {
  auto t = make_tracer("dvm");
  const Workload* getpid = find_workload("getpid");
  if (getpid) {
    EXPECT_FALSE(t->supports(getpid->probe));  // no D-VM site in that workload
  }
  const Workload* w = find_workload("dvm_hot");
  ASSERT_NE(w, nullptr);
  AttachSpec spec;
  spec.probe = w->probe;
  spec.action = "nosuch";
  EXPECT_FALSE(t->attach(spec));
  spec.action = "count";
  spec.options = {{"bufsize", "huge"}};
  Status st = t->attach(spec);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("bufsize"), std::string::npos);
  spec.options = {{"nosuch", "1"}};
  EXPECT_FALSE(t->attach(spec));
  // The kernel home's options, refused by the user-space one before anything runs.
  for (const auto& [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"syscallprobe", "kprobe"}, {"stagetiming", "true"}}) {
    spec.options = {{k, v}};
    st = t->validate(spec);
    EXPECT_NE(st.message().find("option " + k + " applies to the kernel home"), std::string::npos) << st.message();
  }
  spec.options = {{"at", "return"}};  // a return probe: the kernel home's pid provider
  st = t->validate(spec);
  EXPECT_NE(st.message().find("option at=return applies to the kernel home"), std::string::npos) << st.message();
  spec.options = {{"syscallprobe", "tracepoint"}};  // what the user-space home does anyway
  EXPECT_TRUE(t->validate(spec)) << t->validate(spec).message();
  spec.action = "script";
  spec.options = {{"script", "$probe { x = ; }"}};
  st = t->attach(spec);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("line 1, column"), std::string::npos) << st.message();
  t->teardown();
}

// The kernel home's return probe is a user function's (the pid provider's
// uretprobe); on a syscall it is refused before the module is asked.
TEST(DvmAdapter, KernelHomeReturnProbeOnlyOnAUserFunction) {
  auto t = make_tracer("dvm_kernel");
  ASSERT_TRUE(t);
  const Workload* getpid = find_workload("getpid");
  ASSERT_NE(getpid, nullptr);
  AttachSpec spec;
  spec.probe = getpid->probe;
  spec.action = "count";
  spec.options = {{"at", "return"}};
  const Status st = t->validate(spec);
  EXPECT_NE(st.message().find("at=return applies to user-function probes"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tracebench
