// Drives the ftrace adapter directly against the running kernel:
// attach -> enable -> fire N -> disable -> drain -> counts().
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/require.h"
#include "tests/common/usdt_site.h"
#include "tracers/common/names.h"
#include "tracers/common/proc.h"
#include "tracers/common/tracefs_leftovers.h"
#include "tracers/ftrace/ftrace_tracer.h"
#include "tracebench/payload_pattern.h"
#include "tracebench/verification.h"
#include "tracebench/workload.h"

#include "tracers/common/tracefs_cxx.h"
#include "tests/common/tracer_fixture.h"

using tracebench::AttachSpec;
using tracebench::EventCounts;
using tracebench::ProbeKind;
using tracebench::ProbePoint;
using tracebench::ftrace::FtraceTracer;
using tracebench::test::fire_getpid;
using tracebench::test::getpid_probe;
using tracebench::test::read_file;
using tracebench::test::spec_for;

extern "C" __attribute__((noinline, used)) void tb_ftrace_test_hot(void) { asm volatile("" ::: "memory"); }

// The user-function probe on it, as a workload declares one.
static ProbePoint hot_probe() {
  return ProbePoint{"user:tb_ftrace_test_hot", ProbeKind::kUserFunction, "tb_ftrace_test_hot",
                    reinterpret_cast<std::uintptr_t>(&tb_ftrace_test_hot), ""};
}

namespace {

const std::string kTracing = "/sys/kernel/tracing";

std::string skip_reason() {
  if (geteuid() != 0) return "needs root";
  if (!tracefs_tracing_dir()) return "tracefs not available";
  return {};
}

#define REQUIRE_TRACEFS()                             \
  do {                                                \
    std::string why = skip_reason();                  \
    if (!why.empty()) TB_SKIP_OR_FAIL("ftrace", why); \
  } while (0)

bool instance_exists(const std::string& name) {
  struct stat st;
  return stat((kTracing + "/instances/" + name).c_str(), &st) == 0;
}

std::vector<std::string> our_leftovers() {
  std::vector<std::string> left;
  std::string me = "tracebench-" + std::to_string(getpid());
  if (char** names = tracefs_instances("^tracebench-")) {
    for (char** n = names; *n; ++n)
      if (std::string(*n) == me || std::string(*n).rfind(me + "-", 0) == 0) left.push_back(*n);
    tracefs_list_free(names);
  }
  std::string dyn = read_file(kTracing + "/dynamic_events");
  std::string tag = "tracebench/tb" + std::to_string(getpid()) + "_";
  if (dyn.find(tag) != std::string::npos) left.push_back("dynamic event " + tag);
  return left;
}

class FtraceTest : public ::testing::Test {
 protected:
  // Calls the hot function `disabled` times, then `enabled` times with the
  // tracer enabled, and reads its buffers back.
  void fire_hot(int disabled, int enabled) {
    void (*volatile fn)(void) = tb_ftrace_test_hot;
    for (int i = 0; i < disabled; ++i) fn();
    ASSERT_TRUE(tracer.enable().is_ok());
    for (int i = 0; i < enabled; ++i) fn();
    ASSERT_TRUE(tracer.disable().is_ok());
    ASSERT_TRUE(tracer.drain().is_ok());
  }
  void TearDown() override {
    tracer.teardown();
    EXPECT_TRUE(our_leftovers().empty()) << "left behind: " << (our_leftovers().empty() ? "" : our_leftovers()[0]);
  }
  FtraceTracer tracer;
};

TEST_F(FtraceTest, AvailableOnThisHost) {
  REQUIRE_TRACEFS();
  auto a = tracer.available();
  EXPECT_TRUE(a.ok) << a.reason;
}

TEST_F(FtraceTest, GetpidCountIsExact) {
  REQUIRE_TRACEFS();
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe())).is_ok());
  EXPECT_TRUE(instance_exists(tracer.instance_name()));
  EXPECT_EQ(tracer.instance_name(), "tracebench-" + std::to_string(getpid()));
  EXPECT_EQ(tracer.event_name(), "sys_enter_getpid");
  // Repetitions with disabled stretches between them: only enabled ones count.
  std::uint64_t fired = 0;
  for (int rep = 0; rep < 3; ++rep) {
    fire_getpid(1000);  // disabled
    ASSERT_TRUE(tracer.enable().is_ok());
    fire_getpid(5000);
    fired += 5000;
    ASSERT_TRUE(tracer.disable().is_ok());
  }
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_TRUE(c.exact);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.recorded, fired);
  EXPECT_EQ(tracer.details()["other_records"], 0);
}

TEST_F(FtraceTest, DisabledEventRecordsNothing) {
  REQUIRE_TRACEFS();
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe())).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  ASSERT_TRUE(tracer.disable().is_ok());
  // Defined but disabled: the enable file says 0, the event still exists.
  std::string en =
      read_file(kTracing + "/instances/" + tracer.instance_name() + "/events/syscalls/sys_enter_getpid/enable");
  EXPECT_EQ(en.substr(0, 1), "0");
  fire_getpid(3000);
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded, 0u);
}

TEST_F(FtraceTest, ThreadsBeforeAndAfterAttachAreCounted) {
  REQUIRE_TRACEFS();
  std::atomic<int> go{0};
  std::atomic<int> done{0};
  std::thread early([&] {
    while (go.load() == 0) std::this_thread::yield();
    fire_getpid(2000);
    done.fetch_add(1);
  });
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe())).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  std::thread late([&] { fire_getpid(3000); });
  go.store(1);
  fire_getpid(1000);
  early.join();
  late.join();
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded + c.lost, 6000u);
  EXPECT_EQ(c.lost, 0u);
}

// A 16 KiB buffer read only at the end cannot hold 50000 events: the kernel
// overwrites (overrun) or drops (discard) and the count says how many.
void expect_small_buffer_accounts_for_every_event(FtraceTracer& tracer, const std::string& mode) {
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"buffer_kb", "16"}, {"mode", mode}, {"read", "end"}})).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  fire_getpid(50000);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_GT(c.lost, 0u);
  EXPECT_GT(c.recorded, 0u);
  EXPECT_EQ(c.recorded + c.lost, 50000u);
}

TEST_F(FtraceTest, SmallBufferOverwriteCountsLost) {
  REQUIRE_TRACEFS();
  expect_small_buffer_accounts_for_every_event(tracer, "overwrite");
}

TEST_F(FtraceTest, SmallBufferDiscardCountsDropped) {
  REQUIRE_TRACEFS();
  expect_small_buffer_accounts_for_every_event(tracer, "discard");
}

TEST_F(FtraceTest, ClockAndBufferOptionsAreApplied) {
  REQUIRE_TRACEFS();
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"clock", "global"}, {"buffer_kb", "256"}})).is_ok());
  std::string dir = kTracing + "/instances/" + tracer.instance_name();
  EXPECT_NE(read_file(dir + "/trace_clock").find("[global]"), std::string::npos);
  // The kernel rounds up to whole sub-buffers.
  long kb = std::stol(read_file(dir + "/buffer_size_kb"));
  EXPECT_GE(kb, 256);
  EXPECT_LT(kb, 256 + 16);
  EXPECT_EQ(read_file(dir + "/options/overwrite").substr(0, 1), "1");
}

TEST_F(FtraceTest, BadOptionsChangeNothing) {
  REQUIRE_TRACEFS();
  for (auto opts : std::vector<std::map<std::string, std::string>>{{{"bogus", "1"}},
                                                                   {{"buffer_kb", "-3"}},
                                                                   {{"mode", "ring"}},
                                                                   {{"clock", "sundial"}},
                                                                   {{"event", "nosuch:event"}}}) {
    tracebench::Status st = tracer.attach(spec_for(getpid_probe(), opts));
    EXPECT_FALSE(st.is_ok()) << opts.begin()->first;
    EXPECT_FALSE(st.message().empty());
    EXPECT_TRUE(our_leftovers().empty());
    tracer.teardown();
  }
}

TEST_F(FtraceTest, RawSyscallsFilteredById) {
  REQUIRE_TRACEFS();
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"event", "raw_syscalls:sys_enter"}})).is_ok());
  EXPECT_EQ(tracer.event_system(), "raw_syscalls");
  ASSERT_TRUE(tracer.enable().is_ok());
  fire_getpid(4000);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_TRUE(c.exact);
  EXPECT_EQ(c.recorded + c.lost, 4000u);
}

TEST_F(FtraceTest, RawSyscallsUnfilteredIsInexact) {
  REQUIRE_TRACEFS();
  ASSERT_TRUE(
      tracer.attach(spec_for(getpid_probe(), {{"event", "raw_syscalls:sys_enter"}, {"id_filter", "off"}})).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  fire_getpid(4000);
  ASSERT_TRUE(tracer.disable().is_ok());  // the write to "enable" is a syscall too
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_FALSE(c.exact);
  EXPECT_GE(c.recorded + c.lost, 4000u);
}

TEST_F(FtraceTest, ReadSyscall) {
  REQUIRE_TRACEFS();
  int fd = open("/dev/zero", O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(tracer.attach(spec_for(ProbePoint{"syscall:read", ProbeKind::kSyscall, "read", 0, ""})).is_ok());
  ASSERT_TRUE(tracer.enable().is_ok());
  char b[8];
  for (int i = 0; i < 2500; ++i) ASSERT_EQ(read(fd, b, sizeof b), 8);
  ASSERT_TRUE(tracer.disable().is_ok());
  close(fd);
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded, 2500u);
}

TEST_F(FtraceTest, WriteSyscallNotPollutedByOwnToggles) {
  // enable()/disable() must not themselves be write(2) calls.
  REQUIRE_TRACEFS();
  int fd = open("/dev/null", O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(tracer.attach(spec_for(ProbePoint{"syscall:write", ProbeKind::kSyscall, "write", 0, ""})).is_ok());
  std::uint64_t fired = 0;
  for (int rep = 0; rep < 4; ++rep) {
    ASSERT_TRUE(tracer.enable().is_ok());
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(write(fd, "x", 1), 1);
    fired += 1000;
    ASSERT_TRUE(tracer.disable().is_ok());
  }
  close(fd);
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded, fired);
}

class FtraceMarkerTest : public FtraceTest, public ::testing::WithParamInterface<std::size_t> {};

// Writes n marker events of `payload` bytes (the suite's pattern, with
// `corrupt` bytes flipped at the middle) and returns the judge's verdict.
tracebench::Verification run_marker(FtraceTracer& tracer, std::size_t payload, std::uint64_t n, bool corrupt,
                                    EventCounts* out) {
  AttachSpec s = spec_for(ProbePoint{"marker:trace_marker", ProbeKind::kMarker, "trace_marker", 0, ""});
  s.payload_bytes = payload;
  s.options["buffer_kb"] = "4096";  // 500 events of up to a page each fit
  tracebench::Status st = tracer.attach(s);
  EXPECT_TRUE(st.is_ok()) << st.message();
  std::string file = tracer.marker_file();
  EXPECT_NE(file.find("/instances/" + tracer.instance_name() + "/trace_marker"), std::string::npos);
  int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  std::vector<char> buf(payload + 1);
  tracebench::fill_payload(buf.data(), payload);
  if (corrupt && payload) buf[payload / 2] = buf[payload / 2] == 'x' ? 'y' : 'x';
  // Disabled: the kernel refuses marker writes, nothing is recorded.
  EXPECT_LT(write(fd, buf.data(), payload), 0);
  EXPECT_TRUE(tracer.enable().is_ok());
  for (std::uint64_t i = 0; i < n; ++i) (void)!write(fd, buf.data(), payload);
  EXPECT_TRUE(tracer.disable().is_ok());
  close(fd);
  EXPECT_TRUE(tracer.drain().is_ok());
  *out = tracer.counts();
  return tracebench::judge_events(*out, n, payload, /*workload_has_payload=*/true);
}

TEST_P(FtraceMarkerTest, PayloadIsVerified) {
  REQUIRE_TRACEFS();
  const std::size_t payload = GetParam();
  const std::size_t limit = tracebench::ftrace::max_payload_bytes();
  ASSERT_GT(limit, 0u);
  const std::uint64_t n = 500;
  EventCounts c;
  tracebench::Verification v = run_marker(tracer, payload, n, false, &c);
  EXPECT_EQ(c.recorded + c.lost, n);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.payload_mismatched_events, 0u);
  if (payload == 0) {
    EXPECT_EQ(c.payload_source, tracebench::PayloadSource::kNone);
    EXPECT_TRUE(v.passed()) << v.reason;
  } else if (payload <= limit) {
    EXPECT_EQ(c.payload_source, tracebench::PayloadSource::kWorkload);
    EXPECT_EQ(c.payload_checked_events, n);
    EXPECT_EQ(c.payload_verified, n * payload);
    EXPECT_EQ(c.payload_truncated_events, 0u);
    EXPECT_TRUE(v.passed()) << v.reason;
  } else {
    // The kernel caps one marker write (4054 bytes on 6.18 x86-64): every
    // event is truncated, nothing is verified, and the run fails.
    EXPECT_EQ(c.payload_truncated_events, c.recorded);
    EXPECT_EQ(c.payload_kept_bytes, limit);
    EXPECT_EQ(c.payload_verified, 0u);
    EXPECT_TRUE(v.failed());
    EXPECT_NE(v.reason.find("truncated"), std::string::npos) << v.reason;
    EXPECT_NE(v.reason.find("kept " + std::to_string(limit) + " of the " + std::to_string(payload)), std::string::npos)
        << v.reason;
  }
}

INSTANTIATE_TEST_SUITE_P(Sweep, FtraceMarkerTest, ::testing::Values(0, 8, 64, 256, 1024, 4096));

// Without buffer_kb, plan_block() sizes the instance to hold one block: 4000
// 1 KiB marker writes (~5.5 MiB of records with the sub-buffers' slack) in
// the kernel's default of 1410 KiB per CPU would overwrite most of
// themselves.  With buffer_kb given, the user's size holds.
TEST_F(FtraceTest, PlanBlockSizesTheBufferForOneBlock) {
  REQUIRE_TRACEFS();
  const std::uint64_t n = 4000;
  AttachSpec s = spec_for(ProbePoint{"marker:trace_marker", ProbeKind::kMarker, "trace_marker", 0, ""});
  s.payload_bytes = 1024;
  ASSERT_TRUE(tracer.attach(s).is_ok());
  ASSERT_TRUE(tracer.plan_block(n).is_ok());
  EXPECT_GE(std::stoull(tracer.details()["config"]["buffer_kb"].get<std::string>()), 5000u) << tracer.details().dump();
  EXPECT_NE(tracer.details()["config"]["buffer_kb_reason"].get<std::string>().find("4000 events per block"),
            std::string::npos);
  int fd = open(tracer.marker_file().c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<char> buf(s.payload_bytes);
  tracebench::fill_payload(buf.data(), buf.size());
  ASSERT_TRUE(tracer.enable().is_ok());
  for (std::uint64_t i = 0; i < n; ++i) (void)!write(fd, buf.data(), buf.size());
  ASSERT_TRUE(tracer.disable().is_ok());
  close(fd);
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.recorded, n);
  tracer.teardown();

  s.options["buffer_kb"] = "256";
  ASSERT_TRUE(tracer.attach(s).is_ok());
  const auto given = tracer.details()["config"]["buffer_kb"];  // 256 rounded up to whole sub-buffers
  ASSERT_TRUE(tracer.plan_block(n).is_ok());
  EXPECT_EQ(tracer.details()["config"]["buffer_kb"], given);
  EXPECT_LT(std::stoull(given.get<std::string>()), 300u);
}

TEST_F(FtraceTest, MaxPayloadBytesIsWhatOneMarkerWriteKeeps) {
  REQUIRE_TRACEFS();
  const std::size_t limit = tracebench::ftrace::max_payload_bytes();
  ASSERT_GT(limit, 0u);
  EXPECT_LT(limit, 4096u) << "the 4 KiB sweep point is above the marker's limit on this kernel";
  EventCounts c;
  // Exactly the limit passes; one byte more is truncated on every event.
  EXPECT_TRUE(run_marker(tracer, limit, 50, false, &c).passed());
  tracer.teardown();
  tracebench::Verification v = run_marker(tracer, limit + 1, 50, false, &c);
  EXPECT_TRUE(v.failed());
  EXPECT_EQ(c.payload_truncated_events, 50u);
  EXPECT_EQ(c.payload_kept_bytes, limit);
}

TEST_F(FtraceTest, CorruptedMarkerPayloadFails) {
  REQUIRE_TRACEFS();
  EventCounts c;
  tracebench::Verification v = run_marker(tracer, 256, 100, /*corrupt=*/true, &c);
  EXPECT_EQ(c.recorded, 100u);
  EXPECT_EQ(c.payload_mismatched_events, 100u);
  EXPECT_EQ(c.payload_verified, 0u);
  EXPECT_TRUE(v.failed());
  EXPECT_NE(v.reason.find("100 of 100 recorded payloads differ"), std::string::npos) << v.reason;
}

TEST_F(FtraceTest, UprobeOnUserFunction) {
  REQUIRE_TRACEFS();
  ProbePoint p = hot_probe();
  tracebench::Status st = tracer.attach(spec_for(p));
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(tracer.event_system(), "tracebench");
  std::string dyn = read_file(kTracing + "/dynamic_events");
  EXPECT_NE(dyn.find("tracebench/" + tracer.event_name()), std::string::npos) << dyn;
  fire_hot(100, 3000);
  EXPECT_EQ(tracer.counts().recorded, 3000u);
  tracer.teardown();
  EXPECT_EQ(read_file(kTracing + "/dynamic_events").find("tracebench/tb" + std::to_string(getpid()) + "_"),
            std::string::npos);
}

// at=return: a return probe (`r:` in uprobe_events) on the same
// function, one event per return, taken away at teardown; refused on a probe
// that is not a user function.
TEST_F(FtraceTest, ReturnProbeOnUserFunction) {
  REQUIRE_TRACEFS();
  ProbePoint p = hot_probe();
  tracebench::Status st = tracer.attach(spec_for(p, {{"at", "return"}}));
  ASSERT_TRUE(st.is_ok()) << st.message();
  const std::string ours = "tracebench/" + tracer.event_name();
  std::string line;
  for (std::istringstream in(read_file(kTracing + "/uprobe_events")); std::getline(in, line);)
    if (line.find(ours) != std::string::npos) break;
  EXPECT_EQ(line.rfind("r:" + ours, 0), 0u) << "not a return probe: " << line;
  EXPECT_NE(tracer.details().dump().find("\"uretprobe\""), std::string::npos) << tracer.details().dump();
  fire_hot(100, 3000);
  EXPECT_EQ(tracer.counts().recorded, 3000u);
  tracer.teardown();
  EXPECT_EQ(read_file(kTracing + "/uprobe_events").find(ours), std::string::npos);

  st = tracer.validate(spec_for(getpid_probe(), {{"at", "return"}}));
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("at=return applies to user-function probes"), std::string::npos) << st.message();
}

// A many-probe workload (many_sites_16, as the harness runs it): an uprobe
// event on each of its 16 functions, every call of any counted once while
// enabled and none while disabled, the same at their returns, `sites` in the
// details, every event taken away at teardown; ecbs refused (one site only).
class FtraceManySitesTest : public FtraceTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(FtraceManySitesTest, EveryCallOfEverySiteCountsOnce) {
  REQUIRE_TRACEFS();
  const tracebench::Workload* w = tracebench::find_workload("many_sites_16");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->probe.more_sites.size(), 15u);
  std::unique_ptr<tracebench::WorkloadState> st;
  ASSERT_TRUE(w->setup(tracebench::WorkloadParams{}, &st));
  const tracebench::Status attached = tracer.attach(spec_for(w->probe, {{"at", GetParam()}}));
  ASSERT_TRUE(attached.is_ok()) << attached.message();
  const std::string tag = "tracebench/tb" + std::to_string(getpid()) + "_";
  const std::string dyn = read_file(kTracing + "/dynamic_events");
  std::size_t ours = 0;
  for (std::size_t at = dyn.find(tag); at != std::string::npos; at = dyn.find(tag, at + 1)) ++ours;
  EXPECT_EQ(ours, 16u) << dyn;
  constexpr std::uint64_t kCalls = 16 * 125;
  std::string why;
  ASSERT_TRUE(tracebench::test::fire_around_enabled(tracer, *st, kCalls, &why)) << why;
  const EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, kCalls);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
  EXPECT_TRUE(tracebench::judge_events(c, kCalls, 0, false).passed());
  EXPECT_EQ(tracer.details()["sites"].get<int>(), 16);
  tracer.teardown();
  EXPECT_EQ(read_file(kTracing + "/dynamic_events").find(tag), std::string::npos) << "events left behind";

  const tracebench::Status refused = tracer.validate(spec_for(w->probe, {{"ecbs", "2"}}));
  EXPECT_FALSE(refused.is_ok());
  EXPECT_NE(refused.message().find("applies to one site"), std::string::npos) << refused.message();
}

INSTANTIATE_TEST_SUITE_P(At, FtraceManySitesTest, ::testing::Values("entry", "return"));

// A usdt probe is a uprobe event on the note's address whose reference
// counter is the note's semaphore: raised while the event is enabled (the
// guarded site fires), 0 otherwise; a note the binary lacks is refused.
TEST_F(FtraceTest, UsdtSiteWithItsSemaphore) {
  REQUIRE_TRACEFS();
  ProbePoint p{"usdt:tb_test_usdt:fired", ProbeKind::kUsdt, "tb_test_usdt:fired", 0, ""};
  const TbUsdtPair pair{0, 0};
  int fired = 0;
  ASSERT_TRUE(tracer.supports(p));
  tracebench::Status st = tracer.attach(spec_for(p));
  ASSERT_TRUE(st.is_ok()) << st.message();
  const std::string dyn = read_file(kTracing + "/dynamic_events");
  EXPECT_NE(dyn.find("tracebench/" + tracer.event_name()), std::string::npos) << dyn;
  EXPECT_NE(dyn.find(")"), std::string::npos) << "no reference counter on the uprobe: " << dyn;
  EXPECT_EQ(tb_test_usdt_fired_semaphore, 0) << "raised before the event is enabled";
  for (long i = 0; i < 100; ++i) fired += tb_test_usdt_target(i, &pair);  // not enabled: the guard skips the site
  EXPECT_EQ(fired, 0);
  ASSERT_TRUE(tracer.enable().is_ok());
  EXPECT_GE(tb_test_usdt_fired_semaphore, 1);
  for (long i = 0; i < 3000; ++i) fired += tb_test_usdt_target(i, &pair);
  ASSERT_TRUE(tracer.disable().is_ok());
  EXPECT_EQ(fired, 3000);
  EXPECT_EQ(tb_test_usdt_fired_semaphore, 0) << "still raised after disable";
  ASSERT_TRUE(tracer.drain().is_ok());
  const EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, 3000u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_NE(tracer.details().dump().find("\"usdt\""), std::string::npos) << tracer.details().dump();
  tracer.teardown();

  ProbePoint missing{"usdt:tb_test_usdt:nosuch", ProbeKind::kUsdt, "tb_test_usdt:nosuch", 0, ""};
  st = tracer.attach(spec_for(missing));
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("has no SDT note tb_test_usdt:nosuch"), std::string::npos) << st.message();
}

// Where the usdt uprobe goes (the note's file offset and its semaphore's,
// read with tracers/common/elf) is where perf probe puts it for the same note:
// perf reads SDT notes on its own (`perf probe -x FILE %sdt_PROVIDER:NAME`).
TEST_F(FtraceTest, UsdtSiteIsWherePerfProbePutsIt) {
  REQUIRE_TRACEFS();
  if (system("perf version > /dev/null 2>&1") != 0) FAIL() << "perf (Debian's linux-perf) is not installed";
  std::string file;
  std::uint64_t offset = 0, semaphore = 0;
  tracebench::Status st = tracebench::common::usdt_site(getpid(), "tb_test_usdt:fired", &file, &offset, &semaphore);
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_NE(semaphore, 0u);
  const std::string event = "sdt_tb_test_usdt/fired";
  // perf caches the binary it probes in a build-id directory: a scratch one,
  // removed after, not the user's ~/.debug.
  char scratch[] = "/tmp/tracebench-perfprobe.XXXXXX";
  ASSERT_NE(mkdtemp(scratch), nullptr);
  const std::string perf = std::string("perf --buildid-dir ") + scratch + " probe -q ";
  const std::string remove = perf + "-d 'sdt_tb_test_usdt:fired' > /dev/null 2>&1";
  system(remove.c_str());  // a run killed here before
  const int made = system((perf + "-x '" + file + "' -a '%sdt_tb_test_usdt:fired' > /dev/null 2>&1").c_str());
  const std::string events = read_file(kTracing + "/uprobe_events");
  system(remove.c_str());
  system((std::string("rm -rf ") + scratch).c_str());
  ASSERT_EQ(made, 0) << "perf probe could not add the SDT event";
  const auto at = events.find("p:" + event + " ");
  ASSERT_NE(at, std::string::npos) << events;
  const std::string line = events.substr(at, events.find('\n', at) - at);
  unsigned long long perf_offset = 0, perf_semaphore = 0;
  const auto where = line.find(" " + file + ":");  // p:EVENT FILE:0xOFFSET(0xSEMAPHORE) ARGS...
  ASSERT_NE(where, std::string::npos) << line;
  ASSERT_EQ(std::sscanf(line.c_str() + where + file.size() + 2, "0x%llx(0x%llx)", &perf_offset, &perf_semaphore), 2)
      << line;
  EXPECT_EQ(perf_offset, offset) << line;
  EXPECT_EQ(perf_semaphore, semaphore) << line;
  EXPECT_EQ(read_file(kTracing + "/uprobe_events").find(event), std::string::npos) << "perf probe's event left behind";
}

TEST_F(FtraceTest, FunctionTracerWorksOrFailsCleanly) {
  REQUIRE_TRACEFS();
  auto avail = tracebench::ftrace::probe_function_tracer();
  ProbePoint p{"kernel:__x64_sys_getpid", ProbeKind::kKernelFunction, "__x64_sys_getpid", 0, ""};
  tracebench::Status st = tracer.attach(spec_for(p));
  if (!avail.ok) {
    EXPECT_FALSE(st.is_ok());
    EXPECT_NE(st.message().find("VM lab"), std::string::npos) << st.message();
    EXPECT_TRUE(our_leftovers().empty());
    // The refusal was checked, the function tracer was not: a skip.
    TB_SKIP_OR_FAIL("ftrace.function", "function tracer refused here: " + avail.reason);
  }
  ASSERT_TRUE(st.is_ok()) << st.message();
  ASSERT_TRUE(tracer.enable().is_ok());
  fire_getpid(2000);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EXPECT_EQ(tracer.counts().recorded + tracer.counts().lost, 2000u);
}

// ---- option ecbs: N handlers = the event enabled in N instances

std::string event_file(const std::string& instance, const std::string& sys, const std::string& ev,
                       const std::string& file) {
  return read_file(kTracing + "/instances/" + instance + "/events/" + sys + "/" + ev + "/" + file);
}

struct Sweep {
  unsigned ecbs;
  bool truth;
};

// Attaches with ecbs/extra_predicate, checks the instances kernel-side while
// disabled, enabled and after teardown, fires `n` through `fire`, and checks
// what each handler recorded.
void expect_handler_sweep(FtraceTracer& tracer, const ProbePoint& p, Sweep sw, const std::function<void()>& fire,
                          std::uint64_t n) {
  SCOPED_TRACE("ecbs=" + std::to_string(sw.ecbs) + " extra_predicate=" + (sw.truth ? "true" : "false"));
  tracebench::Status st =
      tracer.attach(spec_for(p, {{"ecbs", std::to_string(sw.ecbs)}, {"extra_predicate", sw.truth ? "true" : "false"}}));
  ASSERT_TRUE(st.is_ok()) << st.message();
  std::vector<std::string> all{tracer.instance_name()};
  for (const auto& x : tracer.extra_instance_names()) all.push_back(x);
  ASSERT_EQ(all.size(), sw.ecbs);
  const std::string sys = tracer.event_system(), ev = tracer.event_name();
  for (std::size_t i = 0; i < all.size(); ++i) {
    // Named as this process's, so a dead run's are found by `tracebench cleanup`.
    EXPECT_EQ(tracebench::common::name_owner(all[i]), getpid()) << all[i];
    ASSERT_TRUE(instance_exists(all[i])) << all[i];
    EXPECT_EQ(event_file(all[i], sys, ev, "enable").substr(0, 1), "0") << all[i] << " enabled before enable()";
    std::string filter = event_file(all[i], sys, ev, "filter");
    if (i > 0 && !sw.truth)
      EXPECT_NE(filter.find(tracebench::ftrace::kFalseFilter), std::string::npos) << all[i] << ": " << filter;
    else
      EXPECT_NE(filter.find("none"), std::string::npos) << all[i] << ": " << filter;
  }
  fire();  // disabled: nowhere recorded
  ASSERT_TRUE(tracer.enable().is_ok());
  for (const auto& name : all) EXPECT_EQ(event_file(name, sys, ev, "enable").substr(0, 1), "1") << name;
  for (std::uint64_t i = 0; i < 3; ++i) fire();
  ASSERT_TRUE(tracer.disable().is_ok());
  for (const auto& name : all) EXPECT_EQ(event_file(name, sys, ev, "enable").substr(0, 1), "0") << name;
  ASSERT_TRUE(tracer.enable().is_ok());
  fire();
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  const std::uint64_t fired = 4 * n;
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, fired);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
  tracebench::Verification v = tracebench::judge_events(c, fired, 0, false);
  EXPECT_TRUE(v.passed()) << v.reason;
  auto d = tracer.details();
  EXPECT_EQ(d["ecbs"], static_cast<int>(sw.ecbs));
  if (sw.ecbs == 1) {
    EXPECT_FALSE(d.contains("extra_predicate"));
  } else {
    EXPECT_EQ(d["extra_predicate"], sw.truth ? "true" : "false");
    ASSERT_EQ(d["handler_records"].size(), sw.ecbs);
    for (unsigned h = 0; h < sw.ecbs; ++h)
      EXPECT_EQ(d["handler_records"][h], h == 0 || sw.truth ? fired : 0u) << "handler " << h + 1;
  }
  tracer.teardown();
  for (const auto& name : all) EXPECT_FALSE(instance_exists(name)) << name << " left after teardown";
}

TEST_F(FtraceTest, EcbsSweepOnSyscall) {
  REQUIRE_TRACEFS();
  for (unsigned ecbs : {1u, 2u, 4u})
    for (bool truth : {true, false}) {
      expect_handler_sweep(
          tracer, getpid_probe(), {ecbs, truth}, [] { fire_getpid(2000); }, 2000);
      EXPECT_TRUE(our_leftovers().empty());
    }
}

TEST_F(FtraceTest, EcbsSweepOnUserFunction) {
  REQUIRE_TRACEFS();
  void (*volatile fn)(void) = tb_ftrace_test_hot;
  ProbePoint p = hot_probe();
  auto fire = [fn] {
    for (int i = 0; i < 1500; ++i) fn();
  };
  for (bool truth : {true, false}) {
    expect_handler_sweep(tracer, p, {3, truth}, fire, 1500);
    EXPECT_TRUE(our_leftovers().empty());
  }
}

TEST_F(FtraceTest, EcbsOnRawSyscallsKeepsTheIdFilter) {
  REQUIRE_TRACEFS();
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"event", "raw_syscalls:sys_enter"}, {"ecbs", "2"}})).is_ok());
  std::string extra = tracer.extra_instance_names().at(0);
  EXPECT_NE(event_file(extra, "raw_syscalls", "sys_enter", "filter").find("id == "), std::string::npos);
  ASSERT_TRUE(tracer.enable().is_ok());
  fire_getpid(3000);
  ASSERT_TRUE(tracer.disable().is_ok());
  ASSERT_TRUE(tracer.drain().is_ok());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, 3000u);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
  EXPECT_EQ(tracer.details()["handler_records"][1], 3000u);
}

// The check can fail: an extra handler that records other than it should is
// a tracer error, and the judge fails the run.
TEST_F(FtraceTest, EcbsHandlerThatDisagreesIsATracerError) {
  REQUIRE_TRACEFS();
  for (bool truth : {true, false}) {
    SCOPED_TRACE(truth ? "true" : "false");
    ASSERT_TRUE(tracer.attach(spec_for(getpid_probe(), {{"ecbs", "3"}, {"extra_predicate", truth ? "true" : "false"}}))
                    .is_ok());
    // Behind the adapter's back: the last extra instance filters everything
    // out (true), or its always-false filter is removed (false).
    std::string path =
        kTracing + "/instances/" + tracer.extra_instance_names().at(1) + "/events/syscalls/sys_enter_getpid/filter";
    {
      std::ofstream f(path);
      f << (truth ? "common_pid == -1" : "0");
    }
    ASSERT_TRUE(tracer.enable().is_ok());
    fire_getpid(1000);
    ASSERT_TRUE(tracer.disable().is_ok());
    ASSERT_TRUE(tracer.drain().is_ok());
    EventCounts c = tracer.counts();
    EXPECT_EQ(c.recorded, 1000u);
    EXPECT_EQ(c.tracer_errors, 1000u);
    EXPECT_NE(c.tracer_error_detail.find("handler 3 of 3"), std::string::npos) << c.tracer_error_detail;
    EXPECT_TRUE(tracebench::judge_events(c, 1000, 0, false).failed());
    tracer.teardown();
  }
}

TEST_F(FtraceTest, EcbsRefusedWhereItMeansNothing) {
  REQUIRE_TRACEFS();
  const ProbePoint marker{"marker:trace_marker", ProbeKind::kMarker, "trace_marker", 0, ""};
  const ProbePoint function{"kernel:__x64_sys_getpid", ProbeKind::kKernelFunction, "__x64_sys_getpid", 0, ""};
  struct Bad {
    ProbePoint probe;
    std::map<std::string, std::string> options;
    const char* says;
  };
  for (const Bad& b : std::vector<Bad>{
           {getpid_probe(), {{"ecbs", "0"}}, "ecbs"},
           {getpid_probe(), {{"ecbs", "33"}}, "ecbs"},
           {getpid_probe(), {{"extra_predicate", "maybe"}}, "extra_predicate"},
           {marker, {{"ecbs", "2"}}, "one instance"},
           {marker, {{"extra_predicate", "false"}}, "extra_predicate"},
           {function, {{"ecbs", "4"}}, "current_tracer"},
       }) {
    AttachSpec s = spec_for(b.probe, b.options);
    tracebench::Status v = tracer.validate(s);
    ASSERT_FALSE(v.is_ok()) << b.probe.name << " " << b.options.begin()->first;
    EXPECT_NE(v.message().find(b.says), std::string::npos) << v.message();
    EXPECT_FALSE(tracer.attach(s).is_ok());
    EXPECT_TRUE(our_leftovers().empty());
    tracer.teardown();
  }
}

// A failure half way through attach() (here: the extra instance's name is
// taken) removes what was already created.
TEST_F(FtraceTest, EcbsAttachFailingHalfWayLeavesNothing) {
  REQUIRE_TRACEFS();
  // The next attach of this process uses sequence number n; find it from a throw-away attach.
  ASSERT_TRUE(tracer.attach(spec_for(getpid_probe())).is_ok());
  std::string first = tracer.instance_name();
  tracer.teardown();
  std::string me = "tracebench-" + std::to_string(getpid());
  int seq = first == me ? 1 : std::stoi(first.substr(me.size() + 1)) + 1;
  std::string taken = me + "-" + std::to_string(seq) + "-h3";
  ASSERT_EQ(mkdir((kTracing + "/instances/" + taken).c_str(), 0755), 0);
  tracebench::Status st = tracer.attach(spec_for(getpid_probe(), {{"ecbs", "4"}}));
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find(taken), std::string::npos) << st.message();
  EXPECT_FALSE(instance_exists(me + "-" + std::to_string(seq)));
  EXPECT_FALSE(instance_exists(me + "-" + std::to_string(seq) + "-h2"));
  rmdir((kTracing + "/instances/" + taken).c_str());
}

TEST(FtraceCleanup, RemovesOnlyDeadOwners) {
  REQUIRE_TRACEFS();
  // A child attaches (instance + uprobe), reports, and is SIGKILLed.
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FtraceTracer t;
    ProbePoint p = hot_probe();
    char ok = t.attach(spec_for(p)).is_ok() && t.enable().is_ok() ? '1' : '0';
    (void)!write(pipefd[1], &ok, 1);
    pause();
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(pipefd[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  auto child_instances = [child] {
    std::vector<std::string> found;
    std::string pre = "tracebench-" + std::to_string(child);
    if (char** names = tracefs_instances("^tracebench-")) {
      for (char** n = names; *n; ++n)
        if (std::string(*n) == pre || std::string(*n).rfind(pre + "-", 0) == 0) found.push_back(*n);
      tracefs_list_free(names);
    }
    return found;
  };
  EXPECT_EQ(child_instances().size(), 1u);
  // Our own live instance must survive the cleanup.
  FtraceTracer mine;
  ASSERT_TRUE(mine.attach(spec_for(getpid_probe())).is_ok());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  auto removed = tracebench::common::cleanup_tracefs_leftovers();
  EXPECT_TRUE(child_instances().empty());
  EXPECT_EQ(read_file(kTracing + "/dynamic_events").find("tracebench/tb" + std::to_string(child) + "_"),
            std::string::npos);
  EXPECT_GE(removed.size(), 2u);
  EXPECT_TRUE(instance_exists(mine.instance_name()));
  mine.teardown();
  EXPECT_TRUE(our_leftovers().empty());
  close(pipefd[0]);
  close(pipefd[1]);
}

}  // namespace
