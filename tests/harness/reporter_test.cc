// The one reporter interface (reporter.h): every format the commands use is
// in its input kind's table under its name, a name the table lacks is
// refused with the formats there are, and each reporter writes exactly what
// its format's file writes.
#include <gtest/gtest.h>

#include "harness/model/model_reporters.h"
#include "tests/harness/model_fixture.h"
#include "tracebench/reporter.h"

namespace tracebench {
namespace {

using Formats = std::vector<std::string>;

// The formats the commands ask for by name: a format dropped from a table
// (or a new one not listed here) fails this test.
TEST(Reporters, EveryFormatIsRegisteredUnderItsName) {
  EXPECT_EQ(run_reporters().formats(), (Formats{"console", "json", "csv", "samples-csv", "bencher", "kcidb"}));
  EXPECT_EQ(compare_reporters().formats(), (Formats{"text", "json", "junit"}));
  EXPECT_EQ(model::model_reporters().formats(), (Formats{"json", "markdown", "csv"}));
  EXPECT_EQ(model::prediction_reporters().formats(), (Formats{"text", "json"}));
  EXPECT_EQ(model::validation_reporters().formats(), (Formats{"text", "json"}));
  EXPECT_EQ(model::suite_reporters().formats(), (Formats{"markdown"}));
}

template <class Input>
void expect_refused(const ReporterTable<Input>& t, const std::string& format) {
  const Reporter<Input>* r = nullptr;
  const Status s = t.find(format, &r);
  ASSERT_FALSE(s) << "format \"" << format << "\" accepted";
  EXPECT_EQ(r, nullptr);
  EXPECT_NE(s.message().find("\"" + format + "\""), std::string::npos) << s.message();
  for (const auto& f : t.formats()) EXPECT_NE(s.message().find(f), std::string::npos) << s.message();
}

TEST(Reporters, AnUnknownFormatIsRefusedNamingTheFormatsThereAre) {
  for (const char* f : {"xml", "", "JSON", "json ", "junit"}) expect_refused(run_reporters(), f);
  for (const char* f : {"console", "csv", "bencher", "Text"}) expect_refused(compare_reporters(), f);
  for (const char* f : {"md", "console"}) expect_refused(model::model_reporters(), f);
  for (const char* f : {"csv", "markdown"}) expect_refused(model::prediction_reporters(), f);
  for (const char* f : {"csv", "md"}) expect_refused(model::validation_reporters(), f);
  for (const char* f : {"json", "text"}) expect_refused(model::suite_reporters(), f);
  // write() goes through the same lookup.
  RunResult run;
  Report out;
  EXPECT_FALSE(run_reporters().write("yaml", RunReport{run}, &out));
  EXPECT_TRUE(out.text.empty());
}

RunResult sample_run() {
  RunResult r;
  r.context.run_id = "20261128T000000Z-1";
  r.context.complete = true;
  r.context.tsc_hz = 2e9;
  BenchmarkResult b;
  b.name = "ebpf/getpid/count/payload:0/threads:1";
  b.tracer = "ebpf";
  b.workload = "getpid";
  b.action = "count";
  b.repetitions = 2;
  b.baseline.ns.n = b.traced.ns.n = 10;
  b.baseline.ns.p50 = 100;
  b.traced.ns.p50 = 230;
  b.overhead_ns = MedianCI{130, 128, 132, 0.5, 2};
  b.overhead_cycles = MedianCI{260, 256, 264, 0.5, 2};
  b.events.fired = 1000;
  b.events.verification = "passed";
  b.samples.push_back(SampleRow{true, 0, 0, 200.0, false, false});
  r.benchmarks.push_back(b);
  return r;
}

std::string text(const ReporterTable<RunReport>& t, const std::string& f, const RunReport& in) {
  Report out;
  EXPECT_TRUE(t.write(f, in, &out)) << f;
  return out.text;
}

TEST(Reporters, EachRunFormatWritesWhatItsFileWrites) {
  const RunResult run = sample_run();
  const auto& t = run_reporters();
  EXPECT_EQ(text(t, "console", RunReport{run}), summary_table(run));
  EXPECT_EQ(text(t, "console", RunReport{run, true}), summary_table(run, true));
  EXPECT_EQ(text(t, "json", RunReport{run}), result_json_text(run));
  EXPECT_EQ(text(t, "csv", RunReport{run}), summary_csv(run));
  EXPECT_EQ(text(t, "samples-csv", RunReport{run}), kSamplesCsvHeader + samples_csv_rows(run.benchmarks[0]));
  EXPECT_EQ(text(t, "samples-csv", RunReport{run, false, &run.benchmarks[0]}), samples_csv_rows(run.benchmarks[0]));
  EXPECT_EQ(text(t, "bencher", RunReport{run}), bencher_json(run).dump(2) + "\n");
  Report bencher;
  ASSERT_TRUE(t.write("bencher", RunReport{run}, &bencher));
  EXPECT_NE(bencher.notes.find("cover less than 95%"), std::string::npos) << bencher.notes;
  KcidbSource src{"lab", "", "", "0123456789ab"};
  EXPECT_EQ(text(t, "kcidb", RunReport{run, false, nullptr, src}), kcidb_json(run, src).dump(2) + "\n");
  // A guest of QEMU's TCG: the hypervisor by its name, CPUID's signature beside
  // it, and flagged as emulated.
  RunResult tcg = run;
  tcg.context.virtualized = true;
  tcg.context.hypervisor = "TCGTCGTCGTCG";
  tcg.context.emulated = true;
  const nlohmann::json misc = kcidb_json(tcg, src)["tests"][0]["environment"]["misc"];
  EXPECT_EQ(misc["hypervisor"], "QEMU TCG") << misc.dump();
  EXPECT_EQ(misc["hypervisor_cpuid"], "TCGTCGTCGTCG") << misc.dump();
  EXPECT_EQ(misc["emulated"], true) << misc.dump();
  nlohmann::json doc;
  EXPECT_TRUE(t.document("json", RunReport{run}, &doc));
  EXPECT_EQ(doc.dump(2) + "\n", result_json_text(run));
  EXPECT_FALSE(t.document("console", RunReport{run}, &doc)) << "a text format gave a JSON document";
}

TEST(Reporters, EachCompareFormatWritesWhatItsFileWrites) {
  const RunResult a = sample_run(), b = sample_run();
  std::vector<const RunResult*> pa{&a}, pb{&b};
  CompareResult c;
  ASSERT_TRUE(compare_runs(pa, pb, 0.05, 0.05, &c));
  const CompareReport in{c, pa, pb, 0.05, 0.05};
  Report out;
  ASSERT_TRUE(compare_reporters().write("text", in, &out));
  EXPECT_EQ(out.text, compare_text(c, pa, pb));
  ASSERT_TRUE(compare_reporters().write("json", in, &out));
  EXPECT_EQ(out.text, compare_json(c, pa, pb).dump(2) + "\n");
  ASSERT_TRUE(compare_reporters().write("junit", in, &out));
  EXPECT_EQ(out.text, compare_junit(c, pa, pb, 0.05, 0.05));
}

TEST(Reporters, EachModelFormatWritesWhatItsFileWrites) {
  const model::Model m = fixtures::one_entry_model();
  Report out;
  ASSERT_TRUE(model::model_reporters().write("json", model::ModelReport{m}, &out));
  EXPECT_EQ(out.text, model::to_json(m).dump(2) + "\n");
  ASSERT_TRUE(model::model_reporters().write("markdown", model::ModelReport{m}, &out));
  EXPECT_EQ(out.text, model::to_markdown(m));
  ASSERT_TRUE(model::model_reporters().write("csv", model::ModelReport{m}, &out));
  EXPECT_EQ(out.text, model::to_csv(m));
  EXPECT_NE(out.text.find("ebpf,syscall,count,,per_byte,,,,,,one payload size"), std::string::npos) << out.text;
}

}  // namespace
}  // namespace tracebench
