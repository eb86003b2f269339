#include "tracebench/gbench.h"

#include <regex.h>
#include <unistd.h>

#include <sstream>

#include <fmt/format.h>

namespace tracebench {

const std::vector<std::string>& allowed_gbench_flags() {
  static const std::vector<std::string> flags = {"--benchmark_filter",
                                                 "--benchmark_format",
                                                 "--benchmark_out",
                                                 "--benchmark_out_format",
                                                 "--benchmark_color",
                                                 "--benchmark_counters_tabular",
                                                 "--benchmark_list_tests",
                                                 "--benchmark_context",
                                                 "--benchmark_display_aggregates_only",
                                                 "--benchmark_report_aggregates_only",
                                                 "--v"};
  return flags;
}

Status check_gbench_args(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    std::string name = a.substr(0, a.find('='));
    bool ok = false;
    for (const auto& f : allowed_gbench_flags()) ok |= name == f;
    if (!ok)
      return Status::error(fmt::format(
          "Google Benchmark flag '{}' is not accepted: tracebench owns the repetitions and calls each benchmark "
          "once per repetition, so flags that change how often or in which order benchmarks run (warm-up, "
          "interleaving, repetitions, minimum time) would corrupt the run; use -r/--repetitions and -n/--samples. "
          "Accepted after --: {}",
          a, fmt::join(allowed_gbench_flags(), ", ")));
  }
  return Status::ok();
}

namespace {

class Console : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;
  bool ReportContext(const Context& context) override {
    name_field_width_ = context.name_field_width;
    printed_header_ = false;
    prev_counters_.clear();
    std::ostringstream basic;
    PrintBasicContext(&basic, context);
    std::istringstream lines(basic.str());
    std::string line;
    bool debug_library = false;
    while (std::getline(lines, line)) {
      if (line.find("Library was built as DEBUG") != std::string::npos) {
        debug_library = true;
        continue;
      }
      GetErrorStream() << line << "\n";
    }
    if (debug_library)
      GetErrorStream() << "note: this Google Benchmark library is a DEBUG build; it only registers and repeats the "
                          "benchmarks: every figure comes from tracebench's own rdtsc timing in its optimized build\n";
    return true;
  }
};

bool flag_value(const std::vector<std::string>& args, const std::string& name, std::string* value) {
  bool found = false;
  for (const auto& a : args) {
    if (a == name) {
      *value = "true";
      found = true;
    } else if (a.rfind(name + "=", 0) == 0) {
      *value = a.substr(name.size() + 1);
      found = true;
    }
  }
  return found;
}

bool truthy(const std::string& v) { return v == "true" || v == "1" || v == "yes" || v == "on" || v == "t"; }

// Google Benchmark's display off: tracebench prints a progress line per
// benchmark and the summary table instead.  The library still needs a
// reporter; this one takes every call and prints nothing.
class Silent : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

Status gbench_selects(const std::vector<std::string>& args, const std::vector<std::string>& names, int repetitions,
                      std::size_t* selected) {
  *selected = names.size();
  std::string spec;
  if (!flag_value(args, "--benchmark_filter", &spec) || spec.empty() || spec == "all" || spec == ".")
    return Status::ok();
  // As the library does (benchmark_register.cc, FindBenchmarks): a leading
  // '-' negates, the rest is an extended regular expression searched for in
  // the instance's full name.
  const bool negative = spec[0] == '-';
  const std::string pattern = negative ? spec.substr(1) : spec;
  regex_t re;
  if (int rc = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB); rc != 0) {
    char why[256];
    regerror(rc, &re, why, sizeof why);
    return Status::error(fmt::format("--benchmark_filter={}: not a regular expression: {}", spec, why));
  }
  *selected = 0;
  for (const auto& n : names) {
    const std::string full = fmt::format("{}/iterations:1/repeats:{}/manual_time", n, repetitions);
    const bool match = regexec(&re, full.c_str(), 0, nullptr, 0) == 0;
    if (match != negative) ++*selected;
  }
  regfree(&re);
  return Status::ok();
}

bool wants_gbench_console(const std::vector<std::string>& args, bool gbench_console) {
  if (gbench_console) return true;
  for (const auto& f : {"--benchmark_format", "--benchmark_color", "--benchmark_counters_tabular",
                        "--benchmark_display_aggregates_only"}) {
    std::string v;
    if (flag_value(args, f, &v)) return true;
  }
  return false;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_display_reporter(const std::vector<std::string>& args,
                                                                    bool gbench_console) {
  if (!wants_gbench_console(args, gbench_console)) return std::make_unique<Silent>();
  std::string v;
  if (flag_value(args, "--benchmark_format", &v) && v != "console") return nullptr;
  int opts = 0;
  bool color = isatty(STDOUT_FILENO);
  if (flag_value(args, "--benchmark_color", &v)) color = v == "auto" ? color : truthy(v);
  if (color) opts |= benchmark::ConsoleReporter::OO_Color;
  if (flag_value(args, "--benchmark_counters_tabular", &v) && truthy(v)) opts |= benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<Console>(static_cast<benchmark::ConsoleReporter::OutputOptions>(opts));
}

}  // namespace tracebench
