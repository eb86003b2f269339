// D-VM runtime: probes, sessions, ECB chains, buffers, consumer,
// aggregations end to end (D source -> DIF -> probe site -> consumer),
// providers, and an allocation-free probe path.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "tracers/dvm/compiler/dcompile.h"
#include "tracers/dvm/runtime.h"
#include "tracers/dvm/site.h"

// ---- malloc hook: counts every allocation while g_count_mallocs is set ----
// (Not under AddressSanitizer, which owns malloc.)
#if defined(__SANITIZE_ADDRESS__)
#define TBDVM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TBDVM_ASAN 1
#endif
#endif
static std::atomic<bool> g_count_mallocs{false};
static std::atomic<long> g_mallocs{0};
#ifndef TBDVM_ASAN
extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void* malloc(size_t n) {
  if (g_count_mallocs.load(std::memory_order_relaxed)) g_mallocs.fetch_add(1);
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t a, size_t b) {
  if (g_count_mallocs.load(std::memory_order_relaxed)) g_mallocs.fetch_add(1);
  return __libc_calloc(a, b);
}
extern "C" void* realloc(void* p, size_t n) {
  if (g_count_mallocs.load(std::memory_order_relaxed)) g_mallocs.fetch_add(1);
  return __libc_realloc(p, n);
}
#endif

namespace tbdvm {
namespace {

// Probe sites of this test binary.
__attribute__((noinline)) void fire_hot(uint64_t i, uint64_t k) { DVM_PROBE(tbtest, "loop", "hot", i, k); }
__attribute__((noinline)) void fire_other(uint64_t i) { DVM_PROBE(tbtest, "loop", "other", i); }
__attribute__((noinline)) void fire_payload(const uint8_t* p, uint64_t n) {
  DVM_PROBE_REGION(tbtest, "loop", "payload", p, n, reinterpret_cast<uint64_t>(p), n);
}
__attribute__((noinline)) long traced_getpid() {
  DVM_SYSCALL_ENTRY(getpid);
  return static_cast<long>(getpid());
}
__attribute__((noinline)) void tb_entry_func(uint64_t a) { DVM_FUNCTION_ENTRY(a); }

std::shared_ptr<CompiledProgram> compile(const std::string& src) {
  CompileResult r = compile_d(src);
  EXPECT_TRUE(r.program) << r.error;
  return r.program;
}

std::map<std::string, int64_t> rows(Session& s, size_t agg = 0) {
  std::map<std::string, int64_t> out;
  auto aggs = s.aggregations();
  if (agg >= aggs.size()) return out;
  for (auto& r : aggs[agg].rows) {
    std::string k;
    for (auto& ks : r.key_strings) k += (k.empty() ? "" : ",") + ks;
    out[k] = r.values[0];
  }
  return out;
}

TEST(DvmProbes, ListsSitesAndMatchesDescriptions) {
  auto probes = list_probes();
  auto find = [&](const char* prov, const char* func, const char* name) -> const ProbeInfo* {
    for (auto& p : probes)
      if (p.provider == prov && p.function == func && p.name == name) return &p;
    return nullptr;
  };
  const ProbeInfo* hot = find("tbtest", "loop", "hot");
  ASSERT_TRUE(hot);
  EXPECT_EQ(hot->module, "tracebench");
  ASSERT_TRUE(find("syscall", "getpid", "entry"));
  ASSERT_TRUE(find("fbt", "tb_entry_func", "entry"));
  ASSERT_TRUE(find("dtrace", "", "BEGIN"));
  ASSERT_TRUE(find("dtrace", "", "END"));
  EXPECT_TRUE(probe_matches("tbtest:tracebench:loop:hot", *hot));
  EXPECT_TRUE(probe_matches("tbtest:::hot", *hot));
  EXPECT_TRUE(probe_matches("hot", *hot));
  EXPECT_TRUE(probe_matches("loop:hot", *hot));
  EXPECT_TRUE(probe_matches("tb*:::h?t", *hot));
  EXPECT_TRUE(probe_matches(":::", *hot));
  EXPECT_FALSE(probe_matches("tbtest:::other", *hot));
  EXPECT_FALSE(probe_matches("syscall:::", *hot));
  // Ids are unique.
  std::set<uint32_t> ids;
  for (auto& p : probes) EXPECT_TRUE(ids.insert(p.id).second);
}

TEST(DvmSession, CountByKeyExact) {
  Session s;
  ASSERT_TRUE(s.enable(compile("tbtest:::hot { @[arg1] = count(); @total = sum(arg0); }")).ok());
  EXPECT_TRUE(site_enabled(*list_probes().front().site) || true);
  std::map<std::string, int64_t> ref;
  int64_t total = 0;
  for (uint64_t i = 0; i < 10000; i++) {
    fire_hot(i, i % 7);
    ref[std::to_string(i % 7)]++;
    total += static_cast<int64_t>(i);
  }
  fire_other(1);  // not enabled: no effect
  s.disable();
  EXPECT_EQ(rows(s, 0), ref);
  EXPECT_EQ(rows(s, 1), (std::map<std::string, int64_t>{{"", total}}));
  Counters c = s.counters();
  EXPECT_EQ(c.fired, 10000u);
  EXPECT_EQ(c.ecb_fired, 10000u);
  EXPECT_EQ(c.errors, 0u);
  // Disabled again: firing now changes nothing.
  fire_hot(1, 1);
  EXPECT_EQ(s.counters().fired, 10000u);
}

TEST(DvmSession, MinMaxAvgQuantizeAcrossThreadsMerged) {
  Options o;
  o.nslots = 4;
  Session s(o);
  ASSERT_TRUE(s.enable(compile("tbtest:::hot { @mn = min(arg0); @mx = max(arg0); @av = avg(arg0);"
                               " @q = quantize(arg0); @c[tid] = count(); }"))
                  .ok());
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([t] {
      for (uint64_t i = 0; i < 5000; i++) fire_hot(t * 100000 + i, 0);
    });
  for (auto& t : ts) t.join();
  s.disable();
  auto aggs = s.aggregations();
  ASSERT_EQ(aggs.size(), 5u);
  EXPECT_EQ(aggs[0].rows.at(0).values[0], 0);
  EXPECT_EQ(aggs[1].rows.at(0).values[0], 3 * 100000 + 4999);
  // avg: count and sum merged exactly.
  int64_t sum = 0;
  for (int t = 0; t < 4; t++)
    for (int64_t i = 0; i < 5000; i++) sum += t * 100000 + i;
  EXPECT_EQ(aggs[2].rows.at(0).values[0], 20000);
  EXPECT_EQ(aggs[2].rows.at(0).values[1], sum);
  int64_t qtotal = 0;
  for (auto v : aggs[3].rows.at(0).values) qtotal += v;
  EXPECT_EQ(qtotal, 20000);
  EXPECT_EQ(aggs[3].rows.at(0).values[kQuantizeZero], 1);  // only t=0, i=0 is zero
  ASSERT_EQ(aggs[4].rows.size(), 4u);                      // one row per thread id
  for (auto& r : aggs[4].rows) EXPECT_EQ(r.values[0], 5000);
}

// stddev: count, sum and a 128-bit sum of squares, merged across slots with
// the carry; values whose squares overflow 64 bits still give the exact figure.
TEST(DvmSession, StddevMergesAcrossThreadsIn128Bits) {
  Options o;
  o.nslots = 4;
  Session s(o);
  ASSERT_TRUE(s.enable(compile("tbtest:::hot { @big = stddev(arg1); @small[1] = stddev(arg0 % 10); }")).ok());
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([] {
      // +-4e9 alternately: mean 0, every square 1.6e19 > INT64_MAX.
      for (uint64_t i = 0; i < 5000; i++) fire_hot(i, i % 2 ? 4000000000ull : static_cast<uint64_t>(-4000000000ll));
    });
  for (auto& t : ts) t.join();
  s.disable();
  auto aggs = s.aggregations();
  ASSERT_EQ(aggs.size(), 2u);
  const auto& big = aggs[0].rows.at(0).values;
  EXPECT_EQ(big[0], 20000);
  EXPECT_EQ(big[1], 0);
  EXPECT_EQ(agg_stddev(big), 4000000000);
  EXPECT_EQ(agg_stddev(aggs[1].rows.at(0).values), 2);  // 0..9 uniformly: sqrt(8.25), as an integer
  char* text = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&text, &len);
  s.print_aggregations(out);
  std::fclose(out);
  EXPECT_NE(std::string(text, len).find("        4000000000"), std::string::npos) << text;
  std::free(text);
}

TEST(DvmSession, TenEcbsNinePredicatesFalse) {
  std::string src;
  for (int i = 0; i < 9; i++)
    src += "syscall::getpid:entry /arg0 == 12345/ { @no[" + std::to_string(i) + "] = count(); }\n";
  src += "syscall::getpid:entry { @yes = count(); }\n";
  Session s;
  ASSERT_TRUE(s.enable(compile(src)).ok());
  EXPECT_EQ(s.necbs(), 10u);
  for (int i = 0; i < 2000; i++) traced_getpid();
  s.disable();
  auto aggs = s.aggregations();
  EXPECT_TRUE(aggs[0].rows.empty());
  EXPECT_EQ(aggs[1].rows.at(0).values[0], 2000);
  EXPECT_EQ(s.counters().ecb_fired, 2000u);
}

TEST(DvmSession, PrintfRecordsReachTheConsumerInOrder) {
  char* text = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&text, &len);
  {
    Session s;
    ASSERT_TRUE(s.enable(compile("tbtest:::hot /arg0 < 3/ { printf(\"%s:%d:%5x|\", probename, arg0, arg1); }")).ok());
    s.start_consumer(out);
    for (uint64_t i = 0; i < 10; i++) fire_hot(i, 255);
    s.disable();
    EXPECT_EQ(s.records_total(), 3u);
  }
  std::fclose(out);
  EXPECT_STREQ(text, "hot:0:   ff|hot:1:   ff|hot:2:   ff|");
  std::free(text);
}

TEST(DvmSession, TracememPayloadAndConsumerThread) {
  Options o;
  o.switchrate_hz = 200;
  o.bufsize = 64 * 1024;
  Session s(o);
  ASSERT_TRUE(s.enable(compile("tbtest:::payload { tracemem(arg0, 64); }")).ok());
  s.start_consumer(nullptr);
  alignas(8) uint8_t payload[64];
  for (int i = 0; i < 64; i++) payload[i] = static_cast<uint8_t>(i);
  const uint64_t n = 20000;
  for (uint64_t i = 0; i < n; i++) {
    fire_payload(payload, sizeof payload);
    if (i % 1000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  s.disable();
  Counters c = s.counters();
  EXPECT_EQ(c.errors, 0u);
  // Everything fired is either consumed or counted as dropped.
  EXPECT_EQ(s.records_total() + c.drops, n);
  EXPECT_GT(s.records_total(), 0u);
  EXPECT_GT(s.consumer_stats().passes, 1u);
  // A short payload region: tracemem of 64 bytes faults, counted as errors.
  Session s2;
  ASSERT_TRUE(s2.enable(compile("tbtest:::payload { tracemem(arg0, 64); }")).ok());
  fire_payload(payload, 32);
  s2.disable();
  EXPECT_EQ(s2.counters().errors, 1u);
  EXPECT_EQ(s2.counters().faults[kFaultBadAddr], 1u);
  EXPECT_EQ(s2.records_total(), 0u);
}

// aggrate apart from switchrate (DTrace's two options): the consumer reads the
// principal buffers on every pass and snapshots the aggregations only at
// aggrate; the last pass snapshots them whatever the rate, so nothing counted
// is missed.
TEST(DvmSession, AggrateSnapshotsAggregationsApartFromSwitchrate) {
  auto run = [](const char* aggrate, ConsumerStats* stats) {
    Options o;
    EXPECT_TRUE(set_option(&o, "switchrate", "1000hz").ok());
    EXPECT_TRUE(set_option(&o, "aggrate", aggrate).ok());
    Session s(o);
    EXPECT_TRUE(s.enable(compile("tbtest:::hot { @c = count(); }")).ok());
    s.start_consumer(nullptr);
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
    uint64_t n = 0;
    while (std::chrono::steady_clock::now() < end) {
      for (int i = 0; i < 100; i++, n++) fire_hot(n, 0);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    *stats = s.consumer_stats();  // the consumer thread's passes only
    s.disable();
    EXPECT_EQ(rows(s, 0), (std::map<std::string, int64_t>{{"", static_cast<int64_t>(n)}}));
  };
  ConsumerStats slow, fast;
  run("4hz", &slow);
  EXPECT_GE(slow.passes, 20u);
  EXPECT_LE(slow.agg_snapshots, 3u);  // 400 ms at 4 Hz
  run("1000hz", &fast);
  EXPECT_GE(fast.passes, 20u);
  EXPECT_GE(fast.agg_snapshots * 2, fast.passes);
}

// The consumer pins itself where Options::consumer_cpu says, and says why
// not when it cannot (the session still consumes).
TEST(DvmSession, ConsumerPinsItselfOrSaysWhyNot) {
  for (int cpu : {0, CPU_SETSIZE + 5}) {
    Options o;
    o.consumer_cpu = cpu;
    Session s(o);
    ASSERT_TRUE(s.enable(compile("tbtest:::hot { @c = count(); }")).ok());
    s.start_consumer(nullptr);
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(s.consumer_tid(), sizeof set, &set), 0);
    if (cpu == 0) {
      EXPECT_EQ(s.consumer_pin_error(), "");
      EXPECT_EQ(CPU_COUNT(&set), 1);
      EXPECT_TRUE(CPU_ISSET(0, &set));
    } else {
      EXPECT_NE(s.consumer_pin_error().find("CPU " + std::to_string(cpu)), std::string::npos) << s.consumer_pin_error();
    }
    fire_hot(1, 0);
    s.disable();
    EXPECT_EQ(rows(s, 0), (std::map<std::string, int64_t>{{"", 1}}));
  }
}

TEST(DvmSession, StringLiteralsInKeysTraceAndPrintf) {
  char* text = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&text, &len);
  {
    Session s;
    ASSERT_TRUE(s.enable(compile("tbtest:::hot /arg0 < 2/ { @[\"lit\", arg0, probename] = count();"
                                 " printf(\"<%s>\", \"fmt-arg\"); trace(\"traced\"); }"))
                    .ok());
    s.start_consumer(out);
    for (uint64_t i = 0; i < 4; i++) fire_hot(i, 0);
    s.disable();
    EXPECT_EQ(s.counters().errors, 0u);
    EXPECT_EQ(rows(s), (std::map<std::string, int64_t>{{"lit,0,hot", 1}, {"lit,1,hot", 1}}));
  }
  std::fclose(out);
  std::string t(text);
  std::free(text);
  EXPECT_NE(t.find("<fmt-arg>"), std::string::npos) << t;
  EXPECT_NE(t.find("traced"), std::string::npos) << t;
}

TEST(DvmSession, SmallBufferDropsAreCounted) {
  Options o;
  o.bufsize = 4096;
  o.nslots = 1;
  Session s(o);
  ASSERT_TRUE(s.enable(compile("tbtest:::hot { trace(arg0); }")).ok());
  for (uint64_t i = 0; i < 1000; i++) fire_hot(i, 0);
  s.disable();
  // 16-byte records: 256 fit in one half.
  EXPECT_EQ(s.records_total(), 256u);
  EXPECT_EQ(s.counters().drops, 1000u - 256u);
}

TEST(DvmSession, ThreadLocalsArePerThread) {
  Session s;
  ASSERT_TRUE(s.enable(compile("tbtest:::hot /arg1 == 0/ { self->n += arg0; }\n"
                               "tbtest:::hot /arg1 == 1/ { @[tid] = sum(self->n); }"))
                  .ok());
  std::atomic<uint64_t> tids[2];
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; t++)
    ts.emplace_back([t, &tids] {
      tids[t] = static_cast<uint64_t>(gettid());
      for (uint64_t i = 1; i <= 100; i++) fire_hot(i * (t + 1), 0);
      fire_hot(0, 1);
    });
  for (auto& t : ts) t.join();
  s.disable();
  auto r = rows(s);
  EXPECT_EQ(r.at(std::to_string(tids[0])), 5050);
  EXPECT_EQ(r.at(std::to_string(tids[1])), 10100);
}

TEST(DvmSession, RuntimeFaultsAbortOneEcbAndAreCounted) {
  Session s;
  ASSERT_TRUE(s.enable(compile("tbtest:::hot { @a = count(); x = 100 / arg0; @b = count(); }\n"
                               "tbtest:::hot { @c = count(); }"))
                  .ok());
  for (uint64_t i = 0; i < 10; i++) fire_hot(i % 2, 0);  // 5 divisions by zero
  s.disable();
  auto aggs = s.aggregations();
  EXPECT_EQ(aggs[0].rows.at(0).values[0], 10);  // before the fault: kept
  EXPECT_EQ(aggs[1].rows.at(0).values[0], 5);   // after: skipped on faults
  EXPECT_EQ(aggs[2].rows.at(0).values[0], 10);  // next ECB unaffected
  EXPECT_EQ(s.counters().errors, 5u);
  EXPECT_EQ(s.counters().faults[kFaultDivZero], 5u);
}

TEST(DvmSession, BeginEndAndFunctionEntryAndStrings) {
  char* text = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&text, &len);
  {
    Session s;
    ASSERT_TRUE(s.enable(compile("BEGIN { printf(\"begin\\n\"); }\n"
                                 "fbt::tb_entry*:entry { @[probefunc, strjoin(probeprov, \"!\")] = sum(arg0); }\n"
                                 "END { printf(\"end\\n\"); }"))
                    .ok());
    s.start_consumer(out);
    for (uint64_t i = 0; i < 10; i++) tb_entry_func(i);
    s.disable();
    auto r = rows(s);
    EXPECT_EQ(r, (std::map<std::string, int64_t>{{"tb_entry_func,fbt!", 45}}));
  }
  std::fclose(out);
  EXPECT_STREQ(text, "begin\nend\n");
  std::free(text);
}

TEST(DvmSession, ProfileProviderFires) {
  Session s;
  ASSERT_TRUE(s.enable(compile("profile:::profile-997 { @ = count(); @pc[arg0 != 0] = count(); }")).ok());
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  volatile uint64_t spin = 0;
  while (std::chrono::steady_clock::now() < end) spin = spin + 1;
  s.disable();
  auto aggs = s.aggregations();
  ASSERT_FALSE(aggs[0].rows.empty());
  int64_t n = aggs[0].rows[0].values[0];
  // ~300 samples at 997 Hz; the timer is CPU-time independent but the host is busy.
  EXPECT_GT(n, 20);
  EXPECT_LT(n, 600);
  EXPECT_EQ(rows(s, 1).at("1"), n);  // every sample saw an interrupted pc
}

TEST(DvmSession, BadInputChangesNothing) {
  Session s;
  Error e = s.enable(compile("nosuch:::probe { @ = count(); }"));
  EXPECT_FALSE(e.ok());
  EXPECT_NE(e.message.find("does not match any probes"), std::string::npos) << e.message;
  Options o;
  o.allow_zero_probes = true;
  Session z(o);
  EXPECT_TRUE(z.enable(compile("nosuch:::probe { @ = count(); }")).ok());
  // A probe can only belong to one session at a time.
  Session a, b;
  ASSERT_TRUE(a.enable(compile("tbtest:::other { @ = count(); }")).ok());
  Error eb = b.enable(compile("tbtest:::other { @ = count(); }"));
  EXPECT_FALSE(eb.ok());
  EXPECT_NE(eb.message.find("already enabled"), std::string::npos);
  a.disable();
  Options bad;
  EXPECT_FALSE(set_option(&bad, "bufsize", "12q").ok());
  EXPECT_FALSE(set_option(&bad, "nosuch", "1").ok());
  EXPECT_TRUE(set_option(&bad, "bufsize", "64k").ok());
  EXPECT_EQ(bad.bufsize, 64u * 1024);
  EXPECT_TRUE(set_option(&bad, "switchrate", "10hz").ok());
  EXPECT_EQ(bad.switchrate_hz, 10.0);
  EXPECT_TRUE(set_option(&bad, "aggrate", "2hz").ok());
  EXPECT_EQ(bad.aggrate_hz, 2.0);
  EXPECT_EQ(bad.switchrate_hz, 10.0);  // a rate of its own
  const Error zero = set_option(&bad, "aggrate", "0hz");
  EXPECT_NE(zero.message.find("aggrate=0hz"), std::string::npos) << zero.message;
  // How the kernel home attaches syscall probes: two words, and a choice
  // the user-space home refuses instead of ignoring.
  EXPECT_TRUE(set_option(&bad, "syscallprobe", "kprobe").ok());
  EXPECT_TRUE(bad.syscall_kprobe);
  EXPECT_TRUE(set_option(&bad, "syscallprobe", "tracepoint").ok());
  EXPECT_FALSE(bad.syscall_kprobe);
  const Error word = set_option(&bad, "syscallprobe", "fprobe");
  EXPECT_NE(word.message.find("expected tracepoint or kprobe"), std::string::npos) << word.message;
  Options kp;
  kp.syscall_kprobe = true;
  Session user(kp);
  const Error home = user.enable(compile("tbtest:::other { @ = count(); }"));
  EXPECT_NE(home.message.find("option syscallprobe chooses how the kernel home"), std::string::npos) << home.message;
}

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof set, &set), 0);
}

// The consumer is not pinned: it can preempt a firing thread that holds its
// slot's lock on the same CPU.  Its buffer switch must then let the holder
// run, not spin out its time slice (that made the consumer cost ~5M cycles
// per pass, 237 cycles per record, in a record-heavy hot loop).
TEST(DvmSession, ConsumerYieldsToALockHolderOnItsCpu) {
  Options o;
  o.nslots = 1;
  Session s(o);
  ASSERT_TRUE(s.enable(compile("tbtest:::hot { trace(arg0); }")).ok());
  const int cpu = sched_getcpu();
  cpu_set_t was;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof was, &was), 0);
  std::atomic<int> phase{0};
  constexpr double kHoldMs = 40;
  std::thread holder([&] {
    pin_to(cpu);
    s.state()->slots[0].lock->lock();  // a firing that holds the lock
    phase = 1;
    const double t0 = thread_cpu_ms();
    while (thread_cpu_ms() - t0 < kHoldMs) {}
    s.state()->slots[0].lock->unlock();
  });
  pin_to(cpu);
  while (phase.load() == 0) sched_yield();
  const double c0 = thread_cpu_ms();
  s.consume_once();
  const double spent = thread_cpu_ms() - c0;
  holder.join();
  pthread_setaffinity_np(pthread_self(), sizeof was, &was);
  s.disable();
  // Spinning, the consumer takes about half the CPU while the holder needs
  // its 40 ms: ~40 ms.  Yielding, a few short spins between yields.
  EXPECT_LT(spent, kHoldMs / 4) << "the consumer spun on a lock whose holder it had preempted";
}

TEST(DvmSession, ProbePathDoesNotAllocate) {
#ifdef TBDVM_ASAN
  GTEST_SKIP() << "the malloc-counting hook cannot coexist with AddressSanitizer's malloc";
#endif
  Session s;
  ASSERT_TRUE(s.enable(compile("tbtest:::hot /arg0 != 3/ { @[arg1] = count(); @s = sum(arg0); self->x = arg0;"
                               " this->y = arg0 * 2; k[arg1] = this->y; trace(arg0); }"))
                  .ok());
  fire_hot(0, 0);  // first firing on this thread (thread setup is not the probe path)
  g_mallocs = 0;
  g_count_mallocs = true;
  for (uint64_t i = 0; i < 10000; i++) fire_hot(i, i % 16);
  g_count_mallocs = false;
  EXPECT_EQ(g_mallocs.load(), 0);
  s.disable();
  EXPECT_EQ(s.counters().errors, 0u);
  // The hook itself works: an allocation is seen.
  g_mallocs = 0;
  g_count_mallocs = true;
  void* volatile p = std::malloc(32);
  g_count_mallocs = false;
  std::free(p);
  EXPECT_EQ(g_mallocs.load(), 1);
}

// Output of a session's consumer passes.
struct Captured {
  char* text = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&text, &len);
  std::string str() {
    std::fflush(f);
    return std::string(text, len);
  }
  ~Captured() {
    std::fclose(f);
    std::free(text);
  }
};

// printa (default and formatted), normalize/denormalize, trunc(@a, n),
// clear and trunc(@a) act when the consumer reads their record; printa'd
// aggregations are not printed again at the end.
TEST(DvmSession, PrintaClearTruncNormalize) {
  Session s;
  Captured out;
  s.set_output(out.f);
  ASSERT_TRUE(
      s.enable(
           compile("tbtest:::hot { @c[arg0] = count(); @m = max(arg1); }\n"
                   "tbtest:::other /arg0 == 1/ { printa(\"k=%d n=%@d\\n\", @c); normalize(@c, 10); printa(@c);"
                   "  denormalize(@c); trunc(@c, 2); clear(@m); printf(\"--\\n\"); }\n"
                   "tbtest:::other /arg0 == 2/ { printa(\"%d:%@d \", @c); printa(\"max %@d\\n\", @m); trunc(@c); }\n"
                   "tbtest:::other /arg0 == 3/ { printa(\"%d:%@d \", @c); printf(\"end\\n\"); }\n"))
          .ok());
  for (uint64_t k = 0; k < 4; k++)
    for (uint64_t i = 0; i < (k + 1) * 10; i++) fire_hot(k, 1000 + k);
  fire_other(1);
  s.consume_once();
  EXPECT_EQ(out.str(),
            "k=0 n=10\nk=1 n=20\nk=2 n=30\nk=3 n=40\n"
            "\n                 0                 1\n                 1                 2\n"
            "                 2                 3\n                 3                 4\n--\n");
  // Keys 2 and 3 stayed; key 0 comes back from zero; max restarts after clear.
  fire_hot(0, 5);
  fire_hot(2, 7);
  fire_other(2);
  s.consume_once();
  fire_hot(1, 9);
  fire_other(3);
  s.disable();
  s.print_aggregations(out.f);
  const std::string all = out.str();
  EXPECT_NE(all.find("--\n0:1 2:31 3:40 max 7\n"), std::string::npos) << all;
  EXPECT_NE(all.find("max 7\n1:1 end\n"), std::string::npos) << all;  // trunc(@c) left only the new key 1
  EXPECT_EQ(all.find("@c"), std::string::npos) << all;                // printa'd: not printed again
  EXPECT_EQ(all.substr(all.find("end\n") + 4), "") << all;            // nor @m
}

// With no output (an adapter that only counts), clear and trunc still act.
TEST(DvmSession, ClearAndTruncActWithoutAnOutput) {
  Session s;
  ASSERT_TRUE(s.enable(compile("tbtest:::hot { @c[arg0] = count(); @s = sum(arg1); }\n"
                               "tbtest:::other { trunc(@c, 1); clear(@s); }"))
                  .ok());
  for (uint64_t k = 0; k < 3; k++)
    for (uint64_t i = 0; i <= k; i++) fire_hot(k, 10);
  fire_other(0);
  s.consume_once();
  fire_hot(0, 7);
  s.disable();
  EXPECT_EQ(rows(s, 0), (std::map<std::string, int64_t>{{"0", 1}, {"2", 3}}));
  EXPECT_EQ(rows(s, 1), (std::map<std::string, int64_t>{{"", 7}}));
}

// llquantize: log-linear buckets as dtrace draws them (factor 10, orders 0..2,
// 20 steps per order; an order's step is never below 1).
TEST(DvmSession, LlquantizeBuckets) {
  const int64_t lh = llquantize_limit(0, 2);
  const std::pair<int64_t, uint32_t> cases[] = {{-5, 0},   {0, 0},    {1, 1},     {9, 9},         {10, 10},
                                                {14, 10},  {15, 11},  {99, 27},   {100, 28},      {149, 28},
                                                {150, 29}, {999, 45}, {1000, 46}, {INT64_MAX, 46}};
  for (auto [v, b] : cases) EXPECT_EQ(llquantize_bucket(10, lh, 20, v), b) << v;
  EXPECT_EQ(agg_nvals(kAggLlquantize, 10, lh, 20), 47u);
  EXPECT_EQ(llquantize_bucket_min(10, lh, 20, 1), 1);
  EXPECT_EQ(llquantize_bucket_min(10, lh, 20, 11), 15);
  EXPECT_EQ(llquantize_bucket_min(10, lh, 20, 28), 100);
  EXPECT_EQ(llquantize_bucket_min(10, lh, 20, 46), 1000);
  // Every value lands in the bucket whose range holds it.
  for (int64_t v = 1; v < 1000; v++) {
    const uint32_t b = llquantize_bucket(10, lh, 20, v);
    EXPECT_LE(llquantize_bucket_min(10, lh, 20, b), v);
    EXPECT_GT(llquantize_bucket_min(10, lh, 20, b + 1), v);
  }
  // Steps that divide a power of the factor but not every order (factor 10,
  // 50 steps: 10 in [1, 10), 45 in [10, 100), 45 of width 20 in [100, 1000)),
  // as dtrace lays them out; dtrace refuses 30 steps (no power of 10 is a
  // multiple of 30), and so does the VM: no buckets.
  const int64_t lh3 = llquantize_limit(0, 3);
  const uint32_t n50 = agg_nvals(kAggLlquantize, 10, lh3, 50);
  EXPECT_EQ(n50, 1u + 9 + 45 + 45 + 45 + 1);
  for (int64_t v = 1; v < 12000; v++) {
    const uint32_t b = llquantize_bucket(10, lh3, 50, v);
    ASSERT_LE(llquantize_bucket_min(10, lh3, 50, b), v) << v;
    if (b + 1 < n50) { ASSERT_GT(llquantize_bucket_min(10, lh3, 50, b + 1), v) << v; }
  }
  EXPECT_EQ(llquantize_bucket(10, lh3, 50, 120), 1u + 9 + 45 + 1);  // [120, 140): the second step of 100..999
  EXPECT_EQ(agg_nvals(kAggLlquantize, 10, lh3, 30), 0u);
  EXPECT_EQ(llquantize_bucket(10, lh3, 30, 5), 0u);
  Session s;
  Captured out;
  s.set_output(out.f);
  ASSERT_TRUE(s.enable(compile("tbtest:::hot { @q = llquantize(arg0, 10, 0, 2, 20); }")).ok());
  for (uint64_t i = 0; i < 1100; i++) fire_hot(i, 0);
  s.disable();
  auto aggs = s.aggregations();
  const auto& v = aggs.at(0).rows.at(0).values;
  ASSERT_EQ(v.size(), 47u);
  EXPECT_EQ(v[0], 1);     // 0
  EXPECT_EQ(v[5], 1);     // 5
  EXPECT_EQ(v[12], 5);    // 20..24
  EXPECT_EQ(v[30], 50);   // 200..249
  EXPECT_EQ(v[46], 100);  // 1000..1099
  s.print_aggregations(out.f);
  const std::string text = out.str();
  EXPECT_NE(text.find("             < 1 |"), std::string::npos) << text;
  EXPECT_NE(text.find("             150 |@                                        50\n"), std::string::npos) << text;
  EXPECT_NE(text.find("         >= 1000 |@@@                                      100\n"), std::string::npos) << text;
}

// A fault leaves an error record the consumer reports as dtrace does (ECB,
// probe, fault, address, action and DIF offset) and fires dtrace:::ERROR
// with the same facts; a fault inside an ERROR clause is only counted; the
// firing's later ECBs still run.
TEST(DvmSession, FaultsAreReportedAndFireError) {
  Session s;
  Captured out, err;
  s.set_output(out.f);
  s.set_error_output(err.f);
  auto prog = compile(
      "tbtest:::hot /arg0 == 3/ { x = *(arg0 * 16); }\n"
      "tbtest:::hot /arg0 == 4/ { @ok = count(); trace(arg1 / (arg0 - 4)); }\n"
      "dtrace:::ERROR { @e[arg1, arg2, arg3, arg4, arg5] = count(); }\n"
      "dtrace:::ERROR { trace(arg1 / (arg1 - arg1)); }\n"
      "tbtest:::hot { @n = count(); }\n");
  ASSERT_TRUE(prog);
  // The DIF offsets of the faulting loads/divisions.
  auto first = [](const DifObject& d, uint8_t op) {
    for (size_t i = 0; i < d.insns.size(); i++)
      if (d.insns[i].op == op) return static_cast<int64_t>(i);
    return int64_t{-1};
  };
  const int64_t ld = first(*prog->clauses[0].actions[0].value, kOpLdx);
  const int64_t div = first(*prog->clauses[1].actions[1].value, kOpSdiv);
  ASSERT_GE(ld, 0);
  ASSERT_GE(div, 0);
  ASSERT_TRUE(s.enable(prog).ok());
  for (uint64_t i = 0; i < 10; i++) fire_hot(i, 100);
  s.disable();
  const Counters c = s.counters();
  EXPECT_EQ(c.errors, 4u);  // two in the probes' clauses, one in each ERROR firing's second clause
  EXPECT_EQ(c.faults[kFaultBadAddr], 1u);
  EXPECT_EQ(c.faults[kFaultDivZero], 3u);
  EXPECT_EQ(s.consumer_stats().error_records, 4u);
  auto aggs = s.aggregations();
  std::map<std::vector<int64_t>, int64_t> e;
  for (auto& r : aggs.at(1).rows) e[r.key_ints] = r.values[0];  // @ok, @e, @n
  const std::map<std::vector<int64_t>, int64_t> want = {{{1, 1, ld, kFaultBadAddr, 48}, 1},
                                                        {{2, 2, div, kFaultDivZero, 0}, 1}};
  EXPECT_EQ(e, want);
  EXPECT_EQ(aggs.at(2).rows.at(0).values[0], 10);  // @n: after the faulting ECBs, every firing
  const std::string text = err.str();
  EXPECT_NE(text.find("dtrace: error on enabled probe ID 1 (ID "), std::string::npos) << text;
  EXPECT_NE(text.find("tbtest:tracebench:loop:hot): invalid address (0x30) in action #1 at DIF offset " +
                      std::to_string(ld) + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("division by zero in action #2 at DIF offset " + std::to_string(div) + "\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("(ID "), std::string::npos);
  EXPECT_NE(text.find("dtrace:::ERROR): division by zero in action #1"), std::string::npos) << text;
}

}  // namespace
}  // namespace tbdvm
