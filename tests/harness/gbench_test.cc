#include "tracebench/gbench.h"

#include <gtest/gtest.h>

#include <sstream>

namespace tracebench {
namespace {

TEST(GbenchFlags, SelectingAndFormattingFlagsPass) {
  EXPECT_TRUE(check_gbench_args({"--benchmark_filter=getpid", "--benchmark_format=json", "--benchmark_out=/tmp/x.json",
                                 "--benchmark_counters_tabular=true"})
                  .is_ok());
}

TEST(GbenchFlags, FlagsThatChangeCallOrderOrCountAreRefusedByName) {
  for (const char* flag : {"--benchmark_min_warmup_time=1", "--benchmark_enable_random_interleaving=true",
                           "--benchmark_repetitions=3", "--benchmark_min_time=2", "--benchmark_filterx=a"}) {
    Status s = check_gbench_args({"--benchmark_filter=getpid", flag});
    ASSERT_FALSE(s.is_ok()) << flag;
    EXPECT_NE(s.message().find(flag), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("--repetitions"), std::string::npos);
  }
}

TEST(GbenchFlags, ConsoleReporterUnlessAnotherFormatIsAsked) {
  EXPECT_NE(make_display_reporter({}, true), nullptr);
  EXPECT_NE(make_display_reporter({"--benchmark_format=console"}), nullptr);
  EXPECT_EQ(make_display_reporter({"--benchmark_format=json"}), nullptr);
}

TEST(GbenchFlags, LibraryDisplayIsOffUnlessAskedFor) {
  EXPECT_FALSE(wants_gbench_console({}, false));
  EXPECT_FALSE(wants_gbench_console({"--benchmark_filter=getpid", "--benchmark_out=/tmp/x.json"}, false));
  EXPECT_TRUE(wants_gbench_console({}, true));
  for (const char* f : {"--benchmark_format=console", "--benchmark_format=json", "--benchmark_color=false",
                        "--benchmark_counters_tabular=true", "--benchmark_display_aggregates_only"})
    EXPECT_TRUE(wants_gbench_console({f}, false)) << f;
}

TEST(GbenchFlags, DefaultReporterPrintsNothing) {
  auto rep = make_display_reporter({});
  ASSERT_NE(rep, nullptr);
  std::ostringstream out, err;
  rep->SetOutputStream(&out);
  rep->SetErrorStream(&err);
  benchmark::BenchmarkReporter::Context ctx;
  EXPECT_TRUE(rep->ReportContext(ctx));
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = "ebpf/getpid/count/payload:0/threads:1";
  run.iterations = 1;
  rep->ReportRuns({run});
  rep->Finalize();
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "");
  // The library's own console reporter, asked for, prints the same run.
  auto console = make_display_reporter({}, true);
  std::ostringstream out2, err2;
  console->SetOutputStream(&out2);
  console->SetErrorStream(&err2);
  console->ReportContext(ctx);
  console->ReportRuns({run});
  EXPECT_NE(out2.str().find("ebpf/getpid"), std::string::npos) << out2.str();
}

TEST(GbenchFlags, ConsoleContextDropsTheLibrarysDebugWarningAndSaysWhy) {
  auto rep = make_display_reporter({}, true);
  std::ostringstream out, err;
  rep->SetOutputStream(&out);
  rep->SetErrorStream(&err);
  benchmark::BenchmarkReporter::Context ctx;
  rep->ReportContext(ctx);
  EXPECT_EQ(err.str().find("***WARNING*** Library was built as DEBUG"), std::string::npos) << err.str();
  // Where the library would have warned (Debian's build does), the note says why it does not matter.
  std::ostringstream library;
  benchmark::BenchmarkReporter::PrintBasicContext(&library, ctx);
  bool debug_library = library.str().find("Library was built as DEBUG") != std::string::npos;
  EXPECT_EQ(err.str().find("tracebench's own rdtsc timing") != std::string::npos, debug_library) << err.str();
}

}  // namespace
}  // namespace tracebench
