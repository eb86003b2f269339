// Every file the suite reads back turns into its type through one reader:
// what the writer wrote comes back the same, and a missing or ill-typed
// field is refused with its name in the message (result.json and model.json
// through nlohmann's from_json, whose messages carry the field's JSON
// pointer: JSON_DIAGNOSTICS is on for the suite).  result.json (RunResult),
// model.json (model::Model), SCENARIO.json (model::Scenario) and a
// validation file (model::ValidationFile).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/harness/model_fixture.h"
#include "tracebench/model.h"
#include "tracebench/report.h"

namespace tracebench {
namespace {

using nlohmann::json;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- validation files

json validation_document(bool with_consumer) {
  model::Model m;
  m.host = "h";
  m.execution = "qemu-tcg";
  m.emulated = true;
  m.tsc_hz = 2e9;
  model::ValidationScenario s;
  s.tracer = "ebpf";
  s.workload = "getpid";
  s.rate_hz = 1000;
  model::ValidationMeasured x;
  model::Validation v;
  v.rate_hz = 990;
  v.probe_cycles = 900;
  v.probe_cpu_percent = 0.05;
  v.consumer_cpu_percent = 0.5;
  v.cpu_percent = 0.55;
  v.untraced_spread_ns_per_event = 12;
  v.probe_cycles_pairs = {850, 950};
  v.predicted_probe_cycles = 800;
  v.predicted_probe_cpu_percent = 0.04;
  if (with_consumer) {
    v.predicted_consumer_cpu_percent = 0.25;
    v.predicted_cpu_percent = 0.29;
  }
  v.problems = {"the rate was not held"};
  return model::to_json(m, s, x, v);
}

TEST(FromJson, ValidationRoundTrips) {
  for (bool consumer : {true, false}) {
    const json j = validation_document(consumer);
    model::ValidationFile v;
    const Status s = model::validation_from_json(j, &v);
    ASSERT_TRUE(s) << s.message();
    EXPECT_DOUBLE_EQ(v.measured.rate_hz, 990);
    EXPECT_DOUBLE_EQ(v.measured.probe_cycles, 900);
    EXPECT_DOUBLE_EQ(v.measured.probe_cpu_percent, 0.05);
    EXPECT_DOUBLE_EQ(v.measured.consumer_cpu_percent, 0.5);
    EXPECT_DOUBLE_EQ(v.measured.cpu_percent, 0.55);
    EXPECT_DOUBLE_EQ(v.measured.untraced_spread_ns_per_event, 12);
    EXPECT_EQ(v.measured.probe_cycles_pairs, (std::vector<double>{850, 950}));
    EXPECT_DOUBLE_EQ(v.predicted.probe_cycles, 800);
    EXPECT_DOUBLE_EQ(v.predicted.probe_cpu_percent, 0.04);
    EXPECT_EQ(v.predicted.consumer_cpu_percent.has_value(), consumer);
    EXPECT_EQ(v.error_cpu_percent.has_value(), consumer);
    if (consumer) { EXPECT_NEAR(*v.error_cpu_percent, 0.55 - 0.29, 1e-12); }
    EXPECT_FALSE(v.held);
    EXPECT_EQ(v.problems, std::vector<std::string>{"the rate was not held"});
    EXPECT_TRUE(v.emulated);
    EXPECT_EQ(v.execution, "qemu-tcg");
    EXPECT_EQ(v.document, j);
  }
}

// Each field the suite reads, removed and then given another type.
TEST(FromJson, ValidationRefusesAMissingOrIllTypedFieldByName) {
  const std::vector<std::pair<std::string, std::string>> fields = {{"measured", "rate_hz"},
                                                                   {"measured", "probe_cycles"},
                                                                   {"measured", "probe_cpu_percent"},
                                                                   {"measured", "consumer_cpu_percent"},
                                                                   {"measured", "cpu_percent"},
                                                                   {"measured", "untraced_spread_ns_per_event"},
                                                                   {"measured", "probe_cycles_pairs"},
                                                                   {"predicted", "probe_cycles"},
                                                                   {"predicted", "probe_cpu_percent"},
                                                                   {"predicted", "consumer_cpu_percent"},
                                                                   {"predicted", "cpu_percent"},
                                                                   {"error", "cpu_percent"},
                                                                   {"conditions", "held"},
                                                                   {"conditions", "problems"},
                                                                   {"model", "emulated"},
                                                                   {"model", "execution"}};
  for (const auto& [group, key] : fields) {
    const std::string name = group + "." + key;
    json j = validation_document(true);
    model::ValidationFile v;
    j[group][key] = "text";
    if (key == "execution") j[group][key] = 3;
    Status s = model::validation_from_json(j, &v);
    ASSERT_FALSE(s) << name << " of another type accepted";
    EXPECT_TRUE(has(s.message(), name)) << s.message();
    const bool optional = group == "model" || key == "problems" || key == "probe_cycles_pairs";
    j[group].erase(key);
    s = model::validation_from_json(j, &v);
    if (optional) continue;  // files written before they existed
    ASSERT_FALSE(s) << name << " missing accepted";
    EXPECT_TRUE(has(s.message(), name + " is missing")) << s.message();
  }
  json j = validation_document(true);
  j["measured"] = 1;
  model::ValidationFile v;
  const Status s = model::validation_from_json(j, &v);
  ASSERT_FALSE(s);
  EXPECT_TRUE(has(s.message(), "measured is a number, not an object")) << s.message();
}

// ---- model.json

TEST(FromJson, ModelRoundTripsAndNamesABadField) {
  const model::Model m = fixtures::one_entry_model();
  model::Model back;
  Status s = model::from_json(model::to_json(m), &back);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(model::to_json(back).dump(), model::to_json(m).dump());
  json j = model::to_json(m);
  j["context"]["tsc_hz"] = "fast";
  s = model::from_json(j, &back);
  ASSERT_FALSE(s);
  EXPECT_TRUE(has(s.message(), "(/context/tsc_hz) type must be number, but is string")) << s.message();
  j = model::to_json(m);
  j["entries"][0]["parameters"]["fixed"]["ci_low"] = true;
  s = model::from_json(j, &back);
  ASSERT_FALSE(s);
  EXPECT_TRUE(has(s.message(), "(/entries/0/parameters/fixed/ci_low) type must be number, but is boolean"))
      << s.message();
  j = model::to_json(m);
  j["entries"][0].erase("workloads");
  s = model::from_json(j, &back);
  ASSERT_FALSE(s);
  EXPECT_TRUE(has(s.message(), "workloads")) << s.message();
}

// ---- SCENARIO.json

TEST(FromJson, ScenarioRoundTripsItsFieldsAndNamesABadOne) {
  const json j = json::parse(R"({"probes": [{"tracer": "ebpf", "probe_kind": "syscall", "action": "count",
      "rate_hz": 1000, "payload_bytes": 64}]})");
  model::Scenario s;
  Status st = model::scenario_from_json(j, &s);
  ASSERT_TRUE(st) << st.message();
  ASSERT_EQ(s.probes.size(), 1u);
  EXPECT_EQ(s.probes[0].tracer, "ebpf");
  EXPECT_DOUBLE_EQ(s.probes[0].rate_hz, 1000);
  EXPECT_EQ(s.probes[0].payload_bytes, 64u);
  json bad = j;
  bad["probes"][0]["rate_hz"] = "often";
  st = model::scenario_from_json(bad, &s);
  ASSERT_FALSE(st);
  EXPECT_TRUE(has(st.message(), "rate_hz")) << st.message();
  bad = j;
  bad["probes"][0].erase("tracer");
  st = model::scenario_from_json(bad, &s);
  ASSERT_FALSE(st);
  EXPECT_TRUE(has(st.message(), "tracer")) << st.message();
}

// ---- result.json

class ResultJson : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tb-from-json-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Status read(const json& j, RunResult* out) {
    const std::string path = (dir_ / "result.json").string();
    std::ofstream(path) << j.dump(2);
    return read_result_json(path, out);
  }
  std::filesystem::path dir_;
};

RunResult one_benchmark_run() {
  RunResult r;
  r.context.run_id = "20261128T000000Z-1";
  r.context.cpus = 2;
  r.context.tsc_hz = r.context.tsc_calibrated_hz = 2e9;
  BenchmarkResult b;
  b.name = "ebpf/getpid/count/payload:0/threads:1";
  b.tracer = "ebpf";
  b.repetitions = 2;
  b.overhead_ns = MedianCI{130, 128, 132, 0.5, 2};
  r.benchmarks.push_back(b);
  return r;
}

TEST_F(ResultJson, RoundTripsAndNamesAMissingOrIllTypedField) {
  const RunResult r = one_benchmark_run();
  RunResult back;
  Status s = read(json(r), &back);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(result_json_text(back), result_json_text(r));
  json j = r;
  j["context"]["cpus"] = "two";
  s = read(j, &back);
  ASSERT_FALSE(s);
  EXPECT_TRUE(has(s.message(), "(/context/cpus) type must be number, but is string")) << s.message();
  j = r;
  j["benchmarks"][0]["events"]["fired"] = json::array();
  s = read(j, &back);
  ASSERT_FALSE(s);
  EXPECT_TRUE(has(s.message(), "(/benchmarks/0/events/fired) type must be number, but is array")) << s.message();
  j = r;
  j["benchmarks"][0].erase("repetitions");
  s = read(j, &back);
  ASSERT_FALSE(s);
  EXPECT_TRUE(has(s.message(), "repetitions")) << s.message();
}

}  // namespace
}  // namespace tracebench
