// `tracebench model suite`'s runs for the registered tracers: each tracer's
// scenarios and knobs come from its own description (Tracer::model()), so
// these tests link every tracer (tracebench::all).
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tracebench/model.h"

namespace tracebench::model {
namespace {

TEST(ModelSuite, RunsMeasureWhatTheScenariosNeed) {
  auto sc = suite_scenarios("ebpf");
  ASSERT_EQ(sc.size(), 5u);
  auto runs = suite_runs("ebpf", sc, true);
  auto count = [&](const std::vector<std::string>& r) { return std::count(runs.begin(), runs.end(), r); };
  const std::vector<std::string> sys = {"run", "-t", "ebpf", "-w", "getpid", "-a", "count", "-p", "0", "--quick"};
  EXPECT_EQ(count(sys), 2);  // sys and sys10 share it; two consumer figures
  for (int n : {2, 4, 10})
    for (const char* truth : {"true", "false"}) {
      std::vector<std::string> r = {"run",
                                    "-t",
                                    "ebpf",
                                    "-w",
                                    "getpid",
                                    "-a",
                                    "count",
                                    "-p",
                                    "0",
                                    "-o",
                                    fmt::format("ebpf.ecbs={}", n),
                                    "-o",
                                    fmt::format("ebpf.extra_predicate={}", truth),
                                    "--quick"};
      // The scenario's own handlers with failing predicates three times.
      EXPECT_EQ(count(r), n == 10 && std::string(truth) == "false" ? 3 : 1) << fmt::format("{}", fmt::join(r, " "));
    }
  const std::vector<std::string> payload = {"run", "-t", "ebpf", "-w", "write_null", "-a", "ringbuf", "-p",
                                            "0",   "-p", "64",   "-p", "256",        "-p", "1024",    "--quick"};
  EXPECT_EQ(count(payload), 2);
  // The payload sweep again with the reader woken on few records (the
  // probe's and the consumer's per-wakeup terms).
  std::vector<std::string> few = payload;
  few.insert(few.end() - 1, {"-o", "ebpf.wakeup=no_wakeup", "-o", "ebpf.poll_ms=2"});
  EXPECT_EQ(count(few), 1);
  // The payload scenario after an idle gap (idle_start, the consumer's idle
  // wakeup), at three sizes; the counting scenarios twice at payload 0 (their
  // paced bursts' first events: idle_start), sys and sys10 sharing theirs;
  // the profile scenario none (its events are its timer's firings).
  EXPECT_EQ(count({"run", "-t", "ebpf", "-w", "write_null", "-a", "ringbuf", "-p", "0", "-p", "256", "-p", "1024",
                   "--gap-us", "1000", "--quick"}),
            1);
  for (const char* w : {"getpid", "call"})
    EXPECT_EQ(count({"run", "-t", "ebpf", "-w", w, "-a", "count", "-p", "0", "--gap-us", "1000", "--quick"}), 2) << w;
  for (const auto& r : runs) {
    if (std::count(r.begin(), r.end(), "--gap-us")) { EXPECT_NE(r[4], "spin") << fmt::format("{}", fmt::join(r, " ")); }
  }
  // The profile scenario: the spin workload, its events the timer's firings.
  EXPECT_EQ(sc[4].workload, "spin");
  EXPECT_EQ(count({"run", "-t", "ebpf", "-w", "spin", "-a", "count", "-p", "0", "--quick"}), 2);
  // sys, the sweep, pid, payload, payload with few wakeups, payload after a
  // gap, profile; sys, pid, payload and profile with 10 samples per block
  // (the consumer's cost per enable/disable cycle), sys10 sharing sys's;
  // sys's and payload's action beside the empty program (the Table 4
  // analog), both with the kernel's run stats that program needs; and sys
  // and pid after a gap, twice each.
  EXPECT_EQ(runs.size(), 2u + 8u + 2u + 2u + 1u + 1u + 2u + 4u + 2u + 4u);
  EXPECT_EQ(count({"run", "-t", "ebpf", "-w", "getpid", "-a", "empty", "-a", "count", "-p", "0", "-o", "ebpf.stats=on",
                   "--quick"}),
            1);
  EXPECT_EQ(count({"run", "-t", "ebpf", "-w", "write_null", "-a", "empty", "-a", "ringbuf", "-p", "0", "-o",
                   "ebpf.stats=on", "--quick"}),
            1);
  for (const char* t : {"ftrace", "perf", "lttng"})
    for (const auto& r : suite_runs(t, suite_scenarios(t), true))
      EXPECT_EQ(std::count(r.begin(), r.end(), "empty"), 0) << t << " has no empty handler";
  int dvm_empty = 0;
  for (const auto& r : suite_runs("dvm", suite_scenarios("dvm"), true))
    dvm_empty += std::count(r.begin(), r.end(), "empty");
  EXPECT_EQ(dvm_empty, 2) << "sys (dvm_getpid) and payload (dvm_hot)";
  EXPECT_EQ(count({"run", "-t", "ebpf", "-w", "write_null", "-a", "ringbuf", "-p", "256", "-n", "10", "--quick"}), 1);
  EXPECT_EQ(count({"run", "-t", "ebpf", "-w", "getpid", "-a", "count", "-p", "0", "-n", "10", "--quick"}), 1);
  for (const auto& r : suite_runs("ebpf", sc, false)) EXPECT_EQ(std::count(r.begin(), r.end(), "--quick"), 0);
  EXPECT_EQ(sc[1].option_args("ebpf"),
            (std::vector<std::string>{"-o", "ebpf.ecbs=10", "-o", "ebpf.extra_predicate=false"}));
  EXPECT_TRUE(sc[0].option_args("ebpf").empty());
  EXPECT_TRUE(suite_scenarios("none").empty());
  for (const char* t : {"dvm", "ebpf", "ftrace", "perf", "lttng", "kprobes", "lttng_kernel", "dvm_kernel"})
    EXPECT_FALSE(suite_scenarios(t).empty()) << t;
  // The D-VM's runs (sys, pid, the payload sweep) also run at another
  // consumer rate (its per-wakeup term), in the module a lower one; no other
  // tracer gets that option.
  int dvm_rate = 0, kernel_rate = 0;
  for (const auto& r : suite_runs("dvm", suite_scenarios("dvm"), true))
    dvm_rate += std::count(r.begin(), r.end(), "dvm.switchrate=5000hz");
  EXPECT_EQ(dvm_rate, 3);
  int kprobe_runs = 0;
  for (const auto& r : suite_runs("dvm_kernel", suite_scenarios("dvm_kernel"), true)) {
    kernel_rate += std::count(r.begin(), r.end(), "dvm_kernel.switchrate=100hz");
    kprobe_runs += std::count(r.begin(), r.end(), "dvm_kernel.syscallprobe=kprobe");
  }
  EXPECT_EQ(kernel_rate, 4) << "sys, sys_kprobe (its own configuration), pid, payload";
  EXPECT_EQ(kprobe_runs, 8)
      << "sys_kprobe's count twice, with -n 10, at the other consumer rate, after a gap twice and twice with -n 10";
  // Their counting scenarios also run after an idle gap, twice as they are and
  // twice with 10 samples per block: what a consumer pass costs while the firing CPU
  // idles, told from what an enable cycle costs (sys10 shares sys's).
  auto gap_counts = [](const char* tracer) {
    int n = 0;
    for (const auto& r : suite_runs(tracer, suite_scenarios(tracer), true))
      n += std::count(r.begin(), r.end(), "--gap-us") && std::count(r.begin(), r.end(), "count");
    return n;
  };
  EXPECT_EQ(gap_counts("dvm"), 8) << "sys and pid";
  EXPECT_EQ(gap_counts("dvm_kernel"), 12) << "sys, sys_kprobe and pid";
  EXPECT_EQ(gap_counts("ebpf"), 4) << "sys and pid, twice each: their bursts' first events (idle_start)";
  for (const auto& r : suite_runs("ebpf", sc, true))
    EXPECT_EQ(std::count(r.begin(), r.end(), "dvm.switchrate=5000hz"), 0);
}

// ftrace reads its buffer only between validation segments: the payload
// scenario gets a buffer that holds a segment's records, in its measurement
// runs and its validation alike (one model entry); nothing else changes.
TEST(ModelSuite, FtracePayloadBufferHoldsASegment) {
  auto sized = [](double segment_seconds) {
    auto sc = suite_scenarios("ftrace");
    size_buffers("ftrace", segment_seconds, &sc);
    return sc;
  };
  auto quick = sized(0.25);  // 2 s: 20 kHz x 0.25 s x 1088 B x 2 = 10.6 MiB
  const SuiteScenario* payload = nullptr;
  for (const auto& s : quick) {
    if (s.name == "payload") {
      payload = &s;
    } else {
      EXPECT_TRUE(s.options.empty()) << s.name;
    }
  }
  ASSERT_NE(payload, nullptr);
  EXPECT_EQ(payload->options, std::vector<std::string>{"ftrace.buffer_kb=16384"});
  EXPECT_EQ(payload->option_args("ftrace"), (std::vector<std::string>{"-o", "ftrace.buffer_kb=16384"}));
  for (const auto& s : sized(30.0 / 8)) {
    if (s.name == "payload") { EXPECT_EQ(s.options, std::vector<std::string>{"ftrace.buffer_kb=262144"}); }
  }
  for (const auto& s : sized(600.0 / 8)) {
    if (s.name == "payload") { EXPECT_EQ(s.options, std::vector<std::string>{"ftrace.buffer_kb=1048576"}) << "capped"; }
  }
  // Every measurement of the scenario carries it; the other scenarios' do not.
  int with = 0;
  for (const auto& r : suite_runs("ftrace", quick, true)) {
    const bool marker = std::find(r.begin(), r.end(), "marker") != r.end();
    const bool has = std::find(r.begin(), r.end(), "ftrace.buffer_kb=16384") != r.end();
    EXPECT_EQ(marker, has) << fmt::format("{}", fmt::join(r, " "));
    with += has;
  }
  EXPECT_EQ(with, 4);  // the payload sweep, twice, its size with 10 samples per block, and after an idle gap
  // The other tracers read while the workload fires: untouched.
  for (const char* t : {"ebpf", "lttng", "dvm", "perf"}) {
    auto sc = suite_scenarios(t);
    size_buffers(t, 3.75, &sc);
    for (const auto& s : sc) EXPECT_TRUE(s.options.empty()) << t << " " << s.name;
  }
}

}  // namespace
}  // namespace tracebench::model
