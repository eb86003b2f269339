// The report's configurations (harness/report/report_pool.h): runs of one
// configuration pooled into one point, whatever samples per block each
// run's pilot took under the limit the user gave.
#include <gtest/gtest.h>

#include "harness/report/report_pool.h"

namespace tracebench::report {
namespace {

RunResult run_of(std::uint64_t samples, std::optional<std::uint64_t> limit) {
  BenchmarkResult b;
  b.name = "none/getpid/none/payload:0/threads:1";
  b.tracer = "none";
  b.workload = "getpid";
  b.action = "none";
  b.threads = 1;
  b.status = "ok";
  b.samples_per_block = samples;
  b.samples_per_block_limit = limit;
  RunResult r;
  r.context.tsc_hz = 2.096e9;
  r.benchmarks.push_back(b);
  return r;
}

// A bhyve-like host (getpid ~1 us): two quick runs of the same command took
// 938 and 931 samples a block of the 2000 allowed.  One configuration.
TEST(ReportPool, RunsOfOneCommandArePooledWhateverSamplesTheirBlocksTook) {
  const nlohmann::json c = pool_configurations({run_of(938, 2000), run_of(931, 2000)});
  ASSERT_EQ(c.size(), 1u) << c.dump();
  EXPECT_EQ(c[0]["runs"], 2);
}

// -n 10 and the default are two ways of measuring: two configurations.
TEST(ReportPool, RunsWithDifferentLimitsStayApart) {
  EXPECT_EQ(pool_configurations({run_of(10, 10), run_of(931, 2000)}).size(), 2u);
}

// Files written before the limit was: the samples taken stand for it.
TEST(ReportPool, FilesWithoutTheLimitAreKeyedOnTheSamplesTaken) {
  EXPECT_EQ(pool_configurations({run_of(938, std::nullopt), run_of(931, std::nullopt)}).size(), 2u);
  EXPECT_EQ(pool_configurations({run_of(938, std::nullopt), run_of(938, std::nullopt)}).size(), 1u);
}

}  // namespace
}  // namespace tracebench::report
