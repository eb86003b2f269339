// kprobes adapter tests.  They need a kernel with kprobes and the companion
// module, so ctest runs them inside the VM lab ("vm.kprobes"); on a host
// without kprobes every test skips and says why.
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tracebench/workload.h"
#include "kmod/include/tracebench_kmod_abi.h"
#include "tracers/common/tracefs_leftovers.h"
#include "tracers/kprobes/kprobes_tracer.h"
#include "tracebench/tracer.h"

namespace tracebench::kprobes {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

const Workload& target_workload() {
  const Workload* w = find_workload("kmod_target");
  if (!w) std::abort();
  return *w;
}

class KprobesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KprobesTracer probe;
    Availability av = probe.available();
    if (!av.ok) GTEST_SKIP() << av.reason;
    if (access(TB_KMOD_DEVICE_PATH, F_OK) != 0)
      GTEST_SKIP() << TB_KMOD_DEVICE_PATH << " missing: the companion module is not loaded "
                   << "(ctest -R vm.kprobes runs these in the VM lab)";
  }

  AttachSpec kmod_spec(const std::string& action, std::size_t payload = 16) {
    AttachSpec spec;
    spec.probe = target_workload().probe;
    spec.action = action;
    spec.payload_bytes = payload;
    return spec;
  }

  std::unique_ptr<WorkloadState> workload(std::size_t payload = 16) {
    std::unique_ptr<WorkloadState> st;
    WorkloadParams p;
    p.payload_bytes = payload;
    Status s = target_workload().setup(p, &st);
    EXPECT_TRUE(s) << s.message();
    return st;
  }

  // Interleaves untraced and traced blocks like the harness does; returns
  // events fired while enabled.
  std::uint64_t run_blocks(KprobesTracer& t, WorkloadState& w, int reps, std::uint64_t n) {
    std::uint64_t fired = 0;
    for (int r = 0; r < reps; ++r) {
      w.fire(n);  // baseline block: tracer disabled, must not be counted
      Status s = t.enable();
      EXPECT_TRUE(s) << s.message();
      w.fire(n);
      fired += n;
      s = t.disable();
      EXPECT_TRUE(s) << s.message();
    }
    return fired;
  }

  static void expect_nothing_left(const KprobesTracer& t, const std::string& instance, const std::string& event) {
    std::string tracing = "/sys/kernel/tracing";
    if (!instance.empty()) {
      EXPECT_NE(access((tracing + "/instances/" + instance).c_str(), F_OK), 0)
          << "instance " << instance << " left behind";
    }
    if (!event.empty()) {
      EXPECT_FALSE(contains(slurp(tracing + "/kprobe_events"), event)) << "kprobe event " << event << " left behind";
    }
    EXPECT_FALSE(contains(slurp("/sys/kernel/debug/kprobes/list"), TB_KMOD_TARGET_SYMBOL))
        << "a kprobe on the target is still registered";
  }
};

class KprobesActionTest : public KprobesTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(KprobesActionTest, CountsEveryEventOnTheModuleTarget) {
  KprobesTracer t;
  Status s = t.attach(kmod_spec(GetParam()));
  ASSERT_TRUE(s) << s.message();
  std::string instance = t.instance_name(), event = t.event_name();
  auto w = workload();
  ASSERT_TRUE(w);
  std::uint64_t fired = run_blocks(t, *w, 3, 20000);
  ASSERT_TRUE(t.drain());
  EventCounts c = t.counts();
  EXPECT_TRUE(c.exact);
  EXPECT_EQ(c.recorded + c.lost, fired) << "recorded " << c.recorded << " lost " << c.lost;
  EXPECT_EQ(c.lost, 0u);
  nlohmann::json d = t.details();
  EXPECT_EQ(d["symbol"], TB_KMOD_TARGET_SYMBOL);
  EXPECT_NE(d["placement"], "unknown") << "debugfs kprobes/list not readable";
  EXPECT_NE(d["placement"], "absent");
  std::printf("%s: placement %s\n", GetParam(), d["placement"].get<std::string>().c_str());
  t.teardown();
  expect_nothing_left(t, instance, event);
}

INSTANTIATE_TEST_SUITE_P(All, KprobesActionTest,
                         ::testing::Values("tracefs_kprobe", "tracefs_kretprobe", "bpf_kprobe", "bpf_kretprobe"));

TEST_F(KprobesTest, SyscallEntryIsCountedAtLeastOncePerCall) {
  for (const char* action : {"tracefs_kprobe", "bpf_kprobe"}) {
    KprobesTracer t;
    AttachSpec spec;
    spec.probe = ProbePoint{"syscall:getpid", ProbeKind::kSyscall, "getpid", 0, ""};
    spec.action = action;
    Status s = t.attach(spec);
    ASSERT_TRUE(s) << action << ": " << s.message();
    EXPECT_TRUE(contains(t.symbol(), "sys_getpid")) << t.symbol();
    ASSERT_TRUE(t.enable());
    for (int i = 0; i < 5000; ++i) syscall(SYS_getpid);
    ASSERT_TRUE(t.disable());
    ASSERT_TRUE(t.drain());
    EventCounts c = t.counts();
    EXPECT_FALSE(c.exact);
    EXPECT_GE(c.recorded + c.lost, 5000u) << action;
    t.teardown();
  }
}

TEST_F(KprobesTest, Int3VersusOptimizedPlacement) {
  if (access("/proc/sys/debug/kprobes-optimization", W_OK) != 0)
    GTEST_SKIP() << "no debug.kprobes-optimization (CONFIG_OPTPROBES off)";
  const std::string before = slurp("/proc/sys/debug/kprobes-optimization");
  std::string placed[2];
  for (int opt = 0; opt <= 1; ++opt) {
    KprobesTracer t;
    AttachSpec spec = kmod_spec("tracefs_kprobe");
    spec.options = {{"offset", "body"}, {"optimize", std::to_string(opt)}};
    Status s = t.attach(spec);
    ASSERT_TRUE(s) << s.message();
    EXPECT_GT(t.offset(), 0u);
    auto w = workload();
    std::uint64_t fired = run_blocks(t, *w, 2, 5000);
    ASSERT_TRUE(t.drain());
    EventCounts c = t.counts();
    EXPECT_EQ(c.recorded + c.lost, fired)
        << "offset " << t.offset() << "\n"
        << slurp("/sys/kernel/debug/kprobes/list") << slurp("/sys/kernel/tracing/kprobe_events");
    placed[opt] = t.details()["placement"].get<std::string>();
    EXPECT_EQ(t.details()["kprobes_optimization"], opt);
    t.teardown();
  }
  std::printf("offset=body: optimize=0 -> %s, optimize=1 -> %s\n", placed[0].c_str(), placed[1].c_str());
  EXPECT_EQ(placed[0], "int3");
  // Whether the site can take a 5-byte jump depends on the compiled code;
  // the adapter reports what the kernel did, and it is never the ftrace site.
  EXPECT_TRUE(placed[1] == "optimized" || placed[1] == "int3") << placed[1];
  EXPECT_EQ(slurp("/proc/sys/debug/kprobes-optimization"), before) << "sysctl not restored";
}

TEST_F(KprobesTest, BadInputIsAClearErrorAndCreatesNothing) {
  const std::string events_before = slurp("/sys/kernel/tracing/kprobe_events");
  struct Case {
    std::string action;
    ProbePoint probe;
    std::map<std::string, std::string> options;
    std::string expect;
  };
  ProbePoint target = target_workload().probe;
  std::vector<Case> cases = {
      {"tracefs_kprobe", target, {{"bogus", "1"}}, "unknown option"},
      {"tracefs_kprobe", target, {{"offset", "-3"}}, "offset"},
      {"tracefs_kprobe", target, {{"optimize", "2"}}, "optimize"},
      {"nonsense", target, {}, "unknown action"},
      {"tracefs_kprobe",
       ProbePoint{"kfunc:x", ProbeKind::kKernelFunction, "tb_no_such_function_xyz", 0, ""},
       {},
       "not in /proc/kallsyms"},
      {"bpf_kprobe",
       ProbePoint{"syscall:x", ProbeKind::kSyscall, "no_such_syscall", 0, ""},
       {},
       "no kernel entry function"},
      {"tracefs_kprobe", ProbePoint{"user:x", ProbeKind::kUserFunction, "x", 0, ""}, {}, "cannot attach"},
      {"tracefs_kretprobe", target, {{"offset", "body"}}, "kretprobe"},
  };
  for (const auto& c : cases) {
    KprobesTracer t;
    AttachSpec spec;
    spec.action = c.action;
    spec.probe = c.probe;
    spec.options = c.options;
    Status s = t.attach(spec);
    EXPECT_FALSE(s) << c.expect;
    EXPECT_TRUE(contains(s.message(), c.expect)) << s.message();
    t.teardown();
  }
  EXPECT_EQ(slurp("/sys/kernel/tracing/kprobe_events"), events_before);
  EXPECT_FALSE(contains(slurp("/sys/kernel/debug/kprobes/list"), TB_KMOD_TARGET_SYMBOL));
}

TEST_F(KprobesTest, CleanupRemovesWhatAKilledRunLeft) {
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto* t = new KprobesTracer();  // leaked on purpose: the "killed" run
    AttachSpec spec = kmod_spec("tracefs_kprobe");
    Status s = t->attach(spec);
    char ok = s ? 1 : 0;
    if (write(pipefd[1], &ok, 1) != 1) _exit(2);
    if (s) (void)t->enable();
    _exit(0);  // no teardown
  }
  char ok = 0;
  ASSERT_EQ(read(pipefd[0], &ok, 1), 1);
  close(pipefd[0]);
  close(pipefd[1]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_EQ(ok, 1);
  const std::string tag = "tb" + std::to_string(pid) + "_kp";
  ASSERT_TRUE(contains(slurp("/sys/kernel/tracing/kprobe_events"), tag));
  std::vector<std::string> removed = tracebench::common::cleanup_tracefs_leftovers();
  EXPECT_EQ(removed.size(), 2u);  // its instance and its kprobe event
  EXPECT_FALSE(contains(slurp("/sys/kernel/tracing/kprobe_events"), tag));
  EXPECT_FALSE(contains(slurp("/sys/kernel/debug/kprobes/list"), TB_KMOD_TARGET_SYMBOL));
  // Our own live objects are never touched.
  EXPECT_TRUE(tracebench::common::cleanup_tracefs_leftovers().empty());
}

// The offset is read once, by the option schema: "010" is ten bytes (never
// octal), 0x hex is hex, and the word body stays a word.
TEST(KprobesHostTest, OffsetMeansWhatTheSchemaParsed) {
  for (const auto& [given, want] : std::vector<std::pair<std::string, std::string>>{
           {"010", "10"}, {"0x10", "16"}, {"16", "16"}, {"0", "0"}, {"body", "body"}}) {
    KprobesConfig c;
    Status s = parse_spec_options(AttachSpec{.options = {{"offset", given}}}, &c);
    ASSERT_TRUE(s.is_ok()) << given << ": " << s.message();
    EXPECT_EQ(c.offset, want) << given;
  }
  KprobesConfig c;
  EXPECT_FALSE(parse_spec_options(AttachSpec{.options = {{"offset", "4097"}}}, &c).is_ok());
}

TEST(KprobesHostTest, UnavailableKernelSaysUseTheVm) {
  KprobesTracer t;
  Availability av = t.available();
  if (av.ok) GTEST_SKIP() << "this kernel has kprobes";
  EXPECT_TRUE(contains(av.reason, "tracebench vm")) << av.reason;
  AttachSpec spec;
  spec.probe = target_workload().probe;
  spec.action = "tracefs_kprobe";
  EXPECT_FALSE(t.attach(spec));
}

}  // namespace
}  // namespace tracebench::kprobes
