// Which planned benchmarks a --benchmark_filter selects, matched as Google
// Benchmark matches them (a run that selects none is refused at plan time).
#include "tracebench/gbench.h"

#include <gtest/gtest.h>

namespace tracebench {
namespace {

const std::vector<std::string> kNames = {"none/getpid/none/payload:0/threads:1",
                                         "none/write_null/none/payload:64/threads:1",
                                         "ftrace/getpid/count/payload:0/threads:1"};

std::size_t selects(const std::vector<std::string>& args) {
  std::size_t n = 99;
  Status s = gbench_selects(args, kNames, 6, &n);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return n;
}

TEST(GbenchFilter, NoFilterOrAllSelectsEverything) {
  EXPECT_EQ(selects({}), 3u);
  EXPECT_EQ(selects({"--benchmark_format=json"}), 3u);
  EXPECT_EQ(selects({"--benchmark_filter=all"}), 3u);
  EXPECT_EQ(selects({"--benchmark_filter=."}), 3u);
}

TEST(GbenchFilter, ARegexIsSearchedInTheInstanceName) {
  EXPECT_EQ(selects({"--benchmark_filter=getpid"}), 2u);
  EXPECT_EQ(selects({"--benchmark_filter=^none/"}), 2u);
  EXPECT_EQ(selects({"--benchmark_filter=payload:64"}), 1u);
  // The library's instance name carries the repetitions and manual time.
  EXPECT_EQ(selects({"--benchmark_filter=repeats:6/manual_time$"}), 3u);
  EXPECT_EQ(selects({"--benchmark_filter=repeats:7"}), 0u);
  EXPECT_EQ(selects({"--benchmark_filter=nosuch"}), 0u);
}

TEST(GbenchFilter, ALeadingMinusNegates) {
  EXPECT_EQ(selects({"--benchmark_filter=-getpid"}), 1u);
  EXPECT_EQ(selects({"--benchmark_filter=-/threads:1"}), 0u);
}

TEST(GbenchFilter, TheLastFilterCounts) {
  EXPECT_EQ(selects({"--benchmark_filter=nosuch", "--benchmark_filter=ftrace"}), 1u);
}

TEST(GbenchFilter, NotARegexIsAnError) {
  std::size_t n = 0;
  Status s = gbench_selects({"--benchmark_filter=(("}, kNames, 6, &n);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("not a regular expression"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tracebench
