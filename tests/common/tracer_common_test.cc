// tracers/common: the naming scheme of owned objects, process liveness and
// the cleanup of what dead runs left in tracefs.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/common/require.h"
#include "tracers/common/names.h"
#include "tracers/common/tracefs_leftovers.h"
#include "tracers/common/proc.h"

namespace tracebench::common {
namespace {

// A profile probe's timer: its clock reads turned into firings (whole
// periods), a window per read, and one per switch back into the thread
// between enabled() and disabled() (a sleep is one); no period, nothing.
std::uint64_t context_switches_of_this_thread() {
  rusage ru{};
  EXPECT_EQ(getrusage(RUSAGE_THREAD, &ru), 0);
  return static_cast<std::uint64_t>(ru.ru_nvcsw + ru.ru_nivcsw);
}

TEST(TimerFirings, ClockReadsAndSwitchesBackIn) {
  TimerFirings t(100);
  const std::uint64_t before = context_switches_of_this_thread();
  t.enabled();
  t.clock_read(1050);
  t.clock_read(99);
  t.disabled();
  // A window per read, and one per switch the thread had (none, unless the
  // scheduler preempted it in between: a busy machine does, now and then).
  const std::uint64_t switched = context_switches_of_this_thread() - before;
  EXPECT_EQ(t.fired(), 10u);
  EXPECT_GE(t.windows(), 2u);
  EXPECT_LE(t.windows(), 2u + switched) << "a window per read, one per switch (" << switched << ")";
  t.enabled();
  t.clock_read(300);
  usleep(2000);
  t.disabled();
  EXPECT_EQ(t.fired(), 13u);
  EXPECT_GE(t.windows(), 4u) << "the sleep switched the thread out and back in";
  TimerFirings none;
  none.clock_read(1000);
  EXPECT_EQ(none.fired(), 0u);
  EXPECT_EQ(none.windows(), 0u);
}

TEST(OwnedNames, CarryThisProcessAndParseBack) {
  const long me = ::getpid();
  EXPECT_EQ(owned_name(), "tracebench-" + std::to_string(me));
  EXPECT_EQ(owned_name("kp3"), "tracebench-" + std::to_string(me) + "-kp3");
  EXPECT_EQ(owned_event_name("features"), "tb" + std::to_string(me) + "_features");
  EXPECT_EQ(name_owner(owned_name("kp3")), me);
  EXPECT_EQ(name_owner(owned_name()), me);
  EXPECT_EQ(event_owner(owned_event_name("p0_tb_site")), me);
  EXPECT_EQ(name_owner("tracebench-lttng-4242-aZ81", "tracebench-lttng-"), 4242);
}

TEST(OwnedNames, OthersNamesAreNotOurs) {
  for (const char* n : {"tracebench-xcheck-12", "tracebench-", "tracebench-12x", "other-12", "tracebench-1234567890",
                        "tb12", "tracebench12"})
    EXPECT_EQ(name_owner(n), -1) << n;
  EXPECT_EQ(event_owner("tb_count"), -1);  // a BPF program name, no pid
  EXPECT_EQ(event_owner("tb12-x"), -1);
}

TEST(Liveness, ThisProcessIsAliveAndNotGone) {
  EXPECT_TRUE(pid_alive(::getpid()));
  EXPECT_FALSE(owner_is_gone(::getpid()));  // never our own objects
  EXPECT_FALSE(pid_alive(0));
  EXPECT_FALSE(pid_alive(-1));
  EXPECT_FALSE(owner_is_gone(-1));
}

TEST(Liveness, AZombieIsGoneAndAReapedProcessToo) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  // Not reaped yet: a zombie.  Its objects are leftovers already.
  for (int i = 0; i < 200 && pid_alive(child); ++i) usleep(10000);
  EXPECT_FALSE(pid_alive(child));
  EXPECT_TRUE(owner_is_gone(child));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(pid_alive(child));
}

TEST(Proc, AddressOfOurOwnCodeMapsToOurBinary) {
  std::string file;
  std::uint64_t offset = 0;
  ASSERT_TRUE(address_to_file_offset(::getpid(), reinterpret_cast<std::uintptr_t>(&pid_alive), &file, &offset));
  EXPECT_EQ(file.substr(file.rfind('/') + 1), "tracer_common_test");
  EXPECT_GT(offset, 0u);
  int on_stack = 0;
  Status s = address_to_file_offset(::getpid(), reinterpret_cast<std::uintptr_t>(&on_stack), &file, &offset);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("not in a file-backed mapping"), std::string::npos) << s.message();
  EXPECT_FALSE(online_cpus().empty());
}

// What a SIGKILLed kprobes run (an instance) and perf run (a uprobe event)
// leave, created as they name them for a pid that is gone: listed once each,
// removed once, and a live owner's objects (this process's) are never touched.
// A consumer's default CPU: outside the (measured) thread's pin, the first
// online CPU when the thread may run anywhere, none on one CPU.
TEST(Proc, ConsumerCpuIsAwayFromThisThreadsPin) {
  const std::vector<int> cpus = online_cpus();
  if (cpus.size() < 2) {
    EXPECT_EQ(cpu_away_from_this_thread(), -1);
    GTEST_SKIP() << "one online CPU";
  }
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  EXPECT_FALSE(this_thread_pinned_to(cpus.front()) && CPU_COUNT(&all) > 1);
  for (int measured : {cpus.front(), cpus.back()}) {
    CPU_ZERO(&one);
    CPU_SET(measured, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    const int away = cpu_away_from_this_thread();
    EXPECT_NE(away, measured);
    EXPECT_EQ(away, measured == cpus.front() ? cpus[1] : cpus.front());
    EXPECT_TRUE(this_thread_pinned_to(measured));
    EXPECT_FALSE(this_thread_pinned_to(away));
    EXPECT_FALSE(this_thread_pinned_to(-1));
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof all, &all), 0);
  if (CPU_COUNT(&all) == static_cast<int>(cpus.size())) { EXPECT_EQ(cpu_away_from_this_thread(), cpus.front()); }
}

// The one rule for a consumer_cpu a user asks for, whichever adapter: an
// online CPU; the refusal names the adapter, the CPU and the online ones.
TEST(Proc, ConsumerCpuMustBeOnline) {
  const std::vector<int> cpus = online_cpus();
  ASSERT_FALSE(cpus.empty());
  for (int c : cpus) EXPECT_TRUE(check_consumer_cpu("perf", c)) << c;
  for (long bad : {-1L, 4095L, 1L << 20}) {
    const Status st = check_consumer_cpu("ebpf", bad);
    EXPECT_FALSE(st) << bad;
    EXPECT_NE(st.message().find("ebpf: option consumer_cpu=" + std::to_string(bad) + " is not an online CPU (online: "),
              std::string::npos)
        << st.message();
  }
}

// uprobe_events' place for a uprobe, one writer for ftrace and perf: the
// reference counter (an SDT semaphore) only when there is one.
TEST(Proc, UprobeLocationAsUprobeEventsWritesIt) {
  std::string where;
  ASSERT_TRUE(uprobe_location("/usr/bin/x", 0x1a2b, 0, &where));
  EXPECT_EQ(where, "/usr/bin/x:0x1a2b");
  ASSERT_TRUE(uprobe_location("/usr/bin/x", 0x1a2b, 0x4010, &where));
  EXPECT_EQ(where, "/usr/bin/x:0x1a2b(0x4010)");
  const Status st = uprobe_location("/tmp/a b", 0x10, 0, &where);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("white space: /tmp/a b"), std::string::npos) << st.message();
}

TEST(TracefsLeftovers, DeadOwnersObjectsOfEveryAdapterAreRemovedOnce) {
  const std::string tracing = "/sys/kernel/tracing";
  if (access((tracing + "/uprobe_events").c_str(), W_OK) != 0)
    TB_SKIP_OR_FAIL("ftrace", "no writable tracefs (not root?)");
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  const std::string d = std::to_string(dead), me = std::to_string(getpid());
  const std::string dead_inst = "tracebench-" + d + "-kp0", live_inst = "tracebench-" + me + "-kp0";
  const std::string dead_ev = "tb" + d + "_p0_main", live_ev = "tb" + me + "_p0_main";
  std::filesystem::create_directory(tracing + "/instances/" + dead_inst);
  std::filesystem::create_directory(tracing + "/instances/" + live_inst);
  auto write_line = [&](const std::string& line) {
    int fd = open((tracing + "/uprobe_events").c_str(), O_WRONLY | O_APPEND);
    ssize_t n = fd >= 0 ? write(fd, line.data(), line.size()) : -1;
    int err = errno;
    if (fd >= 0) close(fd);
    return n == static_cast<ssize_t>(line.size()) ? std::string() : line + ": " + strerror(err);
  };
  for (const auto& ev : {dead_ev, live_ev}) ASSERT_EQ(write_line("p:tracebench/" + ev + " /bin/true:0x100\n"), "");

  auto listed = cleanup_tracefs_leftovers(false);
  auto count = [&](const std::vector<std::string>& v, const std::string& what) {
    return std::count_if(v.begin(), v.end(), [&](const std::string& s) { return s.find(what) != std::string::npos; });
  };
  EXPECT_EQ(count(listed, dead_inst), 1);
  EXPECT_EQ(count(listed, dead_ev), 1);
  EXPECT_EQ(count(listed, me), 0);
  auto removed = cleanup_tracefs_leftovers(true);
  EXPECT_EQ(count(removed, dead_inst), 1);
  EXPECT_EQ(count(removed, dead_ev), 1);
  EXPECT_FALSE(std::filesystem::exists(tracing + "/instances/" + dead_inst));
  EXPECT_TRUE(std::filesystem::exists(tracing + "/instances/" + live_inst));
  std::ifstream in(tracing + "/uprobe_events");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all.find(dead_ev), std::string::npos);
  EXPECT_NE(all.find(live_ev), std::string::npos);
  EXPECT_TRUE(cleanup_tracefs_leftovers(false).empty() || count(cleanup_tracefs_leftovers(false), d) == 0);

  std::filesystem::remove(tracing + "/instances/" + live_inst);
  EXPECT_EQ(write_line("-:tracebench/" + live_ev + "\n"), "");
}

}  // namespace
}  // namespace tracebench::common
