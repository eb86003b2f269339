#include "tracebench/report.h"
#include "tracebench/results.h"
#include "tracebench/runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <locale>
#include <sstream>

namespace tracebench {
namespace {

RunResult sample_run() {
  RunResult r;
  RunContext& c = r.context;
  c.run_id = "20261122T000000Z-host-abc";
  c.date_utc = "2026-11-22T00:00:00Z";
  c.host = "host";
  c.cpu_model = "cpu";
  c.cpus = 2;
  c.measured_cpu = 1;
  c.kernel_release = "6.18";
  c.tsc_hz = 2.5e9;
  c.tsc_calibrated_hz = 2.5e9;
  c.tsc_source = "calibrated";
  c.floor_cycles = 52;
  c.counters.push_back({"task-clock", "perf_event", true, ""});
  c.counters.push_back({"PAPI_TOT_INS", "papi", false, "no PMU"});
  c.noise_warnings = {"virtualized"};
  c.library_versions = {{"fmt", "9.1.0"}};
  BenchmarkResult b;
  b.name = "ftrace/getpid/count/payload:0/threads:1";
  b.tracer = "ftrace";
  b.workload = "getpid";
  b.probe = "syscall:getpid";
  b.probe_kind = "syscall";
  b.action = "count";
  // Consistent, as read_run requires (tracebench/result_check.h): a
  // median per kept repetition of each variant, the overhead's interval
  // over those repetitions, its ns the cycles at 2.5 GHz.
  b.repetitions = 2;
  b.dropped_repetitions = 0;
  b.samples_per_block = 3;
  b.baseline.samples = 3;
  b.traced.samples = 3;
  b.baseline.cycles = summarize({1.5, 2.5, 3.5});
  b.baseline.repetition_medians = {2.5, 2.5};
  b.traced.cycles = summarize({10.25, 11, 12});
  b.baseline.ns = summarize({0.6, 1.0, 1.4});  // an ok benchmark has both units (results/schema.json)
  b.traced.ns = summarize({4.1, 4.4, 4.8});
  b.traced.cold_first_event_cycles = 1234.5;
  b.traced.repetition_medians = {11, 11.5};
  b.traced.counters_per_event["task-clock"] = 4.5;
  b.overhead_cycles = median_ci({8.5, 9});
  b.overhead_ns = median_ci({3.4, 3.6});
  b.events.fired = 100;
  b.events.recorded = 90;
  b.events.lost = 10;
  b.events.payload_source = "workload";
  b.events.payload_checked_events = 90;
  b.events.payload_verified = 90 * 64;
  b.events.verification = "passed";
  b.events.verification_reason = "recorded 90 + lost 10 = fired 100";
  b.tracer_details = {{"instance", "tracebench-1"}};
  ConsumerResult cons;
  cons.cpu_ns = 2.5e6;
  cons.caller_cpu_ns = 0.5e6;
  cons.ticks = 40;
  cons.user_ticks = 10;
  cons.user_fraction = 0.25;
  cons.records = 90;
  cons.wakeups = 12;
  cons.wakes_on_timer = true;
  cons.window_s = 1.5;
  cons.tasks.push_back({"reader", 10, 11, 2e6});
  b.consumer = cons;
  b.interrupts_per_event = {{"IWI", {{"description", "IRQ work interrupts"}, {"extra_per_event", {{"1", 0.41}}}}}};
  r.benchmarks.push_back(b);
  BenchmarkResult e = b;
  e.name = "ftrace/getpid/count/payload:0/threads:2";  // each benchmark once in a run
  e.status = "error";
  e.error = "tracer recorded zero events";
  e.overhead_cycles.reset();
  e.overhead_ns.reset();
  r.benchmarks.push_back(e);
  return r;
}

TEST(Results, JsonRoundTripIsLossless) {
  RunResult r = sample_run();
  nlohmann::json j = r;
  RunResult back = j.get<RunResult>();
  nlohmann::json j2 = back;
  EXPECT_EQ(j, j2);
  EXPECT_EQ(back.benchmarks[0].traced.cold_first_event_cycles, 1234.5);
  EXPECT_EQ(back.benchmarks[0].interrupts_per_event["IWI"]["extra_per_event"]["1"], 0.41);
  EXPECT_FALSE(back.benchmarks[1].overhead_cycles.has_value());
  EXPECT_TRUE(j["benchmarks"][1]["overhead_cycles_per_event"].is_null());
  EXPECT_EQ(j["context"]["counters"][1]["unavailable_reason"], "no PMU");
  EXPECT_FALSE(j["context"]["counters"][0].contains("unavailable_reason"));
  ASSERT_TRUE(back.benchmarks[0].consumer.has_value());
  EXPECT_EQ(back.benchmarks[0].consumer->tasks[0].tid, 11);
  EXPECT_EQ(*back.benchmarks[0].consumer->wakeups, 12u);
  EXPECT_TRUE(back.benchmarks[0].consumer->wakes_on_timer);
  // Cycles per record, derived for readers: 2.5 ms at 2.5 GHz over 90 records.
  EXPECT_DOUBLE_EQ(j["benchmarks"][0]["consumer"]["cycles_per_record"].get<double>(), 2.5e6 * 2.5 / 90);
  EXPECT_FALSE(j["benchmarks"][0]["consumer"]["user_fraction"].is_null());
}

// The fields written and read are one list walked both ways
// (report_json.cc): a field the walk loses or renames in both directions
// still round-trips above, but not a file written before the walk existed.
// data/result_golden.json is `run --quick -t none -t ebpf -t ftrace -w getpid
// -w spin` as the field-by-field writer wrote it (a consumer, a profile
// probe's timer events, the repetitions' stop): read and written again, it
// must come out byte for byte.
TEST(Results, AResultWrittenBeforeIsWrittenAgainByteForByte) {
  const std::string path = std::string(TB_SOURCE_DIR) + "/tests/harness/data/result_golden.json";
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty()) << path;
  RunResult run;
  Status s = read_result_json(path, &run);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(result_json_text(run), text);
}

TEST(Results, EventsCarryTheVerificationFields) {
  RunResult r = sample_run();
  r.benchmarks[1].events.payload_truncated_events = 7;
  r.benchmarks[1].events.payload_kept_bytes = 4054;
  r.benchmarks[1].events.tracer_errors = 3;
  nlohmann::json j = r;
  const nlohmann::json& ev = j["benchmarks"][1]["events"];
  EXPECT_EQ(ev["payload_source"], "workload");
  EXPECT_EQ(ev["payload_checked_events"], 90);
  EXPECT_EQ(ev["payload_truncated_events"], 7);
  EXPECT_EQ(ev["payload_kept_bytes"], 4054);
  EXPECT_EQ(ev["tracer_errors"], 3);
  EXPECT_EQ(ev["verification_reason"], "recorded 90 + lost 10 = fired 100");
  RunResult back = j.get<RunResult>();
  EXPECT_EQ(back.benchmarks[1].events.payload_kept_bytes, 4054u);
  EXPECT_EQ(back.benchmarks[1].events.tracer_errors, 3u);
}

TEST(Results, ReadsResultsWrittenBeforeTheVerificationFields) {
  nlohmann::json j = sample_run();
  for (auto& b : j["benchmarks"]) {
    for (const char* k : {"payload_source", "payload_checked_events", "payload_mismatched_events",
                          "payload_truncated_events", "payload_kept_bytes", "tracer_errors", "verification_reason"})
      b["events"].erase(k);
  }
  RunResult back = j.get<RunResult>();
  EXPECT_EQ(back.benchmarks[0].events.payload_source, "none");
  EXPECT_EQ(back.benchmarks[0].events.tracer_errors, 0u);
  EXPECT_EQ(back.benchmarks[0].events.verification, "passed");
}

TEST(Results, ReaderRejectsOtherSchemaVersions) {
  nlohmann::json j = sample_run();
  j["schema_version"] = 999;
  EXPECT_THROW(j.get<RunResult>(), std::exception);
  j["schema_version"] = kSchemaVersion;
  j["schema"] = "something.else";
  EXPECT_THROW(j.get<RunResult>(), std::exception);
}

TEST(Results, WriteRunIsAtomicAndReadable) {
  auto dir = std::filesystem::temp_directory_path() / ("tb-results-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_run(dir.string(), sample_run()).is_ok());
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "temp file left: " << e.path();
  }
  RunResult back;
  Status s = read_run((dir / "result.json").string(), &back);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(back.benchmarks.size(), 2u);
  std::filesystem::remove_all(dir);
}

// The fully populated sample run, as write_run() writes it, is valid against
// results/schema.json, and the validator refuses each mutation of it in
// tests/harness/schema_mutations.py's table (python3-jsonschema, installed
// by scripts/setup.sh).
TEST(Results, PopulatedResultIsSchemaValidAndMutationsAreRefused) {
  auto dir = std::filesystem::temp_directory_path() / ("tb-schema-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_run(dir.string(), sample_run()).is_ok());
  const std::string src = TB_SOURCE_DIR;
  const std::string cmd = "/usr/bin/python3 " + src + "/tests/harness/schema_mutations.py " + src + " " +
                          (dir / "result.json").string() + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  std::filesystem::remove_all(dir);
  std::cout << out;
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("mutations, 0 not refused"), std::string::npos) << out;
}

// A comma-decimal global locale must not leak into any file.
struct CommaDecimal : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

TEST(Results, NumbersAreLocaleIndependent) {
  std::locale old = std::locale::global(std::locale(std::locale::classic(), new CommaDecimal));
  RunResult r = sample_run();
  std::string csv = summary_csv(r);
  std::string json = nlohmann::json(r).dump();
  std::locale::global(old);
  EXPECT_NE(csv.find(",2.500,"), std::string::npos) << csv;  // baseline p50
  EXPECT_NE(json.find("10.25"), std::string::npos);
  EXPECT_EQ(json.find("10,25"), std::string::npos);
}

TEST(Results, CsvHasOneRowPerBenchmarkAndQuotesErrors) {
  RunResult r = sample_run();
  r.benchmarks[1].error = "bad, \"quoted\"";
  std::string csv = summary_csv(r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_NE(csv.find("\"bad, \"\"quoted\"\"\""), std::string::npos);
}

// summary.csv ends with the amortized figure: its cycles, interval and ns
// where the benchmark has one, empty fields where it has none.
TEST(Results, CsvEndsWithTheAmortizedFigure) {
  RunResult r = sample_run();
  r.benchmarks[0].amortized_overhead_cycles = MedianCI{9.5, 9.0, 10.25, 0.5, 2};
  r.benchmarks[0].amortized_overhead_ns = MedianCI{3.8, 3.6, 4.1, 0.5, 2};
  r.benchmarks[1].amortized_overhead_cycles.reset();
  r.benchmarks[1].amortized_overhead_ns.reset();
  std::istringstream in(summary_csv(r));
  std::string header, first, second;
  std::getline(in, header);
  std::getline(in, first);
  std::getline(in, second);
  const std::string columns = ",amortized_overhead_cycles,amortized_ci_low,amortized_ci_high,amortized_overhead_ns";
  EXPECT_EQ(header.size() - header.rfind(columns), columns.size()) << header;
  EXPECT_EQ(first.substr(first.size() - std::string(",9.500,9.000,10.250,3.800").size()), ",9.500,9.000,10.250,3.800")
      << first;
  EXPECT_EQ(second.substr(second.size() - 4), ",,,,") << second;
}

// The summary says when a tracer lost more than 5% of the events: its
// overhead then mixes recording and dropping.
TEST(SummaryTable, FlagsBenchmarksThatLostMoreThanFivePercent) {
  RunResult r;
  BenchmarkResult b;
  b.name = "lttng/ust_payload/record/payload:1024/threads:1";
  b.overhead_ns = MedianCI{};
  b.baseline.ns.n = b.traced.ns.n = 100;  // measured: the table prints figures only for those
  b.events.fired = 1000;
  b.events.recorded = 940;
  b.events.lost = 60;
  b.events.verification = "passed";
  r.benchmarks.push_back(b);
  b.name = "lttng/ust_payload/record/payload:64/threads:1";
  b.events.recorded = 950;
  b.events.lost = 50;
  r.benchmarks.push_back(b);
  std::string t = summary_table(r);
  EXPECT_NE(t.find("payload:1024/threads:1"), std::string::npos);
  EXPECT_NE(t.find("6% of the events were lost"), std::string::npos) << t;
  EXPECT_EQ(t.find("5% of the events were lost"), std::string::npos) << t;  // exactly 5%: not flagged
}

}  // namespace
}  // namespace tracebench

namespace tracebench {
namespace {

// The samples are part of the in-memory result; samples.csv is their file
// and read_run(..., with_samples) gives them back as they were.
TEST(Results, SamplesRoundTripThroughSamplesCsv) {
  auto dir = std::filesystem::temp_directory_path() / ("tb-samples-test-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  RunResult r = sample_run();
  r.benchmarks[0].batch = 4;
  r.benchmarks[0].samples = {
      {false, 0, 0, 12.5, false, false}, {true, 0, 0, 40.25, true, true}, {true, 1, 7, 38.0, false, false}};
  r.benchmarks[1].name = "none/odd,name/x";  // quoted in CSV
  r.benchmarks[1].samples = {{false, 3, 1, 2.0, false, true}};
  ASSERT_TRUE(write_run(dir.string(), r).is_ok());
  {
    std::ofstream out(dir / "samples.csv");
    out << kSamplesCsvHeader;
    for (const auto& b : r.benchmarks) out << samples_csv_rows(b);
  }
  RunResult back;
  ASSERT_TRUE(read_run((dir / "result.json").string(), &back).is_ok());
  EXPECT_TRUE(back.benchmarks[0].samples.empty()) << "samples are read only when asked for";
  Status s = read_run((dir / "result.json").string(), &back, /*with_samples=*/true);
  ASSERT_TRUE(s.is_ok()) << s.message();
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& a = r.benchmarks[k].samples;
    const auto& b = back.benchmarks[k].samples;
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].traced, b[i].traced);
      EXPECT_EQ(a[i].repetition, b[i].repetition);
      EXPECT_EQ(a[i].index, b[i].index);
      EXPECT_DOUBLE_EQ(a[i].cycles_per_event, b[i].cycles_per_event);
      EXPECT_EQ(a[i].excluded, b[i].excluded);
      EXPECT_EQ(a[i].migrated, b[i].migrated);
    }
  }
  // Without samples.csv (a --no-samples run) the benchmarks have none.
  std::filesystem::remove(dir / "samples.csv");
  ASSERT_TRUE(read_run((dir / "result.json").string(), &back, true).is_ok());
  EXPECT_TRUE(back.benchmarks[0].samples.empty());
  std::filesystem::remove_all(dir);
}

TEST(Results, ABadSamplesCsvIsAnErrorNamingFileAndLine) {
  auto dir = std::filesystem::temp_directory_path() / ("tb-samples-bad-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  RunResult r = sample_run();
  ASSERT_TRUE(write_run(dir.string(), r).is_ok());
  const std::string name = r.benchmarks[0].name;
  const std::string batch = std::to_string(r.benchmarks[0].batch);
  const std::pair<std::string, std::string> cases[] = {
      {"benchmark,variant\n", ":1: not a samples.csv header"},
      {std::string(kSamplesCsvHeader) + name + ",traced,0,0,1.0," + batch + ",0\n", ":2: expected 8 fields"},
      {std::string(kSamplesCsvHeader) + "nope,traced,0,0,1.0," + batch + ",0,0\n", ":2: benchmark nope"},
      {std::string(kSamplesCsvHeader) + name + ",sideways,0,0,1.0," + batch + ",0,0\n", ":2: variant"},
      {std::string(kSamplesCsvHeader) + name + ",traced,0,0,abc," + batch + ",0,0\n", ":2: not a sample"},
      {std::string(kSamplesCsvHeader) + name + ",traced,-1,0,1.0," + batch + ",0,0\n", ":2: not a sample"},
      {std::string(kSamplesCsvHeader) + name + ",traced,0,0,1.0,99999,0,0\n", ":2: batch 99999"},
      {"", ": empty"},
  };
  for (const auto& [text, want] : cases) {
    std::ofstream(dir / "samples.csv") << text;
    RunResult back;
    Status s = read_run((dir / "result.json").string(), &back, true);
    ASSERT_FALSE(s.is_ok()) << text;
    EXPECT_NE(s.message().find("samples.csv" + want), std::string::npos) << s.message();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tracebench
