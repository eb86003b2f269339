// Drives the eBPF adapter directly: attach -> enable -> fire N -> disable ->
// drain -> counts() == N, for every attach type and action the running kernel
// supports; the attach types it refuses must fail with the kernel's error.
#include <bpf/bpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tracebench/workload.h"
#include "ebpf_sites.h"
#include "tracebench/payload_pattern.h"
#include "tracebench/verification.h"
#include "tests/common/require.h"
#include "tests/common/stolen_time.h"
#include "tests/common/tracer_fixture.h"
#include "tracers/common/proc.h"
#include "tracers/ebpf/ebpf_tracer.h"

namespace tracebench::ebpf {
namespace {

constexpr std::uint64_t kN = 2000;

// Why the BPF tests cannot run here, or "" when they can.
std::string skip_reason() {
  if (geteuid() != 0) return "needs root (CAP_BPF + CAP_PERFMON) to load BPF programs";
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux")) return "kernel has no BTF (/sys/kernel/btf/vmlinux)";
  return "";
}

#define TB_SKIP_UNLESS_BPF()                        \
  do {                                              \
    std::string why = skip_reason();                \
    if (!why.empty()) TB_SKIP_OR_FAIL("ebpf", why); \
  } while (0)

ProbePoint getpid_probe() { return {"syscall:getpid", ProbeKind::kSyscall, "getpid", 0, ""}; }
ProbePoint func_probe() {
  return {"user:tb_ebpf_test_site", ProbeKind::kUserFunction, "tb_ebpf_test_site",
          reinterpret_cast<std::uintptr_t>(&tb_ebpf_test_site), ""};
}
ProbePoint usdt_probe() { return {"usdt:tb_ebpf_test:site", ProbeKind::kUsdt, "tb_ebpf_test:site", 0, ""}; }
ProbePoint usdt_sem_probe() { return {"usdt:tb_ebpf_test:sem_site", ProbeKind::kUsdt, "tb_ebpf_test:sem_site", 0, ""}; }

using test::profile_probe;  // the spin workload's probe: the tracer's timer
using test::spin_cpu;

ProbePoint probe_for(const std::string& attach) {
  if (attach == "uprobe" || attach == "uretprobe" || attach == "uprobe_multi") return func_probe();
  if (attach == "usdt") return usdt_probe();
  return getpid_probe();
}

void fire(const ProbePoint& p, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; i++) {
    switch (p.kind) {
      case ProbeKind::kSyscall:
        if (p.target == "read") {
          char c;
          (void)!::read(-1, &c, 1);
        } else {
          syscall(SYS_getpid);
        }
        break;
      case ProbeKind::kUserFunction: tb_ebpf_test_site(static_cast<int>(i)); break;
      case ProbeKind::kUsdt:
        if (p.target == "tb_ebpf_test:sem_site")
          tb_ebpf_test_sem_site(static_cast<int>(i));
        else
          tb_ebpf_test_site(static_cast<int>(i));
        break;
      default: break;
    }
  }
}

struct RunResult {
  Status status = Status::ok();
  EventCounts counts;
  nlohmann::json details;
  std::vector<std::uint32_t> prog_ids, link_ids;
  std::vector<ConsumerTask> consumer_tasks;  // as named after attach()
};

// The harness's sequence, with `blocks` enable/disable windows of n events.
RunResult run(const AttachSpec& spec, std::uint64_t n, int blocks = 2) {
  RunResult r;
  EbpfTracer t;
  r.status = t.attach(spec);
  if (r.status) r.consumer_tasks = t.consumer_tasks();
  for (int b = 0; r.status && b < blocks; b++) {
    fire(spec.probe, n);  // disabled: must not be seen
    r.status = t.enable();
    if (!r.status) break;
    fire(spec.probe, n);
    r.status = t.disable();
  }
  if (r.status) fire(spec.probe, n);
  if (r.status) r.status = t.drain();
  if (r.status) {
    r.counts = t.counts();
    r.details = t.details();
  }
  r.prog_ids = t.program_ids();
  r.link_ids = t.link_ids();
  t.teardown();
  return r;
}

bool prog_alive(std::uint32_t id) {
  int fd = bpf_prog_get_fd_by_id(id);
  if (fd >= 0) {
    close(fd);
    return true;
  }
  return errno != ENOENT;
}
bool link_alive(std::uint32_t id) {
  int fd = bpf_link_get_fd_by_id(id);
  if (fd >= 0) {
    close(fd);
    return true;
  }
  return errno != ENOENT;
}

// Kernel objects are freed after an RCU grace period; wait up to 5 s.
bool all_gone(const std::vector<std::uint32_t>& progs, const std::vector<std::uint32_t>& links) {
  for (int i = 0; i < 500; i++) {
    bool any = false;
    for (auto id : progs) any |= prog_alive(id);
    for (auto id : links) any |= link_alive(id);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// --- every attach type x every action -------------------------------------

using Combo = std::tuple<std::string, std::string>;  // attach, action

class AttachActionTest : public ::testing::TestWithParam<Combo> {};

TEST_P(AttachActionTest, CountsExactlyWhatFiredWhileEnabled) {
  TB_SKIP_UNLESS_BPF();
  const auto& [attach, action] = GetParam();
  AttachSpec spec;
  spec.probe = probe_for(attach);
  spec.action = action;
  spec.options["attach"] = attach;
  spec.options["stats"] = "on";  // the kernel's own count and time, checked below
  const auto& avail = EbpfTracer::attach_type_availability();
  ASSERT_EQ(avail.count(attach), 1u);
  RunResult r = run(spec, kN);
  if (!avail.at(attach).ok) {
    // Refused by this kernel: the same error, found by trying, every time.
    ASSERT_FALSE(r.status) << attach << " worked although the probe said: " << avail.at(attach).reason;
    EXPECT_FALSE(avail.at(attach).reason.empty());
    EXPECT_NE(r.status.message().find(attach), std::string::npos) << r.status.message();
    EXPECT_TRUE(all_gone(r.prog_ids, r.link_ids));
    // The refusal was checked; the attach type itself was not exercised: a
    // skip (a failure when TRACEBENCH_REQUIRE lists ebpf.<attach>).
    TB_SKIP_OR_FAIL("ebpf." + attach,
                    attach + " refused by this kernel: " + r.status.message() + " (the VM lab runs it)");
  }
  ASSERT_TRUE(r.status) << r.status.message();
  const std::uint64_t fired = 2 * kN;
  if (action == "empty") {
    EXPECT_FALSE(r.counts.exact);
    EXPECT_GE(r.counts.recorded, fired);  // kernel run count, unfiltered program
  } else {
    EXPECT_TRUE(r.counts.exact);
    EXPECT_EQ(r.counts.lost, 0u) << r.details.dump();
    EXPECT_EQ(r.counts.recorded, fired) << r.details.dump();
  }
  if (action == "ringbuf" || action == "perfbuf") {
    EXPECT_EQ(r.details["consumer"]["bytes_verified"].get<std::uint64_t>(), r.counts.recorded * 64) << r.details.dump();
    EXPECT_EQ(r.counts.payload_source, PayloadSource::kTracer);  // getpid hands over no buffer
    EXPECT_EQ(r.counts.payload_checked_events, r.counts.recorded);
    EXPECT_EQ(r.counts.payload_verified, 0u);  // generated bytes are never verified payload
  }
  // Second measurement: the kernel's own run count and time.
  ASSERT_TRUE(r.details.contains("kernel_stats"));
  EXPECT_TRUE(r.details["kernel_stats"]["enabled"].get<bool>()) << r.details.dump();
  EXPECT_GE(r.details["kernel_stats"]["run_cnt"].get<std::uint64_t>(), fired);
  EXPECT_GT(r.details["kernel_stats"]["run_time_ns"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(r.details["program"].get<std::string>().rfind("tb_", 0), 0u);
  EXPECT_EQ(r.details["enables"].get<int>(), 2);
  // Nothing of ours is left after teardown.
  ASSERT_FALSE(r.prog_ids.empty());
  EXPECT_TRUE(all_gone(r.prog_ids, r.link_ids));
}

INSTANTIATE_TEST_SUITE_P(All, AttachActionTest,
                         ::testing::Combine(::testing::Values("tracepoint", "raw_tp", "tp_btf", "uprobe", "uretprobe",
                                                              "uprobe_multi", "usdt", "fentry", "fexit", "kprobe"),
                                            ::testing::Values("empty", "count", "hash", "ringbuf", "perfbuf")),
                         [](const ::testing::TestParamInfo<Combo>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

// --- availability ---------------------------------------------------------

TEST(EbpfAvailability, EveryAttachTypeProbedByTrying) {
  TB_SKIP_UNLESS_BPF();
  EbpfTracer t;
  Availability a = t.available();
  EXPECT_TRUE(a.ok) << a.reason;
  const auto& types = EbpfTracer::attach_type_availability();
  EXPECT_EQ(types.size(), 11u);
  for (const auto& [name, av] : types) {
    std::cout << "  " << name << ": " << (av.ok ? "ok" : "refused: " + av.reason) << "\n";
    if (!av.ok) { EXPECT_FALSE(av.reason.empty()) << name; }
  }
  // The host this suite is developed on: these must work.
  for (const char* must :
       {"tracepoint", "raw_tp", "tp_btf", "uprobe", "uretprobe", "uprobe_multi", "usdt", "perf_event"})
    EXPECT_TRUE(types.at(must).ok) << must << ": " << types.at(must).reason;
  nlohmann::json d = t.details();
  ASSERT_TRUE(d.contains("attach_types"));
  EXPECT_EQ(d["attach_types"].size(), 11u);
}

// The plan's question for one spec (Tracer::available_for) has the answer
// the trying found for its attach type, with its reason: an attach type this
// kernel refuses is left out of a run before anything is attached.
TEST(EbpfAvailability, ASpecIsAvailableWhereItsAttachTypeIs) {
  TB_SKIP_UNLESS_BPF();
  const auto& types = EbpfTracer::attach_type_availability();
  EbpfTracer t;
  for (const char* attach :
       {"tracepoint", "raw_tp", "tp_btf", "uprobe", "uretprobe", "uprobe_multi", "usdt", "fentry", "fexit", "kprobe"}) {
    SCOPED_TRACE(attach);
    AttachSpec spec;
    spec.probe = probe_for(attach);
    spec.action = "count";
    spec.options["attach"] = attach;
    ASSERT_TRUE(t.validate(spec));
    const Availability a = t.available_for(spec);
    EXPECT_EQ(a.ok, types.at(attach).ok) << a.reason;
    if (!a.ok) { EXPECT_NE(a.reason.find(types.at(attach).reason), std::string::npos) << a.reason; }
  }
}

// --- ring buffer wakeup policy x consumer mode ----------------------------

using RbCombo = std::tuple<std::string, std::string>;  // wakeup, consumer
class RingbufModeTest : public ::testing::TestWithParam<RbCombo> {};

TEST_P(RingbufModeTest, RecordedPlusLostEqualsFiredAndPayloadVerified) {
  TB_SKIP_UNLESS_BPF();
  const auto& [wakeup, consumer] = GetParam();
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "ringbuf";
  spec.payload_bytes = 200;  // -> 200-byte records (multiple of 8)
  spec.options = {{"wakeup", wakeup}, {"consumer", consumer}};
  RunResult r = run(spec, kN);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_TRUE(r.counts.exact);
  EXPECT_EQ(r.counts.recorded + r.counts.lost, 2 * kN) << r.details.dump();
  EXPECT_GT(r.counts.recorded, 0u);
  EXPECT_EQ(r.details["consumer"]["bytes_verified"].get<std::uint64_t>(), r.counts.recorded * 200);
  EXPECT_EQ(r.counts.payload_source, PayloadSource::kTracer);  // getpid hands over no buffer
  EXPECT_EQ(r.counts.payload_checked_events, r.counts.recorded);
  EXPECT_EQ(r.counts.payload_verified, 0u);  // generated bytes are never verified payload
  EXPECT_EQ(r.details["options"]["wakeup"], wakeup);
  EXPECT_EQ(r.details["consumer"]["mode"], consumer);
  EXPECT_EQ(r.details["consumer"]["cpu"], 0);
  EXPECT_EQ(r.details["consumer"]["bad_records"], 0);
  EXPECT_FALSE(r.details["consumer"].contains("pin_error")) << r.details.dump();
  // The reader thread is named for the harness's CPU accounting, with the
  // times it woke to records (epoll) or -1 (spinning never sleeps).
  ASSERT_EQ(r.consumer_tasks.size(), 1u);
  EXPECT_EQ(r.consumer_tasks[0].role, "ring buffer reader");
  EXPECT_EQ(r.consumer_tasks[0].pid, getpid());
  EXPECT_NE(r.consumer_tasks[0].tid, static_cast<int>(gettid()));
  if (consumer == "spin") {
    EXPECT_EQ(r.counts.consumer_wakeups, -1);
  } else {
    EXPECT_GE(r.counts.consumer_wakeups, 0);
    EXPECT_LE(r.counts.consumer_wakeups, static_cast<std::int64_t>(r.counts.recorded));
    EXPECT_EQ(r.counts.consumer_wakeups, r.details["consumer"]["polls_with_data"].get<std::int64_t>());
    if (wakeup == "force") { EXPECT_GT(r.counts.consumer_wakeups, 0); }
  }
  // The wakeup policy takes effect: force = an irq_work per record, none
  // with no_wakeup (the count is system-wide, so allow background noise).
  const auto iwi = r.details["irq_work_interrupts_while_enabled"].get<std::int64_t>();
  if (wakeup == "force") { EXPECT_GE(iwi, static_cast<std::int64_t>(kN)) << r.details.dump(); }
  if (wakeup == "no_wakeup") {
    // Other processes' perf/ring buffers also raise irq_work; half the
    // records still separates this from force (one per record).
    EXPECT_LT(iwi, static_cast<std::int64_t>(kN)) << r.details.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(All, RingbufModeTest,
                         ::testing::Combine(::testing::Values("default", "no_wakeup", "force"),
                                            ::testing::Values("epoll", "spin")),
                         [](const ::testing::TestParamInfo<RbCombo>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

TEST(EbpfRingbuf, FullBufferDropsAreCounted) {
  TB_SKIP_UNLESS_BPF();
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "ringbuf";
  // 4 KiB ring, 512-byte records, a consumer that is never woken and polls
  // once a second: most records cannot fit.
  spec.options = {{"wakeup", "no_wakeup"}, {"buffer_kb", "4"}, {"record_bytes", "512"}, {"poll_ms", "1000"}};
  AttachSpec s2 = spec;
  RunResult r = run(spec, kN, 1);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_GT(r.counts.lost, 0u) << r.details.dump();
  EXPECT_GT(r.counts.recorded, 0u);
  EXPECT_EQ(r.counts.recorded + r.counts.lost, kN);
  EXPECT_EQ(r.details["consumer"]["bytes_verified"].get<std::uint64_t>(), r.counts.recorded * 512);
  EXPECT_EQ(r.counts.payload_source, PayloadSource::kTracer);  // getpid hands over no buffer
  EXPECT_EQ(r.counts.payload_checked_events, r.counts.recorded);
  EXPECT_EQ(r.counts.payload_verified, 0u);  // generated bytes are never verified payload
  EXPECT_EQ(r.details["drops"].get<std::uint64_t>(), r.counts.lost);
}

// Records submitted with BPF_RB_NO_WAKEUP wake nobody: the reader must read
// them when its poll times out, or a ring smaller than a run fills and drops
// (it once read only at the final drain).  Bursts of 16 records into a ring
// of 32, 20 ms apart, with a 1 ms timeout: nothing may be lost.
TEST(EbpfRingbuf, NoWakeupReaderReadsOnItsTimer) {
  TB_SKIP_UNLESS_BPF();
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "ringbuf";
  spec.options = {{"wakeup", "no_wakeup"}, {"buffer_kb", "16"}, {"record_bytes", "480"}, {"poll_ms", "1"}};
  EbpfTracer t;
  ASSERT_TRUE(t.attach(spec));
  ASSERT_TRUE(t.enable());
  constexpr int kBursts = 20, kBurst = 16;
  for (int b = 0; b < kBursts; b++) {
    fire(spec.probe, kBurst);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(t.disable());
  ASSERT_TRUE(t.drain());
  EventCounts c = t.counts();
  nlohmann::json d = t.details();
  t.teardown();
  EXPECT_EQ(c.lost, 0u) << d.dump();
  EXPECT_EQ(c.recorded, static_cast<std::uint64_t>(kBursts * kBurst)) << d.dump();
  EXPECT_GE(d["consumer"]["timeout_reads"].get<std::int64_t>(), kBursts / 2) << d.dump();
  // The producer woke nobody: reads on the timer are not wakeups.
  EXPECT_EQ(c.consumer_wakeups, 0) << d.dump();
}

TEST(EbpfPerfbuf, SmallBufferLossesAreCountedOnce) {
  TB_SKIP_UNLESS_BPF();
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "perfbuf";
  spec.options = {{"buffer_kb", "4"}, {"record_bytes", "1024"}, {"poll_ms", "1000"}};
  RunResult r = run(spec, kN, 1);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.counts.recorded + r.counts.lost, kN) << r.details.dump();
  EXPECT_EQ(r.details["consumer"]["bytes_verified"].get<std::uint64_t>(), r.counts.recorded * 1024);
  EXPECT_EQ(r.counts.payload_source, PayloadSource::kTracer);  // getpid hands over no buffer
  EXPECT_EQ(r.counts.payload_checked_events, r.counts.recorded);
  EXPECT_EQ(r.counts.payload_verified, 0u);  // generated bytes are never verified payload
}

// --- threads ---------------------------------------------------------------

void fire_threads(EbpfTracer& t, const ProbePoint& p, int threads, std::uint64_t n) {
  ASSERT_TRUE(t.enable());
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; i++) ts.emplace_back([&] { fire(p, n); });
  for (auto& th : ts) th.join();
  ASSERT_TRUE(t.disable());
  ASSERT_TRUE(t.drain());
}

TEST(EbpfThreads, HashKeyedByTidSeesEveryThread) {
  TB_SKIP_UNLESS_BPF();
  for (const char* map : {"percpu", "shared"}) {
    EbpfTracer t;
    AttachSpec spec;
    spec.probe = getpid_probe();
    spec.action = "hash";
    spec.options = {{"hash_map", map}};
    ASSERT_TRUE(t.attach(spec));
    fire_threads(t, spec.probe, 4, kN);
    EventCounts c = t.counts();
    EXPECT_EQ(c.recorded, 4 * kN) << map;
    EXPECT_EQ(c.lost, 0u);
    EXPECT_EQ(t.details()["hash_keys"].get<std::uint64_t>(), 4u) << map;
  }
}

TEST(EbpfThreads, HashFullIsCountedAsLost) {
  TB_SKIP_UNLESS_BPF();
  EbpfTracer t;
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "hash";
  spec.options = {{"hash_map", "shared"}, {"hash_entries", "2"}};
  ASSERT_TRUE(t.attach(spec));
  fire_threads(t, spec.probe, 4, 100);
  EventCounts c = t.counts();
  // Threads run one after another or overlap; either way only 2 tids fit.
  EXPECT_EQ(c.recorded + c.lost, 400u);
  EXPECT_LE(t.details()["hash_keys"].get<std::uint64_t>(), 2u);
}

TEST(EbpfThreads, UprobeAndUsdtCountEveryThreadOfTheProcess) {
  TB_SKIP_UNLESS_BPF();
  for (const ProbePoint& p : {func_probe(), usdt_probe(), usdt_sem_probe()}) {
    EbpfTracer t;
    AttachSpec spec;
    spec.probe = p;
    ASSERT_TRUE(t.attach(spec)) << p.name;
    fire_threads(t, p, 3, 500);
    EXPECT_EQ(t.counts().recorded, 1500u) << p.name;
  }
}

// --- other probes and options ---------------------------------------------

TEST(EbpfProbes, ReadSyscallOnEveryKernelSideAttachType) {
  TB_SKIP_UNLESS_BPF();
  ProbePoint p{"syscall:read", ProbeKind::kSyscall, "read", 0, ""};
  for (const char* attach : {"tracepoint", "raw_tp", "tp_btf"}) {
    AttachSpec spec;
    spec.probe = p;
    spec.options = {{"attach", attach}};
    RunResult r = run(spec, 500);
    ASSERT_TRUE(r.status) << attach << ": " << r.status.message();
    EXPECT_EQ(r.counts.recorded, 1000u) << attach;
  }
}

TEST(EbpfProbes, SemaphoreGuardedUsdtSiteFiresOnlyWhileAttached) {
  TB_SKIP_UNLESS_BPF();
  AttachSpec spec;
  spec.probe = usdt_sem_probe();
  RunResult r = run(spec, 700);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.counts.recorded, 1400u);
}

TEST(EbpfOptions, BadInputIsAClearErrorAndLoadsNothing) {
  TB_SKIP_UNLESS_BPF();
  struct Case {
    ProbePoint probe;
    std::string action;
    std::map<std::string, std::string> options;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {getpid_probe(), "count", {{"bogus", "1"}}, "unknown option 'bogus'"},
      {getpid_probe(), "record", {}, "unknown action 'record'"},
      {getpid_probe(), "count", {{"attach", "uprobe"}}, "cannot attach to"},
      {func_probe(), "count", {{"attach", "tracepoint"}}, "cannot attach to"},
      {getpid_probe(), "count", {{"attach", "xdp"}}, "attach=xdp: expected tracepoint, raw_tp"},
      {getpid_probe(), "ringbuf", {{"wakeup", "sometimes"}}, "wakeup=sometimes: expected default, no_wakeup or force"},
      {getpid_probe(), "count", {{"wakeup", "force"}}, "ringbuf action only"},
      {getpid_probe(), "ringbuf", {{"consumer", "lazy"}}, "consumer=lazy: expected epoll or spin"},
      {getpid_probe(), "ringbuf", {{"buffer_kb", "3"}}, "power of two"},
      {getpid_probe(), "ringbuf", {{"record_bytes", "12"}}, "multiple of 8"},
      {getpid_probe(), "ringbuf", {{"record_bytes", "8192"}}, "record_bytes=8192: expected 8..4104"},
      {getpid_probe(), "empty", {{"stats", "off"}}, "needs stats=on"},
      {getpid_probe(), "hash", {{"hash_map", "lru"}}, "hash_map=lru: expected percpu or shared"},
      {getpid_probe(), "count", {{"ecbs", "0"}}, "ecbs=0"},
      {getpid_probe(), "count", {{"ecbs", "2"}, {"extra_predicate", "maybe"}}, "extra_predicate=maybe"},
      {getpid_probe(), "hash", {{"ecbs", "2"}}, "applies to the count action"},
      {{"marker", ProbeKind::kMarker, "", 0, ""}, "count", {}, "cannot attach to probe"},
      {{"syscall:nope", ProbeKind::kSyscall, "no_such_syscall", 0, ""},
       "count",
       {},
       "no tracepoint syscalls:sys_enter_no_such_syscall"},
      {{"user:x", ProbeKind::kUserFunction, "tb_no_such_symbol_xyz", 0, ""}, "count", {}, "tb_no_such_symbol_xyz"},
      {{"usdt:x", ProbeKind::kUsdt, "nocolon", 0, ""}, "count", {}, "provider:name"},
      {profile_probe(), "count", {{"ecbs", "2"}}, "cannot apply to a profile probe"},
      {profile_probe(), "count", {{"attach", "tracepoint"}}, "cannot attach to"},
      {profile_probe(), "count", {{"profile_hz", "0"}}, "profile_hz=0"},
      {getpid_probe(), "count", {{"profile_hz", "99"}}, "profile_hz applies to profile probes"},
  };
  for (const auto& c : cases) {
    EbpfTracer t;
    AttachSpec spec;
    spec.probe = c.probe;
    spec.action = c.action;
    spec.options = c.options;
    Status st = t.attach(spec);
    if (st) st = t.enable();  // some targets only fail when attached
    ASSERT_FALSE(st) << c.expect;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << st.message();
    auto ids = t.program_ids();
    t.teardown();
    EXPECT_TRUE(all_gone(ids, {}));
  }
}

// The handler-count sweep (`tracebench model fit`'s per_ecb and
// false_predicate): ecbs=N puts N separate count programs on the one hook,
// each with its own counter and link; with extra_predicate=false the extra
// ones compare a tgid no task has and count nothing.
class HandlerCountTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HandlerCountTest, ExtraProgramsEachCountEveryEventOrNone) {
  TB_SKIP_UNLESS_BPF();
  const std::string attach = GetParam();
  const auto& av = EbpfTracer::attach_type_availability();
  if (auto it = av.find(attach); it == av.end() || !it->second.ok)
    TB_SKIP_OR_FAIL("ebpf." + attach, attach + " unavailable here: " + (it == av.end() ? "?" : it->second.reason));
  for (const char* truth : {"true", "false"}) {
    AttachSpec spec;
    spec.probe = probe_for(attach);
    spec.action = "count";
    spec.options = {{"attach", attach}, {"ecbs", "3"}, {"extra_predicate", truth}};
    RunResult r = run(spec, kN);
    ASSERT_TRUE(r.status) << attach << ": " << r.status.message();
    EXPECT_EQ(r.counts.recorded, 2 * kN) << attach << " " << truth;
    EXPECT_EQ(r.counts.tracer_errors, 0u) << r.counts.tracer_error_detail;
    EXPECT_EQ(r.details["ecbs"], 3);
    EXPECT_EQ(r.details["extra_predicate"], truth);
    const std::uint64_t extra = std::string(truth) == "true" ? 2 * kN : 0;
    EXPECT_EQ(r.details["handler_counts"], nlohmann::json({2 * kN, extra, extra})) << attach << " " << truth;
    EXPECT_EQ(r.prog_ids.size(), 3u);  // three programs loaded
    if (attach != "usdt") {
      EXPECT_EQ(r.link_ids.size(), 2u * 3u);  // three links per enable, two enables
    }
    EXPECT_TRUE(all_gone(r.prog_ids, r.link_ids)) << attach;
  }
  // One program is the default, and says so.
  AttachSpec one;
  one.probe = probe_for(attach);
  one.options = {{"attach", attach}};
  RunResult r = run(one, 10, 1);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.details["ecbs"], 1);
  EXPECT_FALSE(r.details.contains("extra_predicate"));
}

INSTANTIATE_TEST_SUITE_P(Ebpf, HandlerCountTest, ::testing::Values("tracepoint", "raw_tp", "tp_btf", "uprobe", "usdt"));

TEST(EbpfStats, OffByDefaultAndExplained) {
  TB_SKIP_UNLESS_BPF();
  AttachSpec spec;
  spec.probe = getpid_probe();
  RunResult r = run(spec, 100);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.counts.recorded, 200u);
  EXPECT_FALSE(r.details["kernel_stats"]["enabled"].get<bool>());
  EXPECT_NE(r.details["kernel_stats"]["reason"].get<std::string>().find("stats=on"), std::string::npos);
  EXPECT_FALSE(r.details.contains("attach_types"));  // only for `env` (not attached)
}

TEST(EbpfLifecycle, EnableAgainAfterDrainKeepsConsuming) {
  TB_SKIP_UNLESS_BPF();
  EbpfTracer t;
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "ringbuf";
  ASSERT_TRUE(t.attach(spec));
  for (int round = 0; round < 2; round++) {
    ASSERT_TRUE(t.enable());
    fire(spec.probe, 300);
    ASSERT_TRUE(t.disable());
    ASSERT_TRUE(t.drain());
  }
  EventCounts c = t.counts();
  EXPECT_EQ(c.recorded + c.lost, 600u);
  EXPECT_EQ(c.lost, 0u);
}

TEST(EbpfLifecycle, TeardownIsSafeAnytimeAndTwice) {
  TB_SKIP_UNLESS_BPF();
  EbpfTracer t;
  t.teardown();
  EXPECT_FALSE(t.enable());
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "ringbuf";
  ASSERT_TRUE(t.attach(spec));
  ASSERT_TRUE(t.enable());
  fire(spec.probe, 10);
  auto progs = t.program_ids();
  auto links = t.link_ids();
  t.teardown();  // while enabled, consumer running
  t.teardown();
  EXPECT_TRUE(all_gone(progs, links));
  EXPECT_EQ(t.counts().recorded, 0u);
}

// --- profile probes -------------------------------------------------------

std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// A profile probe: a cpu-clock event on this thread runs the program every
// 1e9/profile_hz ns of its CPU time while enabled, never while disabled;
// what the program counted matches what the timer's clock made, sleeps
// included (each switch back in may move a firing), and the judge holds it
// so.  The timer's clock runs on through time the host steals from the
// thread, the thread's own clock does not: what /proc/stat saw stolen adds
// firings (a CI run on a busy host counted far more than the thread's CPU
// time makes: results/ci/).  Teardown closes the perf event with the link.
TEST(EbpfProfile, TimerFiringsAreCountedWhileEnabledOnly) {
  TB_SKIP_UNLESS_BPF();
  for (const char* action : {"count", "ringbuf"}) {
    SCOPED_TRACE(action);
    const std::size_t fds = open_fds();
    EbpfTracer t;
    AttachSpec spec;
    spec.probe = profile_probe();
    spec.action = action;
    spec.options = {{"profile_hz", "5000"}};
    ASSERT_TRUE(t.attach(spec));
    const double steal0 = test::steal_ns();
    ASSERT_TRUE(t.enable());
    spin_cpu(0.02);  // ~100 periods of 200 µs
    ASSERT_TRUE(t.disable());
    spin_cpu(0.02);  // disabled: no firing
    ASSERT_TRUE(t.enable());
    for (int i = 0; i < 5; ++i) {
      spin_cpu(0.004);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(t.disable());
    ASSERT_TRUE(t.drain());
    EventCounts c = t.counts();
    ASSERT_TRUE(c.timer_fired.has_value());
    EXPECT_GE(*c.timer_fired, 180u);
    const double stolen = test::steal_ns() - steal0;
    EXPECT_LE(*c.timer_fired, 260u + test::steal_allowance_ns(stolen) / 200e3)
        << "40 ms of CPU time at 5 kHz, the other 20 ms disabled; stolen " << stolen / 1e6 << " ms";
    EXPECT_GE(c.timer_windows, 2u + 5u) << "two enables and a switch back in after each sleep";
    Verification v = judge_events(c, 0, 0, false, true);
    EXPECT_TRUE(v.passed()) << v.reason;
    EXPECT_EQ(t.details()["profile_period_ns"].get<std::uint64_t>(), 200000u);
    auto progs = t.program_ids();
    auto links = t.link_ids();
    t.teardown();
    EXPECT_TRUE(all_gone(progs, links));
    EXPECT_EQ(open_fds(), fds) << "the perf event is closed with its link";
  }
  // Another probe kind reports no timer.
  EbpfTracer t;
  AttachSpec spec;
  spec.probe = getpid_probe();
  ASSERT_TRUE(t.attach(spec));
  ASSERT_TRUE(t.enable());
  fire(spec.probe, 10);
  ASSERT_TRUE(t.disable());
  EXPECT_FALSE(t.counts().timer_fired.has_value());
  t.teardown();
}

// A kernel whose sample rate was lowered (by hand, or by the kernel after
// slow perf interrupts) would throttle a faster timer: refused, naming the
// sysctl; unreadable, it is not checked.
TEST(EbpfProfile, RateAboveTheKernelsSampleRateIsRefused) {
  EXPECT_TRUE(common::check_profile_rate("ebpf", 10000, "100000\n"));
  EXPECT_TRUE(common::check_profile_rate("ebpf", 10000, "10000\n"));
  EXPECT_TRUE(common::check_profile_rate("ebpf", 10000, ""));
  Status st = common::check_profile_rate("ebpf", 10000, "5000\n");
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("perf_event_max_sample_rate (5000)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("at most 5000"), std::string::npos) << st.message();
}

// A process killed by SIGTERM/SIGINT while enabled leaves nothing behind.
void kill_while_enabled(int sig) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    EbpfTracer t;
    AttachSpec spec;
    spec.probe = getpid_probe();
    spec.action = "ringbuf";
    if (!t.attach(spec) || !t.enable()) _exit(2);
    std::uint32_t ids[2] = {t.program_ids().at(0), t.link_ids().empty() ? 0u : t.link_ids()[0]};
    if (write(fds[1], ids, sizeof ids) != sizeof ids) _exit(3);
    for (;;) syscall(SYS_getpid);
  }
  close(fds[1]);
  std::uint32_t ids[2] = {0, 0};
  ASSERT_EQ(read(fds[0], ids, sizeof ids), static_cast<ssize_t>(sizeof ids));
  close(fds[0]);
  EXPECT_TRUE(prog_alive(ids[0]));
  ASSERT_NE(ids[1], 0u);
  EXPECT_TRUE(link_alive(ids[1]));
  kill(child, sig);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(all_gone({ids[0]}, {ids[1]}));
}

TEST(EbpfLifecycle, SigtermWhileEnabledLeavesNothing) {
  TB_SKIP_UNLESS_BPF();
  kill_while_enabled(SIGTERM);
}

TEST(EbpfLifecycle, SigintWhileEnabledLeavesNothing) {
  TB_SKIP_UNLESS_BPF();
  kill_while_enabled(SIGINT);
}

TEST(EbpfCleanup, NoPinsUnderSysFsBpf) {
  std::error_code ec;
  if (std::filesystem::is_directory("/sys/fs/bpf", ec)) {
    for (const auto& e : std::filesystem::directory_iterator("/sys/fs/bpf", ec))
      EXPECT_NE(e.path().filename().string().rfind("tracebench", 0), 0u) << e.path();
  }
  // The registered cleanup runs and removes nothing (we never pin).
  bool found = false;
  for (auto& [name, fn] : cleanup_registry()) {
    if (name == "ebpf") {
      found = true;
      EXPECT_TRUE(fn(true).empty());
    }
  }
  EXPECT_TRUE(found);
}

TEST(EbpfRegistry, RegisteredAsEbpf) {
  auto t = make_tracer("ebpf");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->name(), "ebpf");
  EXPECT_TRUE(t->supports(getpid_probe()));
  EXPECT_TRUE(t->supports(func_probe()));
  EXPECT_TRUE(t->supports(usdt_probe()));
  EXPECT_FALSE(t->supports({"marker", ProbeKind::kMarker, "", 0, ""}));
  auto v = t->versions();
  EXPECT_FALSE(v["libbpf"].empty());
}

// --- ringbuf/perfbuf records copy the workload's bytes ---------------------

// The write syscall's buffer (arguments 1 and 2) at the syscall tracepoints,
// or the payload site's (also arguments 1 and 2) at a uprobe.
ProbePoint payload_probe(const std::string& attach) {
  if (attach == "uprobe")
    return {"user:tb_ebpf_test_payload_site",
            ProbeKind::kUserFunction,
            "tb_ebpf_test_payload_site",
            reinterpret_cast<std::uintptr_t>(&tb_ebpf_test_payload_site),
            "",
            1,
            2};
  return {"syscall:write", ProbeKind::kSyscall, "write", 0, "", 1, 2};
}

struct PayloadRun {
  Status status = Status::ok();
  EventCounts counts;
  nlohmann::json details;
  Verification verdict;
};

// n events handing over `buf` (`len` bytes of it) while the tracer expects
// `payload` bytes: the test hook is what the test puts in `buf`.
PayloadRun run_payload(const std::string& attach, const std::string& action, std::size_t payload,
                       const std::vector<char>& buf, std::size_t len, std::uint64_t n = kN) {
  PayloadRun r;
  AttachSpec spec;
  spec.probe = payload_probe(attach);
  spec.action = action;
  spec.payload_bytes = payload;
  spec.options = {{"attach", attach}};
  int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  EbpfTracer t;
  r.status = t.attach(spec);
  if (r.status) r.status = t.enable();
  for (std::uint64_t i = 0; r.status && i < n; i++) {
    if (attach == "uprobe")
      tb_ebpf_test_payload_site(i, buf.data(), len);
    else if (::write(fd, buf.data(), len) < 0)
      r.status = Status::error("write /dev/null failed");
  }
  if (r.status) r.status = t.disable();
  if (r.status) r.status = t.drain();
  if (r.status) {
    r.counts = t.counts();
    r.details = t.details();
    r.verdict = judge_events(r.counts, n, payload, /*workload_has_payload=*/true);
  }
  t.teardown();
  ::close(fd);
  return r;
}

using PayloadCombo = std::tuple<std::string, std::string>;  // attach, action
class WorkloadPayloadTest : public ::testing::TestWithParam<PayloadCombo> {};

TEST_P(WorkloadPayloadTest, RecordsHoldTheWorkloadsBytes) {
  TB_SKIP_UNLESS_BPF();
  const auto& [attach, action] = GetParam();
  const std::size_t payload = 200;
  std::vector<char> buf = payload_pattern(payload);
  PayloadRun r = run_payload(attach, action, payload, buf, payload);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.counts.recorded, kN) << r.details.dump();
  EXPECT_EQ(r.counts.payload_source, PayloadSource::kWorkload) << r.details.dump();
  EXPECT_EQ(r.counts.payload_checked_events, kN);
  EXPECT_EQ(r.counts.payload_verified, kN * payload);
  EXPECT_EQ(r.counts.tracer_errors, 0u) << r.counts.tracer_error_detail;
  EXPECT_TRUE(r.verdict.passed()) << r.verdict.reason;
  EXPECT_EQ(r.details["options"]["record_bytes"], 208);  // 8-byte header + 200
}

TEST_P(WorkloadPayloadTest, ChangedWorkloadBytesFailTheCheck) {
  TB_SKIP_UNLESS_BPF();
  const auto& [attach, action] = GetParam();
  const std::size_t payload = 200;
  std::vector<char> buf = payload_pattern(payload);
  buf[137] ^= 0x20;  // the workload's bytes are no longer the pattern
  PayloadRun r = run_payload(attach, action, payload, buf, payload);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.counts.recorded, kN);
  EXPECT_EQ(r.counts.payload_mismatched_events, kN);
  EXPECT_EQ(r.counts.payload_verified, 0u);
  EXPECT_TRUE(r.verdict.failed());
  EXPECT_NE(r.verdict.reason.find(std::to_string(kN) + " of " + std::to_string(kN) + " recorded payloads differ"),
            std::string::npos)
      << r.verdict.reason;
  EXPECT_NE(r.verdict.reason.find("byte 137"), std::string::npos) << r.verdict.reason;
}

TEST_P(WorkloadPayloadTest, ShorterBufferIsTruncated) {
  TB_SKIP_UNLESS_BPF();
  const auto& [attach, action] = GetParam();
  std::vector<char> buf = payload_pattern(200);
  PayloadRun r = run_payload(attach, action, 200, buf, 120);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.counts.payload_truncated_events, kN);
  EXPECT_EQ(r.counts.payload_kept_bytes, 120u);
  EXPECT_TRUE(r.verdict.failed());
  EXPECT_NE(r.verdict.reason.find("kept 120 of the 200 bytes"), std::string::npos) << r.verdict.reason;
}

INSTANTIATE_TEST_SUITE_P(All, WorkloadPayloadTest,
                         ::testing::Combine(::testing::Values("tracepoint", "raw_tp", "tp_btf", "uprobe"),
                                            ::testing::Values("ringbuf", "perfbuf")),
                         [](const ::testing::TestParamInfo<PayloadCombo>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

TEST(EbpfWorkloadPayload, BufferThatFaultsIsAnError) {
  TB_SKIP_UNLESS_BPF();
  // A length the tracer copies from an address that is not mapped: the copy
  // faults, the record is dropped and the fault is an error.
  std::vector<char> buf = payload_pattern(64);
  AttachSpec spec;
  spec.probe = payload_probe("uprobe");
  spec.action = "ringbuf";
  spec.payload_bytes = 64;
  EbpfTracer t;
  ASSERT_TRUE(t.attach(spec));
  ASSERT_TRUE(t.enable());
  for (unsigned long i = 0; i < 100; i++) {
    tb_ebpf_test_payload_site(i, buf.data(), 64);
    tb_ebpf_test_payload_site(i, reinterpret_cast<const char*>(16), 64);
  }
  ASSERT_TRUE(t.disable());
  ASSERT_TRUE(t.drain());
  EventCounts c = t.counts();
  t.teardown();
  EXPECT_EQ(c.recorded, 100u);
  EXPECT_EQ(c.payload_verified, 100u * 64);
  EXPECT_EQ(c.tracer_errors, 100u);
  EXPECT_EQ(c.recorded + c.lost, 200u);
  Verification v = judge_events(c, 200, 64, true);
  EXPECT_TRUE(v.failed());
  EXPECT_NE(v.reason.find("bpf_probe_read_user"), std::string::npos) << v.reason;
}

// --- many probes: a link per site, or one uprobe_multi link ----------------

class ManySitesTest : public ::testing::TestWithParam<std::string> {};

// The registered 16-site workload, as the harness runs it: every call of any
// site counted exactly while enabled, nothing while disabled, a link per
// site (uprobe) or one for all (uprobe_multi), and nothing left after.
TEST_P(ManySitesTest, EveryCallOfEverySiteCountsOnce) {
  TB_SKIP_UNLESS_BPF();
  const Workload* w = find_workload("many_sites_16");
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->probe.more_sites.size(), 15u);
  AttachSpec spec;
  spec.probe = w->probe;
  spec.action = "count";
  spec.options["attach"] = GetParam();
  std::unique_ptr<WorkloadState> st;
  ASSERT_TRUE(w->setup(WorkloadParams{}, &st));
  EbpfTracer t;
  ASSERT_TRUE(t.attach(spec));
  constexpr std::uint64_t kCalls = 16 * 125;
  st->fire(kCalls);  // not enabled yet: unseen
  ASSERT_TRUE(t.enable());
  st->fire(kCalls);
  ASSERT_TRUE(t.disable());
  st->fire(kCalls);
  ASSERT_TRUE(t.drain());
  const EventCounts c = t.counts();
  const nlohmann::json d = t.details();
  const auto progs = t.program_ids();
  const auto links = t.link_ids();
  t.teardown();
  EXPECT_EQ(c.recorded, kCalls);
  EXPECT_TRUE(judge_events(c, kCalls, 0, false).passed());
  EXPECT_EQ(d["sites"].get<int>(), 16);
  EXPECT_EQ(links.size(), GetParam() == "uprobe_multi" ? 1u : 16u);
  EXPECT_TRUE(all_gone(progs, links));
}

INSTANTIATE_TEST_SUITE_P(Attach, ManySitesTest, ::testing::Values("uprobe", "uprobe_multi"));

// --- a uprobe filtered to another process ------------------------------

class PidFilterTest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// A count on a nop-first site (many_sites_1) filtered to the other process.
AttachSpec pid_filtered_spec(const std::string& filter) {
  AttachSpec spec;
  spec.probe = find_workload("many_sites_1")->probe;
  spec.action = "count";
  spec.options["pid_filter"] = filter;
  return spec;
}

// A nop-first site's uprobe (many_sites_1) for another process of this binary, filtered by the
// kernel at the link or by the program: the other process's 1000 calls at
// the first enable are counted (the probe is live), none of this process's
// hits are, the judge passes it as a probe disabled here, and the other
// process, the programs and links are gone after teardown.
TEST_P(PidFilterTest, TheOtherProcessCountsAndThisOneIsRejected) {
  TB_SKIP_UNLESS_BPF();
  const auto& [attach, filter] = GetParam();
  const Workload* w = find_workload("many_sites_1");
  ASSERT_NE(w, nullptr);
  AttachSpec spec = pid_filtered_spec(filter);
  spec.options["attach"] = attach;
  std::unique_ptr<WorkloadState> st;
  ASSERT_TRUE(w->setup(WorkloadParams{}, &st));
  EbpfTracer t;
  Status a = t.attach(spec);
  ASSERT_TRUE(a) << a.message();
  const int other = t.details()["other_pid"].get<int>();
  ASSERT_GT(other, 0);
  EXPECT_NE(other, getpid());
  ASSERT_TRUE(t.enable());
  st->fire(kN);
  ASSERT_TRUE(t.disable());
  ASSERT_TRUE(t.enable());  // the proof is made once: later blocks add nothing of the other's
  st->fire(kN);
  ASSERT_TRUE(t.disable());
  ASSERT_TRUE(t.drain());
  const EventCounts c = t.counts();
  const nlohmann::json d = t.details();
  const auto progs = t.program_ids();
  const auto links = t.link_ids();
  t.teardown();
  EXPECT_TRUE(c.probe_disabled);
  EXPECT_EQ(c.recorded, 0u);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
  EXPECT_EQ(d["other_calls_counted"].get<std::uint64_t>(), 1000u);
  EXPECT_EQ(d["pid_filter"], filter);
  const Verification v = judge_events(c, 2 * kN, 0, false);
  EXPECT_TRUE(v.passed()) << v.reason;
  EXPECT_NE(v.reason.find("1000 calls at the first enable: 1000 counted"), std::string::npos) << v.reason;
  EXPECT_TRUE(all_gone(progs, links));
  EXPECT_EQ(kill(other, 0), -1) << "the other process outlived the teardown";
}

INSTANTIATE_TEST_SUITE_P(Ebpf, PidFilterTest,
                         ::testing::Combine(::testing::Values("uprobe", "uprobe_multi"),
                                            ::testing::Values("other_kernel", "other_program")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// The other process gone before the first enable: no proof the probe is
// live, so enable() fails and says why (never a pass with nothing counted).
TEST(PidFilter, AnOtherProcessThatDiedIsAnError) {
  TB_SKIP_UNLESS_BPF();
  ASSERT_NE(find_workload("many_sites_1"), nullptr);
  // (other_kernel's link would be refused first: no such process)
  const AttachSpec spec = pid_filtered_spec("other_program");
  EbpfTracer t;
  ASSERT_TRUE(t.attach(spec));
  ASSERT_EQ(kill(t.details()["other_pid"].get<int>(), SIGKILL), 0);
  Status e = t.enable();
  EXPECT_FALSE(e);
  EXPECT_NE(e.message().find("ended before making its calls"), std::string::npos) << e.message();
  const EventCounts c = t.counts();
  EXPECT_FALSE(judge_events(c, 0, 0, false).passed());
  t.teardown();
}

// Where the other process cannot call the probe (a syscall), or the action
// is not a count, the option is refused before anything is loaded.
TEST(PidFilter, RefusedWhereItCannotApply) {
  ASSERT_NE(find_workload("many_sites_1"), nullptr);
  AttachSpec spec = pid_filtered_spec("other_program");
  spec.probe = getpid_probe();
  EbpfTracer t;
  Status s = t.attach(spec);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("needs a user-function probe"), std::string::npos) << s.message();
  spec = pid_filtered_spec("other_program");
  spec.action = "ringbuf";
  s = t.attach(spec);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("applies to the count action"), std::string::npos) << s.message();
}

TEST(EbpfWorkloadPayload, WriteNullWorkloadIsVerified) {
  TB_SKIP_UNLESS_BPF();
  // The registered workload, as the harness runs it.
  const Workload* w = find_workload("write_null");
  ASSERT_NE(w, nullptr);
  AttachSpec spec;
  spec.probe = w->probe;
  spec.action = "ringbuf";
  spec.payload_bytes = 1024;
  EbpfTracer t;
  ASSERT_TRUE(t.attach(spec));
  WorkloadParams wp;
  wp.payload_bytes = 1024;
  std::unique_ptr<WorkloadState> st;
  ASSERT_TRUE(w->setup(wp, &st));
  ASSERT_TRUE(t.enable());
  st->fire(kN);
  ASSERT_TRUE(t.disable());
  ASSERT_TRUE(t.drain());
  EventCounts c = t.counts();
  t.teardown();
  EXPECT_EQ(c.payload_source, PayloadSource::kWorkload);
  EXPECT_EQ(c.payload_verified, kN * 1024);
  Verification v = judge_events(c, kN, 1024, w->takes_payload);
  EXPECT_TRUE(v.passed()) << v.reason;
}

TEST(EbpfWorkloadPayload, NoBufferAtTheProbeMeansGeneratedRecords) {
  TB_SKIP_UNLESS_BPF();
  AttachSpec spec;
  spec.probe = getpid_probe();
  spec.action = "ringbuf";
  spec.payload_bytes = 64;
  RunResult r = run(spec, kN, 1);
  ASSERT_TRUE(r.status) << r.status.message();
  EXPECT_EQ(r.counts.payload_source, PayloadSource::kTracer);
  EXPECT_EQ(r.counts.payload_verified, 0u);
  Verification v = judge_events(r.counts, kN, 64, true);
  EXPECT_TRUE(v.passed()) << v.reason;
  EXPECT_NE(v.reason.find("generated by the tracer"), std::string::npos) << v.reason;
  EXPECT_EQ(r.details["record_payload"], "generated by the program");
}

}  // namespace
}  // namespace tracebench::ebpf
