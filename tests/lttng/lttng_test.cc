// Drives the lttng adapter end to end on this machine: a root lttng-sessiond
// (the adapter starts one when none runs), the tracebench LTTng-UST provider
// loaded into this process, the CTF trace read back with babeltrace2.
//   attach -> enable -> fire N -> disable -> drain -> counts() == N
// and afterwards: no tracebench-<pid> session, no trace directory, no
// session daemon the adapter started.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <lttng/lttng.h>

#include "tests/common/require.h"
#include "tracebench/workload.h"
#include "tracers/lttng/lttng_tracer.h"
#include "tracers/lttng/payload_pattern.h"
#include "tracebench/verification.h"
#include "tracers/lttng/sessiond.h"
// Declarations only (the tracepoints are defined in bench/lttng_ust.cc): lets
// a test fire events whose payload differs from what the workload writes.
#include "tracers/lttng/tracebench_tp.h"

using tracebench::AttachSpec;
using tracebench::EventCounts;
using tracebench::ProbeKind;
using tracebench::ProbePoint;
using tracebench::Workload;
using tracebench::WorkloadParams;
using tracebench::WorkloadState;
namespace lt = tracebench::lttng;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> our_sessions() {
  std::vector<std::string> out;
  if (!lt::sessiond_alive()) return out;
  lttng_session* sessions = nullptr;
  int n = lttng_list_sessions(&sessions);
  for (int i = 0; i < n; ++i) {
    if (std::strncmp(sessions[i].name, "tracebench-", 11) == 0) out.emplace_back(sessions[i].name);
  }
  std::free(sessions);
  return out;
}

std::vector<std::string> our_trace_dirs() {
  std::vector<std::string> out;
  std::string prefix = "tracebench-lttng-" + std::to_string(getpid()) + "-";
  for (const auto& e : fs::directory_iterator("/tmp")) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
  }
  return out;
}

bool has_consumerd_child(pid_t sessiond) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    auto rp = line.rfind(')');
    if (rp == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    std::sscanf(line.c_str() + rp + 2, "%c %d", &state, &ppid);
    if (ppid == sessiond && state != 'Z' && lt::process_is(std::stoi(name), "lttng-consumerd")) return true;
  }
  return false;
}

AttachSpec spec_for(const char* workload, std::size_t payload = 0, std::map<std::string, std::string> opts = {}) {
  const Workload* w = tracebench::find_workload(workload);
  AttachSpec s;
  if (w) s.probe = w->probe;
  s.action = "record";
  s.payload_bytes = payload;
  s.options = std::move(opts);
  s.pid = getpid();
  return s;
}

std::unique_ptr<WorkloadState> workload_state(const char* workload, std::size_t payload = 0) {
  const Workload* w = tracebench::find_workload(workload);
  std::unique_ptr<WorkloadState> st;
  if (!w) return st;
  WorkloadParams p;
  p.payload_bytes = payload;
  tracebench::Status s = w->setup(p, &st);
  EXPECT_TRUE(s) << s.message();
  return st;
}

class LttngTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) TB_SKIP_OR_FAIL("lttng", "needs root (a root lttng-sessiond)");
    auto a = tracer.available();
    if (!a.ok) TB_SKIP_OR_FAIL("lttng", a.reason);
    sessiond_was_alive = lt::sessiond_alive();
  }
  void TearDown() override {
    pid_t started = tracer.started_sessiond();
    tracer.teardown();
    EXPECT_TRUE(our_trace_dirs().empty()) << "trace directory left behind";
    for (const auto& s : our_sessions()) {
      EXPECT_NE(s, "tracebench-" + std::to_string(getpid())) << "session left behind";
    }
    if (started) {
      // Kept for the next attach; stopped at exit (tests/lttng/daemon_test.sh
      // and AdapterKeepsTheDaemonItStartedUntilReleased).
      EXPECT_TRUE(lt::process_is(started, "lttng-sessiond"));
      EXPECT_EQ(lt::own_sessiond(), started);
    }
    if (!sessiond_was_alive && !external_sessiond && !lt::own_sessiond()) { EXPECT_FALSE(lt::sessiond_alive()); }
  }

  // attach, enable, fire n, disable, fire `after` more while disabled, drain.
  EventCounts run(const char* workload, std::size_t payload, std::uint64_t n, std::uint64_t after = 0,
                  std::map<std::string, std::string> opts = {}) {
    auto st = workload_state(workload, payload);
    EXPECT_TRUE(st);
    if (!st) return {};
    auto s = tracer.attach(spec_for(workload, payload, std::move(opts)));
    EXPECT_TRUE(s) << s.message();
    if (!s) return {};
    EXPECT_FALSE(tracer.session_name().empty());
    EXPECT_TRUE(fs::is_directory(tracer.trace_dir()));
    EXPECT_TRUE(tracer.enable());
    st->fire(n);
    EXPECT_TRUE(tracer.disable());
    st->fire(after);
    s = tracer.drain();
    EXPECT_TRUE(s) << s.message();
    return tracer.counts();
  }

  lt::LttngTracer tracer;
  bool sessiond_was_alive = false;
  bool external_sessiond = false;
};

TEST(LttngOptions, ParsesKnownKeys) {
  lt::LttngConfig c;
  ASSERT_TRUE(lt::parse_spec_options(AttachSpec{.options = {{"subbuf_size", "64k"},
                                                            {"num_subbuf", "8"},
                                                            {"overwrite", "off"},
                                                            {"blocking_timeout_us", "inf"},
                                                            {"buffers", "pid"},
                                                            {"switch_timer_us", "1000"},
                                                            {"read_timer_us", "200"},
                                                            {"register_timeout_ms", "5000"}}},
                                     &c));
  EXPECT_EQ(c.subbuf_size, 65536u);
  EXPECT_EQ(c.num_subbuf, 8u);
  EXPECT_FALSE(c.overwrite);
  EXPECT_TRUE(c.blocking_set);
  EXPECT_EQ(c.blocking_timeout_us, -1);
  EXPECT_TRUE(c.per_pid_buffers);
  EXPECT_EQ(c.switch_timer_us, 1000u);
  EXPECT_EQ(c.read_timer_us, 200u);
  EXPECT_EQ(c.register_timeout_ms, 5000u);
  ASSERT_TRUE(lt::parse_spec_options(AttachSpec{.options = {{"subbuf_size", "1M"}, {"overwrite", "on"}}}, &c));
  EXPECT_EQ(c.subbuf_size, 1u << 20);
  EXPECT_TRUE(c.overwrite);
}

TEST(LttngOptions, RejectsBadOnes) {
  const std::vector<std::map<std::string, std::string>> bad = {
      {{"bogus", "1"}},
      {{"buffer_kb", "64"}},
      {{"subbuf_size", "1000"}},
      {{"subbuf_size", "2048"}},
      {{"subbuf_size", "-4096"}},
      {{"subbuf_size", "4096x"}},
      {{"num_subbuf", "3"}},
      {{"num_subbuf", "1"}},
      {{"overwrite", "maybe"}},
      {{"buffers", "global"}},
      {{"blocking_timeout_us", "-5"}},
      {{"register_timeout_ms", "0"}},
      {{"overwrite", "on"}, {"blocking_timeout_us", "100"}},
  };
  for (const auto& opts : bad) {
    lt::LttngConfig c;
    tracebench::Status s = lt::parse_spec_options(AttachSpec{.options = opts}, &c);
    EXPECT_FALSE(s) << opts.begin()->first << "=" << opts.begin()->second;
    EXPECT_NE(s.message().find(opts.begin()->first), std::string::npos) << s.message();
  }
  lt::LttngConfig c;
  tracebench::Status s = lt::parse_spec_options(AttachSpec{.options = {{"bogus", "1"}}}, &c);
  EXPECT_NE(s.message().find("unknown option 'bogus'; options: subbuf_size, num_subbuf"), std::string::npos)
      << s.message();
}

TEST(LttngOptions, HandlerCount) {
  lt::LttngConfig c;
  ASSERT_TRUE(lt::parse_spec_options(AttachSpec{}, &c));
  EXPECT_EQ(c.ecbs, 1u);
  EXPECT_TRUE(c.extra_predicate);
  ASSERT_TRUE(lt::parse_spec_options(AttachSpec{.options = {{"ecbs", "16"}, {"extra_predicate", "false"}}}, &c));
  EXPECT_EQ(c.ecbs, 16u);
  EXPECT_FALSE(c.extra_predicate);
  for (const auto& opts : std::vector<std::map<std::string, std::string>>{{{"ecbs", "0"}},
                                                                          {{"ecbs", "17"}},
                                                                          {{"ecbs", "-1"}},
                                                                          {{"ecbs", "two"}},
                                                                          {{"extra_predicate", "maybe"}},
                                                                          {{"extra_predicate", "off"}}}) {
    tracebench::Status s = lt::parse_spec_options(AttachSpec{.options = opts}, &c);
    EXPECT_FALSE(s) << opts.begin()->first << "=" << opts.begin()->second;
    EXPECT_NE(s.message().find(opts.begin()->first), std::string::npos) << s.message();
  }
  // The adapter refuses them in validate(), before anything exists.
  lt::LttngTracer t;
  tracebench::Status s = t.validate(spec_for("ust_hot", 0, {{"ecbs", "0"}}));
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("ecbs"), std::string::npos) << s.message();
  EXPECT_TRUE(t.validate(spec_for("ust_hot", 0, {{"ecbs", "4"}, {"extra_predicate", "false"}})));
  // The kernel-domain adapter has no handler-count sweep.
  EXPECT_FALSE(lt::parse_spec_options(AttachSpec{.options = {{"ecbs", "2"}}}, &c, /*user_space=*/false));
  EXPECT_FALSE(lt::parse_spec_options(AttachSpec{.options = {{"extra_predicate", "true"}}}, &c, /*user_space=*/false));
}

TEST(LttngReader, ChannelOfStream) {
  EXPECT_EQ(lt::channel_of_stream("/tmp/x/ust/uid/0/64-bit/tracebench_0"), "tracebench");
  EXPECT_EQ(lt::channel_of_stream("/tmp/x/ust/uid/0/64-bit/tracebench_h12_1"), "tracebench_h12");
  EXPECT_EQ(lt::channel_of_stream("tracebench_h2_13"), "tracebench_h2");
  EXPECT_EQ(lt::channel_of_stream("odd"), "odd");
}

TEST(LttngSupports, OnlyUstTracepoints) {
  lt::LttngTracer t;
  EXPECT_TRUE(t.supports(ProbePoint{"ust:tracebench:hot", ProbeKind::kUstTracepoint, "tracebench:hot", 0, ""}));
  EXPECT_FALSE(t.supports(ProbePoint{"usdt:tracebench:hot", ProbeKind::kUsdt, "tracebench:hot", 0, ""}));
  EXPECT_FALSE(t.supports(ProbePoint{"syscall:getpid", ProbeKind::kSyscall, "getpid", 0, ""}));
  EXPECT_FALSE(t.supports(ProbePoint{"loop:empty", ProbeKind::kNone, "", 0, ""}));
}

TEST_F(LttngTest, HotEventsCountedExactly) {
  EventCounts c = run("ust_hot", 0, 10000, 5000);
  EXPECT_EQ(c.recorded + c.lost, 10000u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.recorded, 10000u);
  EXPECT_TRUE(c.exact);
  auto d = tracer.details();
  EXPECT_EQ(d["trace"]["events_checked"], 10000u);  // every tag checked
  EXPECT_EQ(d["trace"]["other_events"], 0u);
  EXPECT_EQ(d["event"], "tracebench:hot");
}

// The daemons doing the consumer's work are named for the harness's CPU
// accounting: the session daemon and the consumer daemon it spawned for the
// session (from a thread other than its main one), each a whole process.
TEST_F(LttngTest, ConsumerDaemonsAreNamed) {
  auto st = workload_state("ust_hot", 0);
  ASSERT_TRUE(st);
  ASSERT_TRUE(tracer.attach(spec_for("ust_hot", 0)));
  ASSERT_TRUE(tracer.enable());
  st->fire(1000);
  ASSERT_TRUE(tracer.disable());
  std::vector<tracebench::ConsumerTask> tasks = tracer.consumer_tasks();
  ASSERT_TRUE(tracer.drain());
  std::set<std::string> roles;
  for (const auto& t : tasks) {
    roles.insert(t.role);
    EXPECT_EQ(t.tid, 0);
    EXPECT_TRUE(lt::process_is(t.pid, t.role)) << t.role << " " << t.pid;
  }
  EXPECT_TRUE(roles.count("lttng-sessiond"));
  EXPECT_TRUE(roles.count("lttng-consumerd")) << "consumer daemon not found among the daemon's children";
}

TEST_F(LttngTest, PayloadBytesVerified) {
  EventCounts c = run("ust_payload", 200, 5000, 100, {{"subbuf_size", "1M"}, {"num_subbuf", "4"}});
  EXPECT_EQ(c.recorded, 5000u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.payload_verified, 5000u * 200u);
  auto d = tracer.details();
  EXPECT_EQ(d["subbuf_size"], 1u << 20);
  EXPECT_EQ(d["num_subbuf"], 4u);
}

// With the default channel (8 x 2 MiB per CPU), a block may fire what half
// of it holds in records of the payload + 32 bytes: that many 1 KiB events
// in one block are all kept, whether or not the consumer daemon keeps up.
// A channel the user sized is the user's: no limit.
TEST_F(LttngTest, BlockCapacityIsHalfTheDefaultChannel) {
  const std::uint64_t hold = (2u << 20) * 7 / 2 / (1024 + 32);
  EventCounts c = run("ust_payload", 1024, hold);
  EXPECT_EQ(tracer.block_event_capacity(), hold);
  EXPECT_EQ(c.recorded, hold);
  EXPECT_EQ(c.lost, 0u);
  tracer.teardown();
  run("ust_payload", 1024, 100, 0, {{"subbuf_size", "1M"}});
  EXPECT_EQ(tracer.block_event_capacity(), 0u);
}

// The same 64 bytes as a fixed-size array (lttng_ust_field_array): every
// element read back and compared with the pattern.
TEST_F(LttngTest, FixedArrayPayloadIsVerified) {
  EventCounts c = run("ust_array64", 64, 5000, 100, {{"subbuf_size", "1M"}, {"num_subbuf", "4"}});
  EXPECT_EQ(c.recorded, 5000u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.payload_source, tracebench::PayloadSource::kWorkload);
  EXPECT_EQ(c.payload_checked_events, 5000u);
  EXPECT_EQ(c.payload_mismatched_events, 0u);
  EXPECT_EQ(c.payload_verified, 5000u * 64u);
}

TEST_F(LttngTest, FixedArrayWithOtherBytesFails) {
  auto st = workload_state("ust_array64", 64);
  ASSERT_TRUE(st);
  ASSERT_TRUE(tracer.attach(spec_for("ust_array64", 64)));
  ASSERT_TRUE(tracer.enable());
  st->fire(10);
  std::uint8_t wrong[64] = {};
  lttng_ust_tracepoint(tracebench, array64, wrong);
  ASSERT_TRUE(tracer.disable());
  ASSERT_TRUE(tracer.drain());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.payload_checked_events, 11u);
  EXPECT_EQ(c.payload_mismatched_events, 1u);
}

TEST_F(LttngTest, EmptyPayload) {
  EventCounts c = run("ust_payload", 0, 1000);
  EXPECT_EQ(c.recorded, 1000u);
  EXPECT_EQ(c.payload_verified, 0u);
  EXPECT_EQ(tracer.details()["trace"]["events_checked"], 1000u);
}

TEST_F(LttngTest, RepeatedEnableDisable) {
  auto st = workload_state("ust_hot");
  ASSERT_TRUE(st);
  auto s = tracer.attach(spec_for("ust_hot"));
  ASSERT_TRUE(s) << s.message();
  st->fire(777);  // before the first enable(): not recorded
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(tracer.enable());
    st->fire(2000);
    ASSERT_TRUE(tracer.disable());
    st->fire(1000);
  }
  s = tracer.drain();
  ASSERT_TRUE(s) << s.message();
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded + c.lost, 6000u);
  EXPECT_EQ(c.recorded, 6000u);
  // Tracing again after drain() (which stopped the session) counts on.
  ASSERT_TRUE(tracer.enable());
  st->fire(500);
  ASSERT_TRUE(tracer.disable());
  ASSERT_TRUE(tracer.drain());
  EXPECT_EQ(tracer.counts().recorded, 6500u);
}

TEST_F(LttngTest, DiscardedEventsCountedExactly) {
  // 8 KiB of buffer for 20 MB of events: most are discarded, and LTTng's
  // discarded-event counter must account for every one.
  EventCounts c = run("ust_payload", 1024, 20000, 0, {{"subbuf_size", "4096"}, {"num_subbuf", "2"}});
  EXPECT_TRUE(c.exact);
  EXPECT_GT(c.lost, 0u);
  EXPECT_GT(c.recorded, 0u);
  EXPECT_EQ(c.recorded + c.lost, 20000u);
  EXPECT_EQ(c.payload_verified, c.recorded * 1024u);
  auto d = tracer.details();
  EXPECT_EQ(d["discarded_events"], c.lost);
  EXPECT_EQ(d["trace"]["discarded_events_in_ctf"], c.lost);  // babeltrace2 agrees
}

TEST_F(LttngTest, PerProcessBuffers) {
  EventCounts c = run("ust_hot", 0, 3000, 10, {{"buffers", "pid"}});
  EXPECT_EQ(c.recorded, 3000u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(tracer.details()["buffers"], "pid");
}

TEST_F(LttngTest, OverwriteModeIsALowerBound) {
  EventCounts c = run("ust_hot", 0, 1000, 0, {{"overwrite", "on"}});
  EXPECT_FALSE(c.exact);
  EXPECT_EQ(c.recorded, 1000u);  // nothing was overwritten at this rate
}

TEST_F(LttngTest, BlockingChannel) {
  // With a blocking timeout the application waits for room instead of
  // discarding (LTTNG_UST_ALLOW_BLOCKING is set when the provider loads).
  EventCounts c =
      run("ust_payload", 1024, 400, 0, {{"subbuf_size", "4096"}, {"num_subbuf", "2"}, {"blocking_timeout_us", "inf"}});
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.recorded, 400u);
  EXPECT_EQ(c.payload_verified, 400u * 1024u);
}

TEST_F(LttngTest, WrongPayloadIsAnError) {
  auto st = workload_state("ust_payload", 16);
  ASSERT_TRUE(st);
  auto s = tracer.attach(spec_for("ust_payload", 16));
  ASSERT_TRUE(s) << s.message();
  ASSERT_TRUE(tracer.enable());
  st->fire(10);
  const char wrong[] = "ZZZZZZZZZZZZZZZZ";
  lttng_ust_tracepoint(tracebench, payload, wrong, 16);
  lttng_ust_tracepoint(tracebench, payload, "abc", 3);
  ASSERT_TRUE(tracer.disable());
  s = tracer.drain();
  ASSERT_TRUE(s) << s.message();  // the trace was read; the judge decides
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, 12u);
  EXPECT_EQ(c.payload_source, tracebench::PayloadSource::kWorkload);
  EXPECT_EQ(c.payload_checked_events, 12u);
  EXPECT_EQ(c.payload_mismatched_events, 1u);  // the Zs
  EXPECT_EQ(c.payload_truncated_events, 1u);   // "abc": 3 of 16 bytes
  EXPECT_EQ(c.payload_kept_bytes, 3u);
  EXPECT_EQ(c.payload_verified, 10u * 16u);
  tracebench::Verification v = tracebench::judge_events(c, 12, 16, true);
  EXPECT_TRUE(v.failed());
  EXPECT_NE(v.reason.find("1 of 12 recorded payloads were truncated: the tracer kept 3 of the 16 bytes"),
            std::string::npos)
      << v.reason;
}

TEST_F(LttngTest, WrongHotTagIsAnError) {
  auto st = workload_state("ust_hot");
  ASSERT_TRUE(st);
  auto s = tracer.attach(spec_for("ust_hot"));
  ASSERT_TRUE(s) << s.message();
  ASSERT_TRUE(tracer.enable());
  lttng_ust_tracepoint(tracebench, hot, 7u);
  ASSERT_TRUE(tracer.disable());
  s = tracer.drain();
  ASSERT_TRUE(s) << s.message();
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.tracer_errors, 1u);
  EXPECT_NE(c.tracer_error_detail.find("`tag` is 7"), std::string::npos) << c.tracer_error_detail;
  tracebench::Verification v = tracebench::judge_events(c, 1, 0, false);
  EXPECT_TRUE(v.failed());
  EXPECT_NE(v.reason.find("`tag` is 7"), std::string::npos) << v.reason;
}

TEST_F(LttngTest, BadOptionsChangeNothing) {
  for (const auto& opts : std::vector<std::map<std::string, std::string>>{{{"bogus", "1"}},
                                                                          {{"subbuf_size", "100"}},
                                                                          {{"buffers", "x"}},
                                                                          {{"ecbs", "0"}},
                                                                          {{"ecbs", "2"}, {"extra_predicate", "no"}}}) {
    lt::LttngTracer t;
    tracebench::Status s = t.attach(spec_for("ust_hot", 0, opts));
    EXPECT_FALSE(s);
    EXPECT_EQ(t.started_sessiond(), 0);
    EXPECT_TRUE(t.session_name().empty());
    EXPECT_TRUE(our_trace_dirs().empty());
    EXPECT_EQ(lt::sessiond_alive(), sessiond_was_alive) << "a rejected attach started a session daemon";
    t.teardown();
  }
}

// What liblttng-ctl says the session holds: per channel, its event rules'
// (enabled, filter expression or "").
struct RuleState {
  bool enabled = false;
  std::string filter;
};
std::map<std::string, std::vector<RuleState>> session_rules(const std::string& session) {
  std::map<std::string, std::vector<RuleState>> out;
  lttng_domain dom;
  std::memset(&dom, 0, sizeof dom);
  dom.type = LTTNG_DOMAIN_UST;
  lttng_handle* h = lttng_create_handle(session.c_str(), &dom);
  if (!h) return out;
  lttng_channel* chans = nullptr;
  int n = lttng_list_channels(h, &chans);
  for (int i = 0; i < n; ++i) {
    auto& rules = out[chans[i].name];
    lttng_event* events = nullptr;
    int m = lttng_list_events(h, chans[i].name, &events);
    for (int j = 0; j < m; ++j) {
      RuleState r;
      r.enabled = events[j].enabled;
      const char* f = nullptr;
      if (lttng_event_get_filter_expression(&events[j], &f) == 0 && f) r.filter = f;
      rules.push_back(r);
    }
    std::free(events);
  }
  std::free(chans);
  lttng_destroy_handle(h);
  return out;
}

// The handler-count sweep: ecbs=N is N channels, each with an event rule
// for the tracepoint, all enabled and disabled together; with
// extra_predicate=true every channel records every event (each checked),
// with false the extras' rules carry a filter that never holds and record
// nothing.  The judge passes either way; the session goes in teardown.
class LttngHandlers : public LttngTest, public ::testing::WithParamInterface<std::tuple<unsigned, bool>> {};

TEST_P(LttngHandlers, EachHandlerAsConfigured) {
  const auto [n, truth] = GetParam();
  std::map<std::string, std::string> opts{{"ecbs", std::to_string(n)}};
  if (!truth) opts["extra_predicate"] = "false";
  auto st = workload_state("ust_hot");
  ASSERT_TRUE(st);
  auto s = tracer.attach(spec_for("ust_hot", 0, opts));
  ASSERT_TRUE(s) << s.message();
  st->fire(100);  // before enable(): nobody records
  auto expect_rules = [&](bool enabled) {
    auto rules = session_rules(tracer.session_name());
    ASSERT_EQ(rules.size(), n);
    for (unsigned i = 1; i <= n; ++i) {
      std::string chan = i == 1 ? "tracebench" : "tracebench_h" + std::to_string(i);
      ASSERT_EQ(rules.count(chan), 1u) << chan;
      ASSERT_EQ(rules[chan].size(), 1u) << chan;
      EXPECT_EQ(rules[chan][0].enabled, enabled) << chan;
      EXPECT_EQ(rules[chan][0].filter, i == 1 || truth ? "" : lt::kFalseFilter) << chan;
    }
  };
  expect_rules(false);
  ASSERT_TRUE(tracer.enable());
  expect_rules(true);
  st->fire(3000);
  ASSERT_TRUE(tracer.disable());
  expect_rules(false);
  st->fire(500);
  s = tracer.drain();
  ASSERT_TRUE(s) << s.message();
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, 3000u);
  EXPECT_EQ(c.lost, 0u);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
  EXPECT_TRUE(tracebench::judge_events(c, 3000, 0, false).passed());
  auto d = tracer.details();
  EXPECT_EQ(d["ecbs"], n);
  if (n > 1)
    EXPECT_EQ(d["extra_predicate"], truth ? "true" : "false");
  else
    EXPECT_FALSE(d.contains("extra_predicate"));
  ASSERT_EQ(d["handlers"].size(), n);
  for (unsigned i = 0; i < n; ++i) {
    const auto& h = d["handlers"][i];
    const std::uint64_t want = i == 0 || truth ? 3000 : 0;
    EXPECT_EQ(h["events"], want) << h.dump();
    EXPECT_EQ(h["events_checked"], want) << h.dump();
    EXPECT_EQ(h["discarded_events"], 0u) << h.dump();
  }
  EXPECT_EQ(d["trace"]["events"], 3000u);  // handler 1's
  EXPECT_EQ(d["trace"]["other_events"], 0u);
  const std::string session = tracer.session_name();
  tracer.teardown();
  for (const auto& name : our_sessions()) EXPECT_NE(name, session);
  EXPECT_TRUE(session_rules(session).empty());
  EXPECT_TRUE(our_trace_dirs().empty());
}

INSTANTIATE_TEST_SUITE_P(Sweep, LttngHandlers, ::testing::Combine(::testing::Values(1u, 2u, 4u), ::testing::Bool()),
                         [](const auto& info) {
                           return "ecbs" + std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_true" : "_false");
                         });

// Each acting handler's copy is checked like the first's: payload bytes.
TEST_F(LttngTest, HandlersEachVerifyThePayload) {
  EventCounts c = run("ust_payload", 64, 2000, 10, {{"ecbs", "3"}, {"subbuf_size", "1M"}, {"num_subbuf", "4"}});
  EXPECT_EQ(c.recorded, 2000u);
  EXPECT_EQ(c.payload_verified, 2000u * 64u);
  EXPECT_EQ(c.tracer_errors, 0u) << c.tracer_error_detail;
  auto d = tracer.details();
  for (const auto& h : d["handlers"]) EXPECT_EQ(h["events_checked"], 2000u) << h.dump();
}

// An acting handler that missed events is a tracer error: here one of the
// rules is disabled behind the adapter's back.
TEST_F(LttngTest, HandlerThatMissedEventsIsAnError) {
  auto st = workload_state("ust_hot");
  ASSERT_TRUE(st);
  ASSERT_TRUE(tracer.attach(spec_for("ust_hot", 0, {{"ecbs", "3"}})));
  ASSERT_TRUE(tracer.enable());
  st->fire(1000);
  lttng_domain dom;
  std::memset(&dom, 0, sizeof dom);
  dom.type = LTTNG_DOMAIN_UST;
  lttng_handle* h = lttng_create_handle(tracer.session_name().c_str(), &dom);
  ASSERT_TRUE(h);
  ASSERT_EQ(lttng_disable_event(h, "tracebench:hot", "tracebench_h3"), 0);
  lttng_destroy_handle(h);
  st->fire(500);
  ASSERT_TRUE(tracer.disable());
  ASSERT_TRUE(tracer.drain());
  EventCounts c = tracer.counts();
  EXPECT_EQ(c.recorded, 1500u);
  EXPECT_EQ(c.tracer_errors, 500u);
  EXPECT_NE(c.tracer_error_detail.find("handler 3 (channel tracebench_h3) recorded 1000 + discarded 0 = 1000 events, "
                                       "handler 1 1500 + 0 = 1500"),
            std::string::npos)
      << c.tracer_error_detail;
  tracebench::Verification v = tracebench::judge_events(c, 1500, 0, false);
  EXPECT_TRUE(v.failed());
  EXPECT_NE(v.reason.find("tracebench_h3"), std::string::npos) << v.reason;
}

// The extras' filter is really evaluated by lttng-ust: the same expression
// made to hold records every event, which the adapter reports as an error
// (a handler whose predicate never holds recorded something).
TEST_F(LttngTest, ExtraFilterIsEvaluated) {
  tracer.set_false_filter_for_test("$ctx.vpid != 0");
  EventCounts c = run("ust_hot", 0, 1000, 0, {{"ecbs", "2"}, {"extra_predicate", "false"}});
  EXPECT_EQ(c.recorded, 1000u);
  EXPECT_EQ(tracer.details()["handlers"][1]["events"], 1000u);
  EXPECT_GT(c.tracer_errors, 0u);
  EXPECT_NE(c.tracer_error_detail.find("although its filter `$ctx.vpid != 0` never holds"), std::string::npos)
      << c.tracer_error_detail;
}

TEST_F(LttngTest, NonUstProbeRejected) {
  AttachSpec s;
  s.probe = ProbePoint{"syscall:getpid", ProbeKind::kSyscall, "getpid", 0, ""};
  tracebench::Status st = tracer.attach(s);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("not an LTTng-UST tracepoint"), std::string::npos) << st.message();
  EXPECT_EQ(tracer.started_sessiond(), 0);
}

TEST_F(LttngTest, UnregisteredTracepointTimesOut) {
  AttachSpec s = spec_for("ust_hot", 0, {{"register_timeout_ms", "300"}});
  s.probe.target = "tracebench:no_such_event";
  tracebench::Status st = tracer.attach(s);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("has not registered tracepoint tracebench:no_such_event"), std::string::npos)
      << st.message();
}

TEST_F(LttngTest, TeardownIsIdempotent) {
  tracer.teardown();  // before attach
  EventCounts c = run("ust_hot", 0, 100);
  EXPECT_EQ(c.recorded, 100u);
  tracer.teardown();
  tracer.teardown();
}

TEST_F(LttngTest, AdapterKeepsTheDaemonItStartedUntilReleased) {
  if (sessiond_was_alive && !lt::own_sessiond()) {
    // Someone else's daemon: the adapter uses it and leaves it running.
    EventCounts c = run("ust_hot", 0, 100);
    EXPECT_EQ(c.recorded, 100u);
    EXPECT_EQ(tracer.started_sessiond(), 0);
    EXPECT_FALSE(tracer.details()["sessiond_started_by_adapter"]);
    tracer.teardown();
    EXPECT_TRUE(lt::sessiond_alive());
    EXPECT_TRUE(lt::release_own_sessiond());
    EXPECT_TRUE(lt::sessiond_alive()) << "releasing stopped a daemon this process did not start";
    return;
  }
  EventCounts c = run("ust_hot", 0, 100);
  EXPECT_EQ(c.recorded, 100u);
  pid_t started = tracer.started_sessiond();
  ASSERT_GT(started, 0);
  EXPECT_TRUE(tracer.details()["sessiond_started_by_adapter"]);
  EXPECT_EQ(tracer.details()["sessiond_pid"], started);
  tracer.teardown();
  // Kept, and written down for `tracebench cleanup` should this process die.
  EXPECT_TRUE(lt::process_is(started, "lttng-sessiond"));
  EXPECT_EQ(lt::own_sessiond(), started);
  std::ifstream marker(lt::kMarkerFile);
  pid_t daemon = 0, owner = 0;
  EXPECT_TRUE(marker >> daemon >> owner);
  EXPECT_EQ(daemon, started);
  EXPECT_EQ(owner, getpid());
  EXPECT_TRUE(lt::cleanup_leftovers(false).empty()) << "a live run's daemon is not a leftover";
  // The next attach uses it.
  c = run("ust_payload", 16, 100);
  EXPECT_EQ(c.recorded, 100u);
  EXPECT_EQ(tracer.started_sessiond(), started);
  tracer.teardown();
  // What exit does (tracebench::keep_until_exit).
  EXPECT_TRUE(lt::release_own_sessiond());
  EXPECT_FALSE(lt::process_is(started, "lttng-sessiond"));
  EXPECT_FALSE(has_consumerd_child(started));
  struct stat st;
  EXPECT_NE(::stat(lt::kMarkerFile, &st), 0) << lt::kMarkerFile << " left behind";
  EXPECT_FALSE(lt::sessiond_alive());
  EXPECT_EQ(lt::own_sessiond(), 0);
  EXPECT_TRUE(lt::release_own_sessiond()) << "releasing twice";
}

TEST_F(LttngTest, ExternalDaemonLeftRunning) {
  pid_t own = 0;
  if (!sessiond_was_alive) {
    ASSERT_TRUE(lt::start_sessiond(&own));
    external_sessiond = true;
  }
  EventCounts c = run("ust_hot", 0, 2000);
  EXPECT_EQ(c.recorded, 2000u);
  EXPECT_EQ(tracer.started_sessiond(), 0);
  tracer.teardown();
  EXPECT_TRUE(lt::sessiond_alive());
  for (const auto& s : our_sessions()) EXPECT_NE(s, "tracebench-" + std::to_string(getpid()));
  if (own) { EXPECT_TRUE(lt::stop_sessiond(own)); }
}

TEST_F(LttngTest, LaterAttachesInTheSameProcessUseTheSameDaemon) {
  // Benchmarks of one run: each attach after the first finds the daemon the
  // first one used, and the process's tracepoints are registered with it.
  EventCounts c = run("ust_hot", 0, 1000);
  EXPECT_EQ(c.recorded, 1000u);
  nlohmann::json first = tracer.details()["sessiond_pid"];
  ASSERT_TRUE(first.is_number());
  tracer.teardown();
  for (int i = 0; i < 3; ++i) {
    c = run("ust_payload", 32, 1000);
    EXPECT_EQ(c.recorded, 1000u);
    EXPECT_EQ(c.payload_verified, 32000u);
    EXPECT_EQ(tracer.details()["sessiond_pid"], first) << "attach " << i + 2;
    tracer.teardown();
  }
}

TEST_F(LttngTest, CleanupRemovesWhatADeadRunLeft) {
  pid_t own = 0;
  if (!sessiond_was_alive) {
    ASSERT_TRUE(lt::start_sessiond(&own));
    external_sessiond = true;
  }
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);  // `child` is now a dead pid
  std::string name = "tracebench-" + std::to_string(child);
  std::string dir = "/tmp/tracebench-lttng-" + std::to_string(child) + "-test";
  ASSERT_TRUE(fs::create_directories(dir));
  lttng_session_descriptor* desc = lttng_session_descriptor_local_create(name.c_str(), dir.c_str());
  ASSERT_EQ(lttng_create_session_ext(desc), LTTNG_OK);
  lttng_session_descriptor_destroy(desc);
  if (own) {
    // As if the dead run had started the daemon.
    std::ofstream(lt::kMarkerFile) << own << ' ' << child << '\n';
  }
  std::vector<std::string> removed = lt::cleanup_leftovers();
  std::string all;
  for (const auto& r : removed) all += r + "\n";
  EXPECT_NE(all.find("lttng session " + name), std::string::npos) << all;
  EXPECT_NE(all.find("trace directory " + dir), std::string::npos) << all;
  EXPECT_FALSE(fs::exists(dir));
  if (own) {
    EXPECT_NE(all.find("lttng-sessiond pid " + std::to_string(own)), std::string::npos) << all;
    EXPECT_FALSE(lt::process_is(own, "lttng-sessiond"));
  } else {
    for (const auto& s : our_sessions()) EXPECT_NE(s, name);
    (void)lttng_destroy_session(name.c_str());
  }
  // Nothing of a live run is touched: a second pass removes nothing.
  EXPECT_TRUE(lt::cleanup_leftovers().empty());
}

}  // namespace
