// Drives the perf adapter directly against the running kernel:
// attach -> enable -> fire N -> disable -> drain -> counts().
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <map>
#include <chrono>
#include <ctime>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/require.h"
#include "tracebench/verification.h"
#include "tracebench/workload.h"
#include "tracers/perf/perf_tracer.h"
#include "tests/common/tracer_fixture.h"
#include "tests/common/usdt_site.h"

using tracebench::AttachSpec;
using tracebench::EventCounts;
using tracebench::ProbeKind;
using tracebench::ProbePoint;
using tracebench::perf::PerfTracer;
using tracebench::test::fire_getpid;
using tracebench::test::getpid_probe;
using tracebench::test::profile_probe;
using tracebench::test::read_file;
using tracebench::test::spec_for;
using tracebench::test::spin_cpu;

extern "C" __attribute__((noinline, used)) void tb_perf_test_hot(void) { asm volatile("" ::: "memory"); }

// The user-function probe on it, as a workload declares one.
static ProbePoint hot_probe() {
  return ProbePoint{"user:tb_perf_test_hot", ProbeKind::kUserFunction, "tb_perf_test_hot",
                    reinterpret_cast<std::uintptr_t>(&tb_perf_test_hot), ""};
}

namespace {

int open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

int perf_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) {
      char target[256] = {};
      std::string p = std::string("/proc/self/fd/") + e->d_name;
      ssize_t len = readlink(p.c_str(), target, sizeof target - 1);
      if (len > 0 && std::string(target).find("perf_event") != std::string::npos) ++n;
    }
    closedir(d);
  }
  return n;
}

bool our_uprobe_events_left() {
  return tracebench::test::read_file("/sys/kernel/tracing/dynamic_events")
             .find("tracebench/tb" + std::to_string(getpid()) + "_p") != std::string::npos;
}

class PerfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto a = tracer.available();
    if (!a.ok) TB_SKIP_OR_FAIL("perf", a.reason);
    fds_before = open_fds();
  }
  void TearDown() override {
    tracer.teardown();
    EXPECT_EQ(perf_fds(), 0) << "perf event fds left open";
    EXPECT_FALSE(our_uprobe_events_left()) << "uprobe event left in tracefs";
    if (fds_before) { EXPECT_EQ(open_fds(), fds_before); }
  }
  PerfTracer tracer;
  int fds_before = 0;
};

// sample=record asks for perf record's layout (IP|TID|TIME|CPU|PERIOD|RAW):
// samples are still attributed to our thread and the event type, so the
// count stays exact, and each sample is bigger than a minimal one.
TEST_F(PerfTest, RecordSampleLayoutCountsExactlyWithBiggerSamples) {
  std::uint64_t bytes[2] = {0, 0};
  for (int record = 0; record < 2; ++record) {
    ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"sample", record ? "record" : "minimal"}})).is_ok());
    ASSERT_TRUE(tracer.enable().is_ok());
    fire_getpid(10000);
    ASSERT_TRUE(tracer.disable().is_ok());
    ASSERT_TRUE(tracer.drain().is_ok());
    EventCounts c = tracer.counts();
    EXPECT_EQ(c.recorded + c.lost, 10000u);
    EXPECT_EQ(tracer.details()["foreign_samples"], 0);
    ASSERT_GT(c.recorded, 0u);
    bytes[record] = tracer.details()["bytes_consumed"].get<std::uint64_t>() / c.recorded;
    tracer.teardown();
  }
  EXPECT_GE(bytes[1], bytes[0] + 24) << "IP, CPU and PERIOD add 24 bytes per sample";
  EXPECT_FALSE(tracer.attach(spec_for(getpid_probe(), {{"sample", "everything"}})).is_ok());
}

TEST_F(PerfTest, GetpidCountIsExact) {
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe())).is_ok());
  EXPECT_EQ(tracer.event_fds(), 0u);  // traced events exist only while enabled
  std::uint64_t fired = 0;
  for (int rep = 0; rep < 3; ++rep) {
    fire_getpid(1000);  // disabled
    ASSERT_TRUE(tracer.enable().is_ok());
    EXPECT_GT(tracer.event_fds(), 0u);
    fire_getpid(20000);
    fired += 20000;
    ASSERT_TRUE(tracer.disable().is_ok());
  }
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_TRUE(c.exact);
  EXPECT_EQ(c.recorded + c.lost, fired);
  EXPECT_GT(c.recorded, 0u);
  auto d = tracer.details();
  EXPECT_EQ(d["foreign_samples"], 0);
  EXPECT_EQ(d["flush_samples"], d["rings"]);
  EXPECT_EQ(d["kernel_hits"], fired) << d.dump();  // the kernel's own count agrees
  EXPECT_EQ(d["enables"], 3);                      // opened at each enable()
  EXPECT_GT(d["event_fds"].get<std::size_t>(), 0u);
}

// The read syscall is the one the adapter itself uses to read its event
// counts: those reads must fall outside the enabled window, or the count
// over-runs by two per window (the 6092 recorded for 6064 fired).
TEST_F(PerfTest, ReadCountIsExactTheAdaptersOwnReadsAreNotRecorded) {
  ProbePoint p{"syscall:read", ProbeKind::kSyscall, "read", 0, "read(2)"};
  ASSERT_TRUE(tracer.attach(spec_for(p)).is_ok());
  int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  char buf[8];
  std::uint64_t fired = 0;
  for (int rep = 0; rep < 7; ++rep) {
    for (int i = 0; i < 100; ++i) ASSERT_EQ(read(fd, buf, sizeof buf), 8);  // disabled
    ASSERT_TRUE(tracer.enable().is_ok());
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(read(fd, buf, sizeof buf), 8);
    fired += 1000;
    ASSERT_TRUE(tracer.disable().is_ok());
  }
  close(fd);
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_TRUE(c.exact);
  EXPECT_EQ(c.recorded + c.lost, fired);
  EXPECT_EQ(tracer.details()["kernel_hits"], fired) << tracer.details().dump();
}

TEST_F(PerfTest, ConsumerIsPinnedAwayFromMeasuredCpu) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 2) GTEST_SKIP() << "skipping: one CPU, nothing to pin away from";
  // Like the harness: the attaching (measured) thread sits on the last CPU.
  int last = static_cast<int>(ncpu - 1);
  cpu_set_t old, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  tracebench::Status st = tracer.attach(spec_for(getpid_probe()));
  sched_setaffinity(0, sizeof old, &old);
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_NE(tracer.consumer_cpu(), last);
  EXPECT_GE(tracer.consumer_cpu(), 0);
}

TEST_F(PerfTest, DisabledEventRecordsNothing) {
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe())).is_ok());
  fire_getpid(5000);
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded, 0u);
  EXPECT_EQ(tracer.counts().lost, 0u);
}

// With the default ring, a block of block_event_capacity() events is all
// kept even when the consumer cannot run at all: the firing thread runs
// SCHED_FIFO on the consumer's CPU, as in the test above.  A ring the user
// sized has no limit.
TEST_F(PerfTest, BlockCapacityHoldsABlockWithTheConsumerStarved) {
  cpu_set_t old, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
  int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"consumer_cpu", std::to_string(cpu)}})).is_ok());
  const std::uint64_t n = tracer.block_event_capacity();
  EXPECT_EQ(n, 512u * 4096 / 2 / 128);
  ASSERT_TRUE(tracer.enable().is_ok());
  sched_param fifo{};
  fifo.sched_priority = 1;
  ASSERT_EQ(sched_setscheduler(0, SCHED_FIFO, &fifo), 0) << "needs root (CAP_SYS_NICE)";
  fire_getpid(n);
  sched_param other{};
  sched_setscheduler(0, SCHED_OTHER, &other);
  sched_setaffinity(0, sizeof old, &old);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.recorded, n);
  tracer.teardown();
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"mmap_pages", "64"}})).is_ok());
  EXPECT_EQ(tracer.block_event_capacity(), 0u);
}

TEST_F(PerfTest, SmallRingCountsLost) {
  // One 4 KiB page per CPU. The kernel still wakes the consumer every half
  // ring, so on an idle machine a consumer on the other CPU can keep up with
  // a getpid loop and nothing is lost. To make the overflow certain, the
  // firing thread runs SCHED_FIFO on the consumer's own CPU: the consumer
  // cannot run until the burst is over, and the ring holds ~100 samples of
  // the 100000 fired.
  cpu_set_t old, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
  int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  ASSERT_TRUE(
      tracer.attach(spec_for(getpid_probe(), {{"mmap_pages", "1"}, {"consumer_cpu", std::to_string(cpu)}})).is_ok());
  ASSERT_EQ(tracer.consumer_cpu(), cpu);
  ASSERT_TRUE(tracer.enable().is_ok());
  sched_param fifo{};
  fifo.sched_priority = 1;
  ASSERT_EQ(sched_setscheduler(0, SCHED_FIFO, &fifo), 0) << "needs root (CAP_SYS_NICE)";
  fire_getpid(100000);
  sched_param other{};
  sched_setscheduler(0, SCHED_OTHER, &other);
  sched_setaffinity(0, sizeof old, &old);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_GT(c.lost, 0u);
  EXPECT_GT(c.recorded, 0u);
  EXPECT_EQ(c.recorded + c.lost, 100000u) << tracer.details().dump();
  EXPECT_GT(tracer.details()["lost_records"], 0);
  EXPECT_EQ(tracer.details()["kernel_lost_samples"], c.lost);
}

TEST_F(PerfTest, ThreadsBeforeAndAfterAttach) {
  std::atomic<int> go{0};
  std::thread early([&] {
    while (go.load() == 0) std::this_thread::yield();
    fire_getpid(3000);
  });
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe())).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  std::thread late([&] { fire_getpid(4000); });
  go.store(1);
  fire_getpid(2000);
  early.join();
  late.join();
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded + c.lost, 9000u);
}

TEST_F(PerfTest, RawSyscallsFilteredById) {
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"event", "raw_syscalls:sys_enter"}})).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  fire_getpid(5000);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_TRUE(c.exact);
  EXPECT_EQ(c.recorded + c.lost, 5000u);
}

TEST_F(PerfTest, RawSyscallsUnfilteredIsInexact) {
  ASSERT_TRUE(
      tracer.attach(spec_for(getpid_probe(), {{"event", "raw_syscalls:sys_enter"}, {"id_filter", "off"}})).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  fire_getpid(5000);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_FALSE(c.exact);
  EXPECT_GE(c.recorded + c.lost, 5000u);
}

TEST_F(PerfTest, UprobeOnUserFunction) {
  void (*volatile fn)(void) = tb_perf_test_hot;
  ProbePoint p = hot_probe();
  tracebench::Status st = tracer.attach(spec_for(p));
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_TRUE(our_uprobe_events_left());  // the tracefs uprobe event exists while attached
  for (int i = 0; i < 100; ++i) fn();
  ASSERT_TRUE(tracer.enable().is_ok());
  for (int i = 0; i < 3000; ++i) fn();
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded + c.lost, 3000u);
  EXPECT_EQ(c.lost, 0u);
}

// The kernel's own hit count of the uprobe (uprobe_profile) sees only the
// calls made while enabled: a disabled-but-open perf event would keep the
// breakpoint in the code, and the untraced baseline would pay the trap.
std::uint64_t uprobe_nhit(const std::string& event) {
  std::istringstream in(read_file("/sys/kernel/tracing/uprobe_profile"));
  std::string file, name;
  std::uint64_t nhit = 0;
  while (in >> file >> name >> nhit)
    if (name == event) return nhit;
  return ~0ull;
}

TEST_F(PerfTest, DisabledUprobeIsNotHit) {
  void (*volatile fn)(void) = tb_perf_test_hot;
  ProbePoint p = hot_probe();
  ASSERT_TRUE(tracer.attach(spec_for(p)).is_ok());
  std::string label = tracer.details()["event"].get<std::string>();  // "tracebench:<name> (file:0x..)"
  std::string event = label.substr(label.find(':') + 1, label.find(' ') - label.find(':') - 1);
  ASSERT_NE(uprobe_nhit(event), ~0ull) << event << " not in uprobe_profile";
  std::uint64_t before = uprobe_nhit(event);
  for (int rep = 0; rep < 3; ++rep) {
    for (int i = 0; i < 500; ++i) fn();  // disabled
    ASSERT_TRUE(tracer.enable().is_ok());
    for (int i = 0; i < 1000; ++i) fn();
    ASSERT_TRUE(tracer.disable().is_ok());
  }
  for (int i = 0; i < 500; ++i) fn();
  EXPECT_EQ(uprobe_nhit(event) - before, 3000u);
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded + tracer.counts().lost, 3000u);
}

TEST_F(PerfTest, UprobeWithThreadsCreatedAfterAttach) {
  // Inherited uprobe PMU events re-read the path on every clone.
  void (*volatile fn)(void) = tb_perf_test_hot;
  ProbePoint p = hot_probe();
  ASSERT_TRUE(tracer.attach(spec_for(p)).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  std::thread t1([&] {
    for (int i = 0; i < 1500; ++i) fn();
  });
  std::thread t2([&] {
    for (int i = 0; i < 2500; ++i) fn();
  });
  t1.join();
  t2.join();
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded + tracer.counts().lost, 4000u);
}

TEST_F(PerfTest, UprobePmuOption) {
  void (*volatile fn)(void) = tb_perf_test_hot;
  ProbePoint p = hot_probe();
  tracebench::Status st = tracer.attach(spec_for(p, {{"uprobe", "pmu"}}));
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_FALSE(our_uprobe_events_left());  // nothing in tracefs with the PMU
  ASSERT_TRUE(tracer.enable().is_ok());
  for (int i = 0; i < 2000; ++i) fn();
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded + tracer.counts().lost, 2000u);
}

// at=return, through a tracefs uprobe event (`r:`) or the uprobe PMU (its
// retprobe bit): one sample per return; refused on a probe that is not a
// user function.
TEST_F(PerfTest, ReturnProbeBothWays) {
  void (*volatile fn)(void) = tb_perf_test_hot;
  ProbePoint p = hot_probe();
  for (const char* how : {"tracefs", "pmu"}) {
    SCOPED_TRACE(how);
    tracebench::Status st = tracer.attach(spec_for(p, {{"uprobe", how}, {"at", "return"}}));
    ASSERT_TRUE(st.is_ok()) << st.message();
    const std::string label = tracer.details()["event"].get<std::string>();
    if (std::string(how) == "pmu") {
      EXPECT_EQ(label.rfind("uretprobe-pmu:", 0), 0u) << label;
    } else {
      const std::string event = label.substr(label.find(':') + 1, label.find(' ') - label.find(':') - 1);
      const std::string events = read_file("/sys/kernel/tracing/uprobe_events");
      EXPECT_NE(events.find("r:tracebench/" + event + " "), std::string::npos) << events;
    }
    for (int i = 0; i < 100; ++i) fn();
    ASSERT_TRUE(tracer.enable().is_ok());
    for (int i = 0; i < 2000; ++i) fn();
    ASSERT_TRUE(tracer.disable().is_ok());
    ASSERT_TRUE(tracer.drain().is_ok());
    EXPECT_EQ(tracer.counts().recorded, 2000u);
    EXPECT_EQ(tracer.counts().lost, 0u);
    tracer.teardown();
    EXPECT_FALSE(our_uprobe_events_left());
  }
  tracebench::Status st = tracer.validate(spec_for(getpid_probe(), {{"at", "return"}}));
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("at=return applies to user-function probes"), std::string::npos) << st.message();
}

// A usdt probe, through a tracefs uprobe event or the uprobe PMU: the note's
// semaphore is the uprobe's reference counter, raised only while the events
// are open (enabled), so the guarded site fires then and is skipped
// otherwise; a note the binary lacks is refused.
TEST_F(PerfTest, UsdtSiteWithItsSemaphoreBothWays) {
  for (const char* how : {"tracefs", "pmu"}) {
    SCOPED_TRACE(how);
    ProbePoint p{"usdt:tb_test_usdt:fired", ProbeKind::kUsdt, "tb_test_usdt:fired", 0, ""};
    const TbUsdtPair pair{0, 0};
    int fired = 0;
    ASSERT_TRUE(tracer.supports(p));
    tracebench::Status st = tracer.attach(spec_for(p, {{"uprobe", how}}));
    ASSERT_TRUE(st.is_ok()) << st.message();
    EXPECT_NE(tracer.details()["event"].get<std::string>().find(")"), std::string::npos)
        << "no reference counter: " << tracer.details()["event"];
    EXPECT_EQ(tb_test_usdt_fired_semaphore, 0) << "raised while attached but not enabled";
    for (long i = 0; i < 100; ++i) fired += tb_test_usdt_target(i, &pair);
    EXPECT_EQ(fired, 0);
    ASSERT_TRUE(tracer.enable().is_ok());
    EXPECT_GE(tb_test_usdt_fired_semaphore, 1);
    for (long i = 0; i < 2000; ++i) fired += tb_test_usdt_target(i, &pair);
    ASSERT_TRUE(tracer.disable().is_ok());
    EXPECT_EQ(fired, 2000);
    EXPECT_EQ(tb_test_usdt_fired_semaphore, 0) << "still raised after disable";
    ASSERT_TRUE(tracer.drain().is_ok());
    EXPECT_EQ(tracer.counts().recorded, 2000u);
    EXPECT_EQ(tracer.counts().lost, 0u);
    tracer.teardown();
  }
  ProbePoint missing{"usdt:tb_test_usdt:nosuch", ProbeKind::kUsdt, "tb_test_usdt:nosuch", 0, ""};
  tracebench::Status st = tracer.attach(spec_for(missing));
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("has no SDT note tb_test_usdt:nosuch"), std::string::npos) << st.message();
}

TEST_F(PerfTest, ClockOption) {
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"clock", "monotonic_raw"}})).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  fire_getpid(1000);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded, 1000u);
}

// ---- profile probes: the firing thread's cpu-clock, a sample every period

// Samples while enabled only, every 1e9/profile_hz ns of the thread's CPU
// time, sleeps included (each switch back in may move a firing); the judge
// holds the samples to the timer's own count (the event's clock).
TEST_F(PerfTest, ProfileSamplesTheFiringThreadsCpuClock) {
  ASSERT_TRUE(tracer.attach(spec_for(profile_probe(), {{"profile_hz", "5000"}})).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  spin_cpu(0.02);  // ~100 periods of 200 µs
  ASSERT_TRUE(tracer.disable().is_ok());
  spin_cpu(0.02);  // disabled: no sample
  ASSERT_TRUE(tracer.enable().is_ok());
  for (int i = 0; i < 5; ++i) {
    spin_cpu(0.004);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  ASSERT_TRUE(c.timer_fired.has_value());
  EXPECT_GE(*c.timer_fired, 180u);
  EXPECT_LE(*c.timer_fired, 260u) << "40 ms of CPU time at 5 kHz, the other 20 ms disabled";
  EXPECT_GE(c.timer_windows, 2u + 5u) << "two enables and a switch back in after each sleep";
  tracebench::Verification v = tracebench::judge_events(c, 0, 0, false, true);
  EXPECT_TRUE(v.passed()) << v.reason;
  auto d = tracer.details();
  EXPECT_EQ(d["foreign_samples"], 0);
  EXPECT_EQ(d["profile_period_ns"], 200000);
  EXPECT_EQ(d["event_fds"], d["rings"]) << "one thread's clock on each CPU";
}

TEST_F(PerfTest, ProfileBadOptionsAreRefused) {
  for (auto [probe, opts, want] : std::vector<std::tuple<ProbePoint, std::map<std::string, std::string>, std::string>>{
           {profile_probe(), {{"ecbs", "2"}}, "cannot apply to a profile probe"},
           {profile_probe(), {{"profile_hz", "0"}}, "profile_hz=0"},
           {getpid_probe(), {{"profile_hz", "99"}}, "applies to profile probes only"}}) {
    tracebench::Status st = tracer.attach(spec_for(probe, opts));
    ASSERT_FALSE(st.is_ok()) << want;
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
    EXPECT_EQ(perf_fds(), 0);
    tracer.teardown();
  }
}

TEST_F(PerfTest, BadOptionsChangeNothing) {
  for (auto opts : std::vector<std::map<std::string, std::string>>{{{"bogus", "1"}},
                                                                   {{"mmap_pages", "3"}},
                                                                   {{"consumer_cpu", "x"}},
                                                                   {{"clock", "sundial"}},
                                                                   {{"event", "nosuch:event"}},
                                                                   {{"consumer_cpu", "4000"}}}) {
    tracebench::Status st = tracer.attach(spec_for(getpid_probe(), opts));
    EXPECT_FALSE(st.is_ok()) << opts.begin()->first;
    EXPECT_FALSE(st.message().empty());
    EXPECT_EQ(perf_fds(), 0);
    tracer.teardown();
  }
}

// ---- option ecbs: N perf events per (thread, CPU) on the same tracepoint

int tasks_of_this_process() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

void expect_handler_sweep(PerfTracer& tracer, const ProbePoint& p, unsigned ecbs, bool truth,
                          const std::function<void()>& fire, std::uint64_t n) {
  SCOPED_TRACE("ecbs=" + std::to_string(ecbs) + " extra_predicate=" + (truth ? "true" : "false"));
  tracebench::Status st =
      // Rings that hold a whole repetition (up to 4 x 5000 records): the
      // count must not depend on how fast this host's reader keeps up.
      tracer.attach(spec_for(
          p, {{"ecbs", std::to_string(ecbs)}, {"extra_predicate", truth ? "true" : "false"}, {"mmap_pages", "512"}}));
  ASSERT_TRUE(st.is_ok()) << st.message();
  const std::size_t rings = tracer.details()["rings"].get<std::size_t>();
  const std::size_t traced_threads = static_cast<std::size_t>(tasks_of_this_process() - 1);  // less the consumer
  fire();                                                                                    // disabled
  std::uint64_t fired = 0;
  for (int rep = 0; rep < 3; ++rep) {
    ASSERT_TRUE(tracer.enable().is_ok());
    // N events for each (thread, CPU), all open while enabled.
    EXPECT_EQ(tracer.event_fds(), ecbs * rings * traced_threads);
    EXPECT_EQ(perf_fds(), static_cast<int>(ecbs * rings * traced_threads + rings));  // + the flush events
    fire();
    fired += n;
    ASSERT_TRUE(tracer.disable().is_ok());
    EXPECT_EQ(tracer.event_fds(), 0u);
  }
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, fired);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
  tracebench::Verification v = tracebench::judge_events(c, fired, 0, false);
  EXPECT_TRUE(v.passed()) << v.reason;
  auto d = tracer.details();
  EXPECT_EQ(d["ecbs"], static_cast<int>(ecbs));
  EXPECT_EQ(d["foreign_samples"], 0);
  EXPECT_EQ(d["kernel_hits"], fired);
  if (ecbs == 1) {
    EXPECT_FALSE(d.contains("extra_predicate"));
    EXPECT_EQ(d["sample"].get<std::string>().find("IDENTIFIER"), std::string::npos);
    return;
  }
  EXPECT_EQ(d["extra_predicate"], truth ? "true" : "false");
  // Sample ids only where the extras record; else the one-handler layout.
  EXPECT_EQ(d["sample"].get<std::string>().find("IDENTIFIER") != std::string::npos, truth) << d["sample"];
  for (const char* k : {"handler_event_fds", "handler_samples", "handler_kernel_hits", "handler_lost"})
    ASSERT_EQ(d[k].size(), ecbs) << k;
  for (unsigned h = 0; h < ecbs; ++h) {
    SCOPED_TRACE("handler " + std::to_string(h + 1));
    EXPECT_EQ(d["handler_event_fds"][h], rings * traced_threads);
    const std::uint64_t want = h == 0 || truth ? fired : 0;
    EXPECT_EQ(d["handler_samples"][h], want);
    EXPECT_EQ(d["handler_kernel_hits"][h], want);
    EXPECT_EQ(d["handler_lost"][h], 0u);
  }
}

TEST_F(PerfTest, EcbsSweepOnSyscall) {
  for (unsigned ecbs : {1u, 2u, 4u})
    for (bool truth : {true, false}) {
      expect_handler_sweep(
          tracer, getpid_probe(), ecbs, truth, [] { fire_getpid(5000); }, 5000);
      tracer.teardown();
      EXPECT_EQ(perf_fds(), 0);
    }
}

TEST_F(PerfTest, EcbsSweepOnUserFunction) {
  void (*volatile fn)(void) = tb_perf_test_hot;
  ProbePoint p = hot_probe();
  auto fire = [fn] {
    for (int i = 0; i < 2000; ++i) fn();
  };
  for (bool truth : {true, false}) {
    expect_handler_sweep(tracer, p, 3, truth, fire, 2000);
    tracer.teardown();
    EXPECT_EQ(perf_fds(), 0);
    EXPECT_FALSE(our_uprobe_events_left());
  }
}

// Extra handlers on a small ring (the overflow made certain as in
// SmallRingCountsLost): each handler's samples + its events' lost count add
// up to the firings, and the rings' lost records sum every handler's losses.
TEST_F(PerfTest, EcbsSmallRingLosesPerHandler) {
  cpu_set_t old, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
  int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  ASSERT_TRUE(
      tracer
          .attach(spec_for(getpid_probe(), {{"ecbs", "3"}, {"mmap_pages", "1"}, {"consumer_cpu", std::to_string(cpu)}}))
          .is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  sched_param fifo{};
  fifo.sched_priority = 1;
  ASSERT_EQ(sched_setscheduler(0, SCHED_FIFO, &fifo), 0) << "needs root (CAP_SYS_NICE)";
  fire_getpid(30000);
  sched_param other{};
  sched_setscheduler(0, SCHED_OTHER, &other);
  sched_setaffinity(0, sizeof old, &old);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  auto d = tracer.details();
  EXPECT_GT(c.lost, 0u) << d.dump();
  EXPECT_EQ(c.recorded + c.lost, 30000u) << d.dump();
  std::uint64_t lost = 0;
  for (unsigned h = 0; h < 3; ++h) {
    EXPECT_EQ(d["handler_samples"][h].get<std::uint64_t>() + d["handler_lost"][h].get<std::uint64_t>(), 30000u)
        << "handler " << h + 1 << ": " << d.dump();
    lost += d["handler_lost"][h].get<std::uint64_t>();
  }
  EXPECT_EQ(d["ring_lost_samples"], lost);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
}

TEST_F(PerfTest, EcbsBadValuesAreRefused) {
  for (auto opts : std::vector<std::map<std::string, std::string>>{
           {{"ecbs", "0"}}, {{"ecbs", "33"}}, {{"ecbs", "two"}}, {{"extra_predicate", "maybe"}}}) {
    tracebench::Status v = tracer.validate(spec_for(getpid_probe(), opts));
    ASSERT_FALSE(v.is_ok()) << opts.begin()->first << "=" << opts.begin()->second;
    EXPECT_NE(v.message().find(opts.begin()->first), std::string::npos) << v.message();
    EXPECT_FALSE(tracer.attach(spec_for(getpid_probe(), opts)).is_ok());
    EXPECT_EQ(perf_fds(), 0);
    tracer.teardown();
  }
}

// A many-probe workload (many_sites_16, as the harness runs it): a perf
// event per function and per (thread, CPU), every call of any site counted
// once while enabled and none while disabled, by tracefs uprobe events (at
// returns) and by the uprobe PMU (at entries); `sites` in the details; every
// event fd and tracefs event gone at teardown (TearDown); ecbs refused.
class PerfManySitesTest : public PerfTest,
                          public ::testing::WithParamInterface<std::tuple<const char*, const char*>> {};

TEST_P(PerfManySitesTest, EveryCallOfEverySiteCountsOnce) {
  const auto [how, at] = GetParam();
  ASSERT_TRUE(tracer.attaches_many_sites());
  const tracebench::Workload* w = tracebench::find_workload("many_sites_16");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->probe.more_sites.size(), 15u);
  std::unique_ptr<tracebench::WorkloadState> st;
  ASSERT_TRUE(w->setup(tracebench::WorkloadParams{}, &st));
  const tracebench::Status attached = tracer.attach(spec_for(w->probe, {{"uprobe", how}, {"at", at}}));
  ASSERT_TRUE(attached.is_ok()) << attached.message();
  constexpr std::uint64_t kCalls = 16 * 125;
  std::string why;
  ASSERT_TRUE(tracebench::test::fire_around_enabled(tracer, *st, kCalls, &why)) << why;
  const EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, kCalls);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
  EXPECT_TRUE(tracebench::judge_events(c, kCalls, 0, false).passed());
  const auto d = tracer.details();
  EXPECT_EQ(d["sites"].get<int>(), 16) << d.dump();
  EXPECT_EQ(d["kernel_hits"].get<std::uint64_t>(), kCalls) << d.dump();
  EXPECT_EQ(d["foreign_samples"].get<std::uint64_t>(), 0u) << d.dump();
  EXPECT_EQ(d["event_fds"].get<std::size_t>() % 16, 0u) << "not an event per site: " << d.dump();
  if (std::string(how) == "tracefs") { EXPECT_TRUE(our_uprobe_events_left()); }

  const tracebench::Status refused = tracer.validate(spec_for(w->probe, {{"ecbs", "2"}}));
  EXPECT_FALSE(refused.is_ok());
  EXPECT_NE(refused.message().find("applies to one site"), std::string::npos) << refused.message();
}

// Two of the four pairs (each both ways once; 2.5 and 5.3 s here: closing a
// PMU uprobe's events is the kernel's slow part).
INSTANTIATE_TEST_SUITE_P(HowAt, PerfManySitesTest,
                         ::testing::Values(std::make_tuple("tracefs", "return"), std::make_tuple("pmu", "entry")),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

// pid_filter=other: the events are another process's (a fork that calls the
// probed function 1000 times at the first enable), so this process's 3000
// calls are not recorded and the other's 1000 are (the probe was live), both
// ways of making the uprobe; the other process is gone after teardown; a
// probe the other process cannot call is refused.
TEST_F(PerfTest, PidFilterOtherRecordsTheOtherProcessAlone) {
  void (*volatile fn)(void) = tb_perf_test_hot;
  for (const char* how : {"tracefs", "pmu"}) {
    SCOPED_TRACE(how);
    tracebench::Status st = tracer.attach(spec_for(hot_probe(), {{"pid_filter", "other"}, {"uprobe", how}}));
    ASSERT_TRUE(st.is_ok()) << st.message();
    ASSERT_TRUE(tracer.enable().is_ok());
    for (int i = 0; i < 3000; ++i) fn();
    ASSERT_TRUE(tracer.disable().is_ok());
    ASSERT_TRUE(tracer.drain().is_ok());
    const EventCounts c = tracer.counts();
    EXPECT_TRUE(c.probe_disabled);
    EXPECT_EQ(c.recorded, 0u);
    EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
    EXPECT_TRUE(tracebench::judge_events(c, 3000, 0, false).passed()) << c.disabled_detail;
    const auto d = tracer.details();
    EXPECT_EQ(d["other_calls"].get<std::uint64_t>(), 1000u) << d.dump();
    EXPECT_EQ(d["kernel_hits"].get<std::uint64_t>(), 1000u) << d.dump();
    const pid_t other = d["other_pid"].get<pid_t>();
    ASSERT_GT(other, 0);
    EXPECT_NE(other, getpid());
    tracer.teardown();
    EXPECT_NE(kill(other, 0), 0) << "the other process outlived teardown";
  }
  const tracebench::Status refused = tracer.validate(spec_for(getpid_probe(), {{"pid_filter", "other"}}));
  EXPECT_FALSE(refused.is_ok());
  EXPECT_NE(refused.message().find("needs one user function"), std::string::npos) << refused.message();
}

TEST_F(PerfTest, MarkerIsNotSupported) {
  ProbePoint p{"marker:trace_marker", ProbeKind::kMarker, "trace_marker", 0, ""};
  EXPECT_FALSE(tracer.supports(p));
  EXPECT_FALSE(tracer.attach(spec_for(p)).is_ok());
}

}  // namespace
