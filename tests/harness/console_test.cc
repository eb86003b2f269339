// The console: the summary's notes split into warnings and information, a
// legend; the sweep rules; "did you mean".
#include <gtest/gtest.h>

#include "tracebench/notes.h"
#include "tracebench/report.h"
#include "tracebench/suggest.h"
#include "tracebench/sweep.h"

namespace tracebench {
namespace {

RunResult one_benchmark(std::vector<std::string> notes, std::uint64_t fired = 1000, std::uint64_t lost = 0) {
  BenchmarkResult b;
  b.name = "ebpf/getpid/count/payload:0/threads:1";
  b.baseline.ns.n = b.traced.ns.n = 10;
  b.baseline.ns.p50 = 100;
  b.traced.ns.p50 = 230;
  b.overhead_ns = MedianCI{130, 128, 132, 0.97, 6};
  b.events.fired = fired;
  b.events.lost = lost;
  b.events.verification = "passed";
  b.warnings = std::move(notes);
  RunResult r;
  r.benchmarks.push_back(b);
  return r;
}

TEST(Console, InformationOnlyWithVerboseWarningsAlwaysAndALegend) {
  const std::string info = "batch capped at 40 events so a traced block stays near 50 ms: ...";
  const std::string stop = "repetitions stopped after 6 of at most 10: ...";
  const std::string warn = "25% of the traced samples excluded (0 migrated CPU, 74 hit by an interrupt)";
  EXPECT_TRUE(note_is_information(info));
  EXPECT_TRUE(note_is_information(stop));
  EXPECT_FALSE(note_is_information(warn));
  RunResult r = one_benchmark({info, warn, stop});
  const std::string quiet = summary_table(r);
  EXPECT_EQ(quiet.find("batch capped"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("  ! 25% of the traced samples excluded"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("2 information note(s) not shown (-v shows them"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("overhead = traced - base"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("1 benchmark(s) carry warnings"), std::string::npos) << quiet;
  const std::string verbose = summary_table(r, true);
  EXPECT_NE(verbose.find("  i batch capped at 40"), std::string::npos) << verbose;
  EXPECT_NE(verbose.find("  i repetitions stopped"), std::string::npos) << verbose;
  EXPECT_NE(verbose.find("i = information"), std::string::npos) << verbose;
}

TEST(Console, WhatStoppedTheRepetitionsRoundTripsThroughResultJson) {
  RunResult r = one_benchmark({});
  r.benchmarks[0].repetitions = 7;
  r.benchmarks[0].repetitions_stop = RepetitionStop{"interval", 2.5, 1.25, 10};
  nlohmann::json j = r;
  const auto& e = j["benchmarks"][0]["repetitions_stop"];
  EXPECT_EQ(e["rule"], "interval");
  EXPECT_EQ(e["cap"], 10);
  RunResult back = j.get<RunResult>();
  ASSERT_TRUE(back.benchmarks[0].repetitions_stop);
  EXPECT_EQ(back.benchmarks[0].repetitions_stop->rule, "interval");
  EXPECT_DOUBLE_EQ(back.benchmarks[0].repetitions_stop->target_cycles, 2.5);
  EXPECT_DOUBLE_EQ(back.benchmarks[0].repetitions_stop->half_width_cycles, 1.25);
  // Results written before it have none, and read back without one.
  j["benchmarks"][0].erase("repetitions_stop");
  EXPECT_FALSE(j.get<RunResult>().benchmarks[0].repetitions_stop);
}

TEST(Console, LostEventsAreAWarning) {
  const std::string t = summary_table(one_benchmark({}, 1000, 100));
  EXPECT_NE(t.find("  ! 10% of the events were lost"), std::string::npos) << t;
  EXPECT_EQ(summary_table(one_benchmark({}, 1000, 10)).find("were lost"), std::string::npos);
}

// The base and traced columns are taken as the overhead is, over the
// repetitions the figure keeps: a run whose first repetitions were left out
// (a level shift, LTTng's cold buffer) no longer prints base 0.4, traced
// 202.2 and overhead 243.5, whose columns do not add up.
TEST(Console, BaseAndTracedAddUpToTheOverhead) {
  RunResult r = one_benchmark({});
  r.context.tsc_hz = 2e9;  // 2 cycles per ns
  BenchmarkResult& b = r.benchmarks[0];
  b.baseline.ns.p50 = 0.4;  // all samples, the cold repetitions too
  b.traced.ns.p50 = 202.2;
  b.baseline.repetition_medians = {0.8, 1.0, 0.9};  // the kept ones, cycles
  b.traced.repetition_medians = {488.0, 490.0, 489.0};
  b.overhead_ns = MedianCI{243.5, 240, 247, 0.97, 3};
  const std::string t = summary_table(r);
  EXPECT_NE(t.find("          0.5        244.5        243.5"), std::string::npos) << t;
  // A result without repetition medians shows its samples' medians.
  EXPECT_NE(summary_table(one_benchmark({})).find("        100.0        230.0        130.0"), std::string::npos);
}

// The warning names the options that size the tracer's buffer, from its
// schema; a tracer without one is sent to its README.
TEST(Console, LostEventsNameTheTracersBufferOptions) {
  RunResult r = one_benchmark({}, 1000, 100);
  r.benchmarks[0].tracer = "ebpf";
  std::string t = summary_table(r);
  EXPECT_NE(t.find("bigger buffers (-o ebpf.buffer_kb=...)"), std::string::npos) << t;
  r.benchmarks[0].tracer = "lttng";
  t = summary_table(r);
  EXPECT_NE(t.find("(-o lttng.subbuf_size=... and -o lttng.num_subbuf=...)"), std::string::npos) << t;
  r.benchmarks[0].tracer = "none";
  t = summary_table(r);
  EXPECT_NE(t.find("bigger buffers (its README)"), std::string::npos) << t;
}

TEST(Sweep, RunsWhatAppliesAndListsTheRestOrRefusesWhenNothingDoes) {
  Plan plan;
  plan.specs.push_back(BenchSpec{"lttng", "ust_array64", "record", 64, 1});
  ASSERT_TRUE(
      settle_sweep({"lttng/ust_array64/record/payload:0: ust_array64 carries exactly 64 bytes"}, &plan).is_ok());
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].first, "lttng/ust_array64/record/payload:0");
  EXPECT_EQ(plan.skipped[0].second, "ust_array64 carries exactly 64 bytes");
  Plan empty;
  Status s = settle_sweep({"b: two", "a: one"}, &empty);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("nothing to run: none of the 2 planned combination(s) applies:\n  a: one\n  b: two"),
            std::string::npos)
      << s.message();
}

TEST(Sweep, QuickSuiteRunsOnePayloadWhereTheTracerOnlyCounts) {
  const std::vector<std::size_t> sweep = {0, 64, 1024};
  EXPECT_EQ(quick_payloads("count", ProbeKind::kSyscall, sweep), std::vector<std::size_t>{0});
  EXPECT_EQ(quick_payloads("none", ProbeKind::kUserFunction, sweep), std::vector<std::size_t>{0});
  EXPECT_EQ(quick_payloads("count", ProbeKind::kMarker, sweep), sweep);  // the marker write copies the payload
  EXPECT_EQ(quick_payloads("record", ProbeKind::kUstTracepoint, sweep), sweep);
  EXPECT_EQ(quick_payloads("ringbuf", ProbeKind::kSyscall, sweep), sweep);
}

TEST(Suggest, NearestNamesFirstAndNothingWhenNoneIsClose) {
  const std::vector<std::string> known = {"ebpf/getpid/count/payload:0/threads:1",
                                          "ftrace/getpid/count/payload:0/threads:1",
                                          "none/getpid/none/payload:0/threads:1"};
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  auto near = closest_names("ebpf/getpid/count/payload:0/threads:2", known);
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near[0], "ebpf/getpid/count/payload:0/threads:1");
  near = closest_names("ftrace/getpid", known);  // a prefix: contained
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near[0], "ftrace/getpid/count/payload:0/threads:1");
  EXPECT_TRUE(closest_names("lttng/ust_hot/record", known).empty());
}

// A mistyped tracer, workload or option key is answered with the near
// names: two letters swapped count as one edit.
TEST(Suggest, AMistypedTracerWorkloadOrOptionSaysWhatWasMeant) {
  EXPECT_EQ(edit_distance("ebfp", "ebpf"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_NE(unknown_tracer_message("ebfp").find("did you mean: ebpf?"), std::string::npos)
      << unknown_tracer_message("ebfp");
  EXPECT_NE(unknown_workload_message("getpdi").find("did you mean: getpid"), std::string::npos)
      << unknown_workload_message("getpdi");
  EXPECT_EQ(unknown_tracer_message("zzzzz"), "unknown tracer 'zzzzz' (see `tracebench list`)");
  EXPECT_EQ(did_you_mean("atach", {"attach", "wakeup"}), "; did you mean: attach?");
  EXPECT_EQ(did_you_mean("zzz", {"attach", "wakeup"}), "");
}

}  // namespace
}  // namespace tracebench
