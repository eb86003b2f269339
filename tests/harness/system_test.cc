// Machine probes of harness/src/system.cc that can be checked exactly.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <ctime>
#include <chrono>
#include <string>
#include <thread>

#include "tracebench/system.h"

namespace tracebench {
namespace {

TEST(ForeignCpuLoad, OtherProcessesTimeOverWallTime) {
  CpuTimeSnapshot a{10.0, 100.0, 1.0, true};
  CpuTimeSnapshot b{12.0, 103.0, 2.0, true};  // 3 s busy, 1 s of it ours, over 2 s
  EXPECT_DOUBLE_EQ(foreign_cpu_load(a, b), 1.0);
}

TEST(ForeignCpuLoad, NotMeasuredIsZero) {
  CpuTimeSnapshot a{10.0, 100.0, 1.0, true};
  CpuTimeSnapshot b{12.0, 103.0, 2.0, false};
  EXPECT_EQ(foreign_cpu_load(a, b), 0.0);
  EXPECT_EQ(foreign_cpu_load(a, a), 0.0);     // no time passed
  CpuTimeSnapshot c{12.0, 101.0, 2.0, true};  // only we ran (tick rounding can go below)
  EXPECT_EQ(foreign_cpu_load(a, c), 0.0);
}

TEST(ForeignCpuLoad, OwnThreadsAreNotForeign) {
  // Keep one of our threads busy for 300 ms: the machine's busy time grows,
  // and so does this process's own CPU time, which is subtracted.
  const CpuTimeSnapshot a = cpu_time_snapshot();
  ASSERT_TRUE(a.ok);
  // The thread spins until it has had 300 ms of CPU (its own clock), not
  // 300 ms of wall time: on a loaded machine it gets a fraction of a CPU.
  std::thread spin([] {
    timespec ts{};
    do { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); } while (ts.tv_sec == 0 && ts.tv_nsec < 300'000'000);
  });
  spin.join();
  const CpuTimeSnapshot b = cpu_time_snapshot();
  ASSERT_TRUE(b.ok);
  // The spinning thread is not the one taking the snapshots: the process's
  // CPU time must include every thread, or it would count as foreign.
  EXPECT_GE(b.self_s - a.self_s, 0.2);
  EXPECT_GE(b.machine_busy_s - a.machine_busy_s, 0.2);
}

TEST(TaskCpu, StatTicksAfterTheLastParenthesis) {
  std::uint64_t u = 0, k = 0;
  // A command name with spaces and parentheses, as /proc prints it.
  const std::string stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1000 0 0 0 317 58 0 0 20 0 3 0 12345 1000000 100";
  ASSERT_TRUE(parse_stat_ticks(stat, &u, &k));
  EXPECT_EQ(u, 317u);
  EXPECT_EQ(k, 58u);
  EXPECT_FALSE(parse_stat_ticks("4242 no-parenthesis S 1 2 3", &u, &k));
  EXPECT_FALSE(parse_stat_ticks("4242 (short) S 1 2 3", &u, &k));
  EXPECT_FALSE(parse_stat_ticks("4242 (bad) S 1 4242 4242 0 -1 4194560 1000 0 0 0 x7 58 0", &u, &k));
}

TEST(TaskCpu, SchedstatFirstFieldIsNanoseconds) {
  double ns = 0;
  ASSERT_TRUE(parse_schedstat_ns("123456789 2000 17\n", &ns));
  EXPECT_EQ(ns, 123456789.0);
  EXPECT_FALSE(parse_schedstat_ns("", &ns));
  EXPECT_FALSE(parse_schedstat_ns("garbage", &ns));
}

// A thread of ours burning ~100 ms of CPU: its schedstat time agrees with
// its own CPU clock, the process's time covers it, and a thread that is
// gone cannot be read.
TEST(TaskCpu, ReadsALiveThreadAndTheWholeProcess) {
  std::atomic<int> tid{0};
  std::atomic<bool> done{false}, release{false};
  std::atomic<double> own{0};
  std::thread t([&] {
    tid.store(static_cast<int>(gettid()));
    timespec ts{};
    auto now = [&] {
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
    };
    double until = now() + 100e6;
    while (now() < until) {}
    own.store(now());
    done.store(true);
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  TaskCpu thread, process;
  ASSERT_TRUE(read_task_cpu(getpid(), tid.load(), &thread));
  ASSERT_TRUE(read_task_cpu(getpid(), 0, &process));
  EXPECT_TRUE(thread.precise);
  EXPECT_NEAR(thread.ns, own.load(), 5e6);  // schedstat and the thread clock count the same time
  EXPECT_GE(process.ns, thread.ns);
  EXPECT_GE(thread.user_ticks + thread.sys_ticks, 5u);  // ~10 ticks at USER_HZ 100
  int gone = tid.load();
  release.store(true);
  t.join();
  // join() returns once the thread cleared its tid; the kernel reaps the task
  // (and /proc/<pid>/task/<tid> goes) a moment later, later still on a busy
  // machine: wait for that, up to a second.
  TaskCpu after;
  bool still_there = true;
  for (int i = 0; i < 200 && (still_there = static_cast<bool>(read_task_cpu(getpid(), gone, &after))); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_FALSE(still_there) << "thread " << gone << " still in /proc a second after it was joined";
  EXPECT_FALSE(read_task_cpu(999999999, 0, &after));
}

// Where a run executes, for each hypervisor the CPUID vendor leaf can show
// (none, KVM, QEMU's TCG, another, one that does not name itself) and each
// --execution the VM lab can claim.
TEST(Execution, DetectedFromTheHypervisorAndClaimsMustAgree) {
  struct Case {
    const char* claimed;
    const char* hypervisor;
    const char* want;  // nullptr: refused
  } cases[] = {
      {"", "", "host"},
      {"", "KVMKVMKVM", "host"},
      {"", "TCGTCGTCGTCG", "qemu-tcg"},
      {"", "VMwareVMware", "host"},
      {"", "unknown", "host"},
      {"host", "", "host"},
      {"host", "TCGTCGTCGTCG", nullptr},
      {"qemu-tcg", "TCGTCGTCGTCG", "qemu-tcg"},
      {"qemu-tcg", "KVMKVMKVM", nullptr},
      {"qemu-tcg-icount", "TCGTCGTCGTCG", "qemu-tcg-icount"},
      {"qemu-tcg-icount", "KVMKVMKVM", nullptr},
      {"qemu-tcg-icount", "", nullptr},
      {"qemu-kvm", "KVMKVMKVM", "qemu-kvm"},
      {"qemu-kvm", "", nullptr},
      {"qemu-kvm", "unknown", nullptr},
      {"bhyve", "", nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string("claimed '") + c.claimed + "', hypervisor '" + c.hypervisor + "'");
    std::string got = "untouched";
    Status s = check_execution(c.claimed, c.hypervisor, &got);
    if (c.want) {
      EXPECT_TRUE(s.is_ok()) << s.message();
      EXPECT_EQ(got, c.want);
    } else {
      EXPECT_FALSE(s.is_ok());
      EXPECT_EQ(got, "untouched");
    }
  }
  // The refusal says what the machine showed.
  std::string got;
  EXPECT_NE(check_execution("qemu-kvm", "", &got).message().find("no hypervisor"), std::string::npos);
  EXPECT_NE(check_execution("qemu-kvm", "unknown", &got).message().find("does not name itself"), std::string::npos);
  EXPECT_NE(check_execution("qemu-tcg", "KVMKVMKVM", &got).message().find("'KVMKVMKVM'"), std::string::npos);
  // Both of TCG's clocks are emulated; the others are not.
  EXPECT_TRUE(execution_emulated("qemu-tcg"));
  EXPECT_TRUE(execution_emulated("qemu-tcg-icount"));
  EXPECT_FALSE(execution_emulated("qemu-kvm"));
  EXPECT_FALSE(execution_emulated("host"));
}

// CPUID's signature is 12 bytes of the hypervisor's choosing: QEMU's TCG
// writes "TCGTCGTCGTCG" and bhyve "bhyve bhyve " once, not a name per
// CPU; people are shown the hypervisor's name, once.
TEST(HypervisorName, EachKnownSignatureIsNamedOnce) {
  EXPECT_EQ(hypervisor_name("TCGTCGTCGTCG"), "QEMU TCG");
  EXPECT_EQ(hypervisor_name("bhyve bhyve "), "bhyve");
  EXPECT_EQ(hypervisor_name("KVMKVMKVM"), "KVM");
  EXPECT_EQ(hypervisor_name("Microsoft Hv"), "Hyper-V");
  EXPECT_EQ(hypervisor_name("VMwareVMware"), "VMware");
  EXPECT_EQ(hypervisor_name("XenVMMXenVMM"), "Xen");
  EXPECT_EQ(hypervisor_name(""), "none");
  EXPECT_EQ(hypervisor_name("unknown"), "unknown (no signature)");
  EXPECT_EQ(hypervisor_name("  Acme HV   "), "Acme HV");  // an unknown one, trimmed
  EXPECT_EQ(hypervisor_name("    "), "unknown (a blank signature)");
}

}  // namespace
}  // namespace tracebench
