// How tracebench uses Google Benchmark: it registers each benchmark with
// one iteration per repetition and counts the calls, so every flag that
// changes how often or in which order the library calls a benchmark
// (warm-up, random interleaving, repetitions, minimum time) would break the
// pairing of calls and repetitions.  Only flags that select or format are
// let through; the others are refused before anything runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "tracebench/status.h"

namespace tracebench {

// The flags `tracebench run ... -- <flags>` accepts (prefixes before '=').
const std::vector<std::string>& allowed_gbench_flags();

// Error naming the first flag that is not allowed, with what to use instead.
Status check_gbench_args(const std::vector<std::string>& args);

// How many of the benchmarks `names` (registered with `repetitions`) the
// flags' --benchmark_filter selects, matched as the library matches them
// (the instance name with its /iterations:1/repeats:N/manual_time suffix; a
// leading '-' negates): all of them without a filter.  An error when the
// filter is not a regular expression.
Status gbench_selects(const std::vector<std::string>& args, const std::vector<std::string>& names, int repetitions,
                      std::size_t* selected);

// Whether Google Benchmark's own per-repetition display is wanted: with
// `run --gbench-console`, or when a flag after -- formats it
// (--benchmark_format, _color, _counters_tabular, _display_aggregates_only).
// Off otherwise: the progress lines and the summary table say it all.
bool wants_gbench_console(const std::vector<std::string>& args, bool gbench_console);

// Without that display: a reporter that prints nothing.  With it:
// Google Benchmark's console reporter without the library's "built as
// DEBUG" warning (Debian's libbenchmark), which says nothing about
// tracebench's figures: they come from the harness's own rdtsc timing in
// tracebench's optimized build.  A note says so instead.  nullptr when the
// flags ask for another format (the library then makes its own).
std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::vector<std::string>& args,
                                                                    bool gbench_console = false);

}  // namespace tracebench
