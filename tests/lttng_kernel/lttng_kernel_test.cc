// LTTng kernel-domain adapter tests.  LTTng's kernel tracer is a set of
// modules, and this machine's kernel loads none, so ctest runs the adapter
// tests inside the VM lab with lttng-modules built for the guest kernel
// ("vm.lttng_kernel"); the host tests (LttngKernelHostTest.*) check the
// planning, the options and the "use the VM lab" path here.
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <gtest/gtest.h>
#include <lttng/lttng.h>

#include "tracebench/workload.h"
#include "kmod/include/tracebench_kmod_abi.h"
#include "tracebench/kallsyms.h"
#include "tracers/lttng/sessiond.h"
#include "tracers/lttng_kernel/lttng_kernel_tracer.h"
#include "tests/common/tracer_fixture.h"

namespace tracebench::lttng_kernel {
namespace {

using test::fire_getpid;
using test::getpid_probe;
using test::read_file;

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// Our trace directories (/tmp/tracebench-lttng-<pid>-*).
int our_temp_dirs() {
  int n = 0;
  std::string want = "tracebench-lttng-" + std::to_string(getpid()) + "-";
  if (DIR* d = opendir("/tmp")) {
    while (dirent* e = readdir(d)) n += std::strncmp(e->d_name, want.c_str(), want.size()) == 0;
    closedir(d);
  }
  return n;
}

// LTTng sessions named after this process.
int our_sessions() {
  if (!lttng::sessiond_alive()) return 0;
  lttng_session* sessions = nullptr;
  int n = lttng_list_sessions(&sessions);
  int mine = 0;
  std::string want = std::string(lttng::kSessionPrefix) + std::to_string(getpid()) + "-";
  for (int i = 0; i < n; ++i) mine += std::strncmp(sessions[i].name, want.c_str(), want.size()) == 0;
  std::free(sessions);
  return mine;
}

bool lttng_modules_loaded() { return contains(read_file("/proc/modules"), "lttng_tracer "); }

// ---------------------------------------------------------------------------
// On any kernel.

TEST(LttngKernelHostTest, PlanMapsProbesToLttngInstrumentation) {
  KernelEventPlan p;
  ASSERT_TRUE(plan_events(getpid_probe(), "record", &p));
  EXPECT_EQ(p.kind, KernelEventPlan::Kind::kSyscall);
  EXPECT_EQ(p.name, "getpid");
  EXPECT_TRUE(p.exact);

  std::string entry;
  if (kernel_function_for(getpid_probe(), &entry)) {
    ASSERT_TRUE(plan_events(getpid_probe(), "function", &p));
    EXPECT_EQ(p.kind, KernelEventPlan::Kind::kKretprobe);
    EXPECT_EQ(p.symbol, entry);
    EXPECT_FALSE(p.exact) << "a kprobe on a syscall function sees every process";
  }
  ProbePoint kfunc{"kfunc:x", ProbeKind::kKernelFunction, "no_such_kernel_function_tb", 0, ""};
  Status s = plan_events(kfunc, "record", &p);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), "not in /proc/kallsyms")) << s.message();

  ProbePoint tp{"kmod:tracebench_fixed", ProbeKind::kKmodTracepoint, "tracebench:tracebench_fixed", 0, ""};
  ASSERT_TRUE(plan_events(tp, "record", &p));
  EXPECT_EQ(p.kind, KernelEventPlan::Kind::kTracepoint);
  EXPECT_EQ(p.name, "tracebench_fixed");
  EXPECT_TRUE(p.exact);
  s = plan_events(tp, "function", &p);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), "syscalls and kernel functions")) << s.message();
  // ... so a run's plan leaves that pair out rather than failing it.
  LttngKernelTracer t;
  EXPECT_FALSE(t.supports_action(tp, "function"));
  EXPECT_TRUE(t.supports_action(tp, "record"));
  EXPECT_TRUE(t.supports_action(getpid_probe(), "function"));

  ProbePoint ust{"ust:tracebench:hot", ProbeKind::kUstTracepoint, "tracebench:hot", 0, ""};
  EXPECT_FALSE(plan_events(ust, "record", &p));
  s = plan_events(getpid_probe(), "count", &p);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), "unknown action")) << s.message();
}

TEST(LttngKernelHostTest, UserSpaceOnlyAndBadOptionsAreRejected) {
  lttng::LttngConfig c;
  for (const char* key : {"buffers", "blocking_timeout_us", "register_timeout_ms"}) {
    Status s = parse_kernel_spec_options(AttachSpec{.options = {{key, "1"}}}, &c);
    ASSERT_FALSE(s) << key;
    EXPECT_TRUE(contains(s.message(), "user-space domain only")) << s.message();
  }
  EXPECT_FALSE(parse_kernel_spec_options(AttachSpec{.options = {{"subbuf_size", "1000"}}}, &c));
  EXPECT_FALSE(parse_kernel_spec_options(AttachSpec{.options = {{"bogus", "1"}}}, &c));
  ASSERT_TRUE(parse_kernel_spec_options(
      AttachSpec{.options = {{"subbuf_size", "64k"}, {"num_subbuf", "4"}, {"overwrite", "on"}}}, &c));
  EXPECT_EQ(c.subbuf_size, 64u * 1024);
  EXPECT_EQ(c.num_subbuf, 4u);
  EXPECT_TRUE(c.overwrite);
}

TEST(LttngKernelHostTest, WithoutTheKernelTracerItSaysWhyAndLeavesNothing) {
  std::string why = kernel_tracer_missing();
  if (why.empty()) GTEST_SKIP() << "this kernel has lttng-modules (LttngKernelTest.* cover it)";
  LttngKernelTracer t;
  Availability av = t.available();
  EXPECT_FALSE(av.ok);
  EXPECT_TRUE(contains(av.reason, "tracebench vm --lttng-modules")) << av.reason;
  bool daemon_before = lttng::sessiond_alive();
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "record";
  Status s = t.attach(spec);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), "lttng-modules")) << s.message();
  EXPECT_EQ(t.started_sessiond(), 0);
  EXPECT_EQ(lttng::sessiond_alive(), daemon_before);
  EXPECT_EQ(our_temp_dirs(), 0);
  t.teardown();
  t.teardown();
}

// ---------------------------------------------------------------------------
// With LTTng's kernel tracer (the VM lab) and the companion module.

class LttngKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = kernel_tracer_missing(); !why.empty()) GTEST_SKIP() << why;
    Availability av = LttngKernelTracer().available();
    if (!av.ok) GTEST_SKIP() << av.reason;
  }

  static AttachSpec spec(const ProbePoint& probe, const std::string& action,
                         std::map<std::string, std::string> options = {}) {
    AttachSpec s = test::spec_for(probe, std::move(options));
    s.action = action;
    return s;
  }

  // Like the harness: `reps` times an untraced block, then a traced one
  // between enable() and disable(); returns the fires while enabled.
  template <class Fire>
  static std::uint64_t blocks(LttngKernelTracer& t, int reps, std::uint64_t untraced, std::uint64_t traced, Fire fire) {
    std::uint64_t fired = 0;
    for (int rep = 0; rep < reps; ++rep) {
      fire(untraced);
      Status s = t.enable();
      EXPECT_TRUE(s) << s.message();
      fire(traced);
      fired += traced;
      s = t.disable();
      EXPECT_TRUE(s) << s.message();
    }
    return fired;
  }

  static const Workload& kmod_target() {
    const Workload* w = find_workload("kmod_target");
    if (!w) std::abort();
    return *w;
  }

  std::unique_ptr<WorkloadState> kmod_workload(const Workload& w = kmod_target(), std::size_t payload = 16) {
    if (access(TB_KMOD_DEVICE_PATH, F_OK) != 0) return nullptr;
    std::unique_ptr<WorkloadState> st;
    WorkloadParams p;
    p.payload_bytes = payload;
    Status s = w.setup(p, &st);
    EXPECT_TRUE(s) << s.message();
    return st;
  }
};

TEST_F(LttngKernelTest, SyscallEntryAndExitPairUpAndCarryTheReturnValue) {
  LttngKernelTracer t;
  ASSERT_TRUE(t.attach(spec(getpid_probe(), "record"))) << "attach";
  fire_getpid(3000);  // untraced
  ASSERT_TRUE(t.enable());
  fire_getpid(5000);
  ASSERT_TRUE(t.disable());
  fire_getpid(3000);  // untraced
  ASSERT_TRUE(t.enable());
  fire_getpid(2000);
  ASSERT_TRUE(t.disable());
  Status s = t.drain();
  ASSERT_TRUE(s) << s.message();
  EventCounts c = t.counts();
  EXPECT_EQ(c.recorded, 7000u) << t.details().dump();
  EXPECT_EQ(c.lost, 0u);
  EXPECT_TRUE(c.exact);
  nlohmann::json d = t.details();
  EXPECT_EQ(d["trace"]["paired_events"], 7000);
  // Every entry and exit checked: the exit's `ret` is this process's pid.
  EXPECT_EQ(d["trace"]["events_checked"], 14000) << d.dump();
  EXPECT_EQ(d["instrumentation"], "syscall");
}

TEST_F(LttngKernelTest, DisabledBlocksRunWithNoLttngProbeInTheKernel) {
  auto w = kmod_workload();
  if (!w) GTEST_SKIP() << TB_KMOD_DEVICE_PATH << " missing";
  LttngKernelTracer t;
  ASSERT_TRUE(t.attach(spec(kmod_target().probe, "record")));
  const std::string kprobes = "/sys/kernel/debug/kprobes/list";
  EXPECT_FALSE(contains(read_file(kprobes), TB_KMOD_TARGET_SYMBOL)) << "attached but disabled: no kprobe";
  EXPECT_EQ(our_sessions(), 0);
  ASSERT_TRUE(t.enable());
  EXPECT_TRUE(contains(read_file(kprobes), TB_KMOD_TARGET_SYMBOL)) << read_file(kprobes);
  EXPECT_EQ(our_sessions(), 1);
  w->fire(1000);
  ASSERT_TRUE(t.disable());
  EXPECT_FALSE(contains(read_file(kprobes), TB_KMOD_TARGET_SYMBOL)) << "disabled: the kprobe must be gone";
  EXPECT_EQ(our_sessions(), 0);
  ASSERT_TRUE(t.drain());
  EXPECT_EQ(t.counts().recorded, 1000u);
}

TEST_F(LttngKernelTest, KprobeAndKretprobeOnTheModuleTargetCountExactly) {
  auto w = kmod_workload();
  if (!w) GTEST_SKIP() << TB_KMOD_DEVICE_PATH << " missing";
  for (const char* action : {"record", "function"}) {
    SCOPED_TRACE(action);
    LttngKernelTracer t;
    Status s = t.attach(spec(kmod_target().probe, action));
    ASSERT_TRUE(s) << s.message();
    std::uint64_t fired = blocks(t, 3, 5000, 20000, [&](std::uint64_t n) { w->fire(n); });
    s = t.drain();
    ASSERT_TRUE(s) << s.message();
    EventCounts c = t.counts();
    EXPECT_EQ(c.recorded, fired) << t.details().dump();
    EXPECT_EQ(c.lost, 0u);
    EXPECT_TRUE(c.exact);
    nlohmann::json d = t.details();
    bool ret = std::string(action) == "function";
    EXPECT_EQ(d["instrumentation"], ret ? "kretprobe" : "kprobe");
    EXPECT_EQ(d["trace"]["paired_events"], ret ? fired : 0);
    // Each event's `ip` is the target's address from /proc/kallsyms.
    EXPECT_EQ(d["trace"]["events_checked"], ret ? 2 * fired : fired) << d.dump();
  }
}

TEST_F(LttngKernelTest, ModuleTracepointsAreVerifiedByteForByte) {
  // LTTng's probe for the module's tracepoints (kmod/lttng): every recorded
  // fixed event carries value == seq ^ magic, every payload event the
  // pattern of its seq, byte for byte.
  if (access(TB_KMOD_DEVICE_PATH, F_OK) != 0) GTEST_SKIP() << TB_KMOD_DEVICE_PATH << " missing";
  struct Case {
    const char* workload;
    std::size_t payload;
  };
  for (Case k :
       {Case{"kmod_fixed", 0}, Case{"kmod_payload", 0}, Case{"kmod_payload", 64}, Case{"kmod_payload", 4096}}) {
    SCOPED_TRACE(std::string(k.workload) + " " + std::to_string(k.payload));
    const Workload* wl = find_workload(k.workload);
    ASSERT_NE(wl, nullptr);
    auto w = kmod_workload(*wl, k.payload);
    ASSERT_TRUE(w);
    LttngKernelTracer t;
    AttachSpec sp = spec(wl->probe, "record");
    sp.payload_bytes = k.payload;
    Status s = t.attach(sp);
    ASSERT_TRUE(s) << s.message();
    // 2000 4096-byte events: 8 MiB, within the 16 MiB ring.
    std::uint64_t fired = blocks(t, 2, 1000, 2000, [&](std::uint64_t n) { w->fire(n); });
    s = t.drain();
    ASSERT_TRUE(s) << s.message();
    EventCounts c = t.counts();
    EXPECT_EQ(c.recorded, fired) << t.details().dump();
    EXPECT_EQ(c.lost, 0u);
    EXPECT_EQ(c.payload_verified, fired * k.payload);
    nlohmann::json d = t.details();
    EXPECT_EQ(d["instrumentation"], "tracepoint");
    EXPECT_EQ(d["trace"]["events_checked"], fired) << d.dump();
  }
}

TEST_F(LttngKernelTest, SmallBufferDiscardsAreAccountedPerCall) {
  // 4 x 4 KiB per CPU: most of 50000 getpid calls' entry/exit events are
  // discarded, and the count must still add up.  lttng-modules writes the
  // discarded count into the header of the packet that closes after the
  // loss; stopped while the ring is still full, no packet closes and the
  // count is lost (here: 1004 entries, 1001 exits, 2 discarded for 50000
  // calls, which the adapter reports as events that do not pair up).  So the
  // consumer gets two read-timer periods to free a sub-buffer first.
  LttngKernelTracer t;
  Status s = t.attach(
      spec(getpid_probe(), "record", {{"subbuf_size", "4096"}, {"num_subbuf", "4"}, {"read_timer_us", "100000"}}));
  ASSERT_TRUE(s) << s.message();
  ASSERT_TRUE(t.enable());
  fire_getpid(50000);
  usleep(200000);
  ASSERT_TRUE(t.disable());
  s = t.drain();
  ASSERT_TRUE(s) << s.message() << "\n" << t.details().dump();
  EventCounts c = t.counts();
  EXPECT_TRUE(c.exact);
  EXPECT_GT(c.lost, 0u) << t.details().dump();
  EXPECT_GT(c.recorded, 0u);
  EXPECT_EQ(c.recorded + c.lost, 50000u) << t.details().dump();
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;  // entries and exits pair up
}

TEST_F(LttngKernelTest, BadInputFailsAtAttachAndLeavesNothing) {
  ProbePoint nosuch{"syscall:nosuch", ProbeKind::kSyscall, "tb_no_such_syscall", 0, ""};
  ProbePoint nofunc{"kfunc:nosuch", ProbeKind::kKernelFunction, "tb_no_such_function", 0, ""};
  for (const AttachSpec& bad :
       {spec(nosuch, "record"), spec(nofunc, "record"), spec(getpid_probe(), "record", {{"buffers", "pid"}})}) {
    LttngKernelTracer t;
    Status s = t.attach(bad);
    EXPECT_FALSE(s) << bad.probe.name;
    t.teardown();
    EXPECT_EQ(our_sessions(), 0);
    EXPECT_EQ(our_temp_dirs(), 0);
  }
}

TEST_F(LttngKernelTest, TheDaemonItStartedIsKeptUntilExitAndItsModulesGoWithIt) {
  if (lttng::sessiond_alive() && !lttng::own_sessiond())
    GTEST_SKIP() << "a session daemon was already running (not ours to stop)";
  LttngKernelTracer t;
  ASSERT_TRUE(t.attach(spec(getpid_probe(), "record")));
  pid_t daemon = t.started_sessiond();
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(lttng_modules_loaded());
  ASSERT_TRUE(t.enable());  // torn down while a session is open
  fire_getpid(100);
  t.teardown();
  EXPECT_EQ(our_sessions(), 0);
  EXPECT_EQ(our_temp_dirs(), 0);
  // Kept for the next attach, which uses it.
  EXPECT_EQ(lttng::own_sessiond(), daemon);
  ASSERT_TRUE(t.attach(spec(getpid_probe(), "record")));
  EXPECT_EQ(t.started_sessiond(), daemon);
  t.teardown();
  // What exit does (tracebench::keep_until_exit).
  EXPECT_TRUE(lttng::release_own_sessiond());
  EXPECT_TRUE(lttng::process_gone(daemon));
  EXPECT_FALSE(lttng::sessiond_alive());
  EXPECT_FALSE(lttng_modules_loaded()) << read_file("/proc/modules");
}

TEST_F(LttngKernelTest, CleanupRemovesWhatAKilledRunLeft) {
  ASSERT_TRUE(lttng::release_own_sessiond());  // one an earlier test of this process kept
  if (lttng::sessiond_alive()) GTEST_SKIP() << "a session daemon was already running";
  // A run SIGKILLed mid-block: its session is open, its daemon (and the
  // modules that daemon loaded) outlive it.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    LttngKernelTracer t;
    AttachSpec s;
    s.probe = getpid_probe();
    s.action = "record";
    char ok = t.attach(s) && t.enable() ? '1' : '0';
    (void)!write(ready[1], &ok, 1);
    for (;;) pause();
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(ok, '1') << "the child could not attach";
  std::string prefix = std::string(lttng::kSessionPrefix) + std::to_string(child) + "-k";
  auto sessions_of_child = [&] {
    if (!lttng::sessiond_alive()) return 0;
    lttng_session* list = nullptr;
    int n = lttng_list_sessions(&list), mine = 0;
    for (int i = 0; i < n; ++i) mine += std::strncmp(list[i].name, prefix.c_str(), prefix.size()) == 0;
    std::free(list);
    return mine;
  };
  EXPECT_EQ(sessions_of_child(), 1);
  EXPECT_TRUE(lttng_modules_loaded());

  std::vector<std::string> removed = lttng::cleanup_leftovers();
  std::string all;
  for (const auto& r : removed) all += r + "\n";
  EXPECT_TRUE(contains(all, "lttng session " + prefix)) << all;
  EXPECT_TRUE(contains(all, "trace directory /tmp/tracebench-lttng-" + std::to_string(child))) << all;
  EXPECT_TRUE(contains(all, "lttng-sessiond")) << all;
  EXPECT_FALSE(lttng::sessiond_alive());
  EXPECT_FALSE(lttng_modules_loaded()) << read_file("/proc/modules");
  EXPECT_TRUE(lttng::cleanup_leftovers().empty()) << "a second cleanup finds nothing";
}

}  // namespace
}  // namespace tracebench::lttng_kernel
