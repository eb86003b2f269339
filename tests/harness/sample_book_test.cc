// No code path turns an empty or excluded sample set into a printed number.
#include "tracebench/report.h"
#include "tracebench/sample_book.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tracebench/clock_check.h"
#include "tracebench/results.h"
#include "tracebench/runner.h"

namespace tracebench {
namespace {

constexpr double kHz = 2e9;
constexpr double kGap = 2000;  // 1 us at 2 GHz

TimedBlock block(double value, std::size_t n, std::size_t migrated_first = 0) {
  TimedBlock b;
  for (std::size_t i = 0; i < n; ++i) {
    b.per_event.push_back(value + static_cast<double>(i % 7));
    b.migrated.push_back(i < migrated_first ? 1 : 0);
  }
  b.events = n;
  return b;
}

BenchmarkResult result_named(const char* name) {
  BenchmarkResult r;
  r.name = name;
  r.tracer = "none";
  r.repetitions = 4;
  return r;
}

// Runs `reps` repetitions with the given blocks and returns the reason.
std::string run_book(SampleBook& book, int reps, const TimedBlock& base, const TimedBlock& traced, BenchmarkResult* r) {
  for (int rep = 0; rep < reps; ++rep) {
    book.add_block(false, rep, base);
    book.add_block(true, rep, traced);
    book.end_repetition();
  }
  return book.finish(kHz, {}, r);
}

TEST(SampleBook, GoodBlocksGiveFiguresAndNoWarning) {
  SampleBook book(kGap, 1);
  BenchmarkResult r = result_named("good");
  EXPECT_EQ(run_book(book, 4, block(1000, 200), block(1300, 200), &r), "");
  ASSERT_TRUE(r.overhead_cycles);
  EXPECT_NEAR(r.overhead_cycles->median, 300, 1e-9);
  EXPECT_NEAR(r.overhead_ns->median, 150, 1e-9);
  EXPECT_EQ(r.baseline.cycles.n, 800u);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.baseline.repetition_medians.size(), 4u);
}

// The host: every sample flagged migrated (TSC_AUX read as a CPU
// number it is not).  No figure, a reason, and nothing prints as 0.0.
TEST(SampleBook, AllExcludedBlockIsAnErrorWithItsReasonNeverAZero) {
  SampleBook book(kGap, 1);
  BenchmarkResult r = result_named("none/getpid/none/payload:0/threads:1");
  std::string why = run_book(book, 4, block(2000, 100, 100), block(2000, 100, 100), &r);
  EXPECT_NE(why.find("no valid sample"), std::string::npos) << why;
  EXPECT_NE(why.find("400 migrated"), std::string::npos) << why;
  EXPECT_FALSE(r.overhead_cycles);
  EXPECT_FALSE(r.overhead_ns);
  EXPECT_EQ(r.baseline.cycles.n, 0u);
  EXPECT_EQ(r.baseline.migrated, 400u);

  // What a run does with it: error status, reason in the table, null in
  // JSON, empty fields in CSV.
  r.status = "error";
  r.error = why;
  RunResult run;
  run.benchmarks.push_back(r);
  std::string table = summary_table(run);
  EXPECT_NE(table.find("no valid sample"), std::string::npos);
  EXPECT_EQ(table.find("0.0"), std::string::npos) << table;
  nlohmann::json j = run;
  EXPECT_TRUE(j["benchmarks"][0]["baseline"]["cycles_per_event"].is_null());
  EXPECT_TRUE(j["benchmarks"][0]["overhead_ns_per_event"].is_null());
  std::string csv = summary_csv(run);
  std::string row = csv.substr(csv.find('\n') + 1);
  EXPECT_EQ(row.find("0.000"), std::string::npos) << row;
  RunResult back = j.get<RunResult>();
  EXPECT_EQ(back.benchmarks[0].baseline.cycles.n, 0u);
}

// Even if a caller forgot to mark such a result failed, the table refuses
// to print a figure for it.
TEST(SampleBook, SummaryTablePrintsNoFigureForAnOkResultWithoutSamples) {
  RunResult run;
  BenchmarkResult r = result_named("none/x/none/payload:0/threads:1");
  r.overhead_ns = MedianCI{};
  run.benchmarks.push_back(r);
  std::string table = summary_table(run);
  EXPECT_NE(table.find("error: no valid sample"), std::string::npos) << table;
  EXPECT_EQ(table.find("0.0"), std::string::npos) << table;
}

TEST(SampleBook, GarbageTscAuxBlockGivesFiguresOnlyWithAMethodThatDoesNotTrustIt) {
  // Samples tagged with TSC_AUX 205 on measured CPU 1.
  auto tagged = [](MigrationMethod m, unsigned expected) {
    TimedBlock b = block(2000, 100);
    for (auto& mig : b.migrated) mig = sample_migrated(m, expected, 1, 205, 1, 1);
    return b;
  };
  for (auto [m, expected, ok] :
       {std::tuple{MigrationMethod::kTscAux, 1u, false}, std::tuple{MigrationMethod::kTscAuxLearned, 205u, true},
        std::tuple{MigrationMethod::kGetcpu, 0u, true}}) {
    SCOPED_TRACE(std::string(to_string(m)));
    SampleBook book(kGap, 1);
    BenchmarkResult r = result_named("aux");
    std::string why = run_book(book, 3, tagged(m, expected), tagged(m, expected), &r);
    EXPECT_EQ(why.empty(), ok) << why;
    EXPECT_EQ(r.overhead_cycles.has_value(), ok);
  }
}

TEST(SampleBook, LargeExcludedShareIsAFlaggedWarning) {
  SampleBook book(kGap, 1);
  BenchmarkResult r = result_named("share");
  // 30% migrated in every block: the figure stands, flagged.
  EXPECT_EQ(run_book(book, 4, block(1000, 100, 30), block(1200, 100, 30), &r), "");
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_NE(r.warnings[0].find("30% of the baseline samples excluded"), std::string::npos) << r.warnings[0];
  RunResult run;
  r.overhead_ns = r.overhead_ns.value_or(MedianCI{});
  run.benchmarks.push_back(r);
  EXPECT_NE(summary_table(run).find("! 30% of the baseline"), std::string::npos);
}

TEST(SampleBook, RepetitionsThatLostTheirSamplesAreDroppedAndTooFewIsAnError) {
  SampleBook book(kGap, 1);
  BenchmarkResult r = result_named("reps");
  book.add_block(false, 0, block(1000, 100));
  book.add_block(true, 0, block(1100, 100, 60));  // kept 40%: the repetition does not count
  book.end_repetition();
  double b = 0, t = 0;
  EXPECT_FALSE(book.last(&b, &t));
  for (int rep = 1; rep < 3; ++rep) {
    book.add_block(false, rep, block(1000, 100));
    book.add_block(true, rep, block(1100, 100));
    book.end_repetition();
  }
  EXPECT_EQ(book.finish(kHz, {}, &r), "");
  EXPECT_EQ(book.repetitions_dropped(), 1u);
  EXPECT_EQ(r.traced.repetition_medians.size(), 2u);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.back().find("1 of 3 repetitions dropped"), std::string::npos);

  SampleBook one(kGap, 1);
  BenchmarkResult r1 = result_named("one");
  std::string why = run_book(one, 1, block(1000, 100), block(1100, 100), &r1);
  EXPECT_NE(why.find("only 1 of 1 repetitions"), std::string::npos) << why;
  EXPECT_FALSE(r1.overhead_cycles);
}

// Every thread's events per second: the traced blocks' events over their
// wall time, the median of the counted repetitions kept; a repetition left
// out (an earlier level) or not counted does not move it.
TEST(SampleBook, EventsPerSecondIsTheMedianOfTheKeptRepetitionsBlocks) {
  SampleBook book(kGap, 1);
  BenchmarkResult r = result_named("rate");
  const double traced_rates[] = {1e3, 4e6, 5e6, 6e6};  // the first at an earlier level
  for (int rep = 0; rep < 4; ++rep) {
    TimedBlock base = block(1000, 200), traced = block(1300, 200);
    base.all_events = 300;  // the measured thread's 200 and a contender's 100
    base.seconds = 100e-6;
    traced.all_events = 400;
    traced.seconds = 400 / traced_rates[rep];
    book.add_block(false, rep, base);
    book.add_block(true, rep, traced);
    book.end_repetition();
  }
  book.leave_out_before(1);
  ASSERT_EQ(book.finish(kHz, {}, &r), "");
  ASSERT_TRUE(r.events_per_second);
  EXPECT_NEAR(*r.events_per_second, 5e6, 1);  // the traced blocks', never the untraced ones' 3e6
  // No block's wall time: no rate, never a zero; no figure, no rate.
  SampleBook none(kGap, 1);
  BenchmarkResult q = result_named("no rate");
  ASSERT_EQ(run_book(none, 3, block(1000, 200), block(1300, 200), &q), "");
  EXPECT_FALSE(q.events_per_second);
  SampleBook one(kGap, 1);
  BenchmarkResult f = result_named("one repetition");
  TimedBlock timed = block(1300, 200);
  timed.all_events = 200;
  timed.seconds = 1e-3;
  EXPECT_NE(run_book(one, 1, block(1000, 200), timed, &f), "");
  EXPECT_FALSE(f.events_per_second);
  RunResult run;
  run.benchmarks = {r, q};
  const nlohmann::json j = nlohmann::json::parse(result_json_text(run));
  EXPECT_NEAR(j["benchmarks"][0]["events_per_second"].get<double>(), 5e6, 1);
  EXPECT_FALSE(j["benchmarks"][1].contains("events_per_second"));
}

TEST(SampleBook, NoSampleAtAllIsAnError) {
  SampleBook book(kGap, 1);
  BenchmarkResult r = result_named("empty");
  EXPECT_NE(book.finish(kHz, {}, &r).find("took no sample"), std::string::npos);
}

TEST(ChooseBatch, SpansTheClockPlansMinimumInWholeUnits) {
  EXPECT_EQ(choose_batch(2000, 21000, 1, 0), 11u);      // getpid on a TSC with 21-cycle steps
  EXPECT_EQ(choose_batch(2000, 1000, 1, 0), 1u);        // the same on a fine TSC
  EXPECT_EQ(choose_batch(0.6, 21000, 1, 0), 35000u);    // empty loop
  EXPECT_EQ(choose_batch(0.6, 210000, 1, 0), 100000u);  // capped
  EXPECT_EQ(choose_batch(5, 1000, 1000, 0), 1000u);     // kmod: one ioctl of 1000
  EXPECT_EQ(choose_batch(0.5, 1000, 1000, 0), 2000u);   // whole ioctls
  EXPECT_EQ(choose_batch(2000, 21000, 1, 7), 7u);       // the user's batch wins
}

}  // namespace
}  // namespace tracebench
