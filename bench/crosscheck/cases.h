// The cross-check's cases: what the suite measures, which independent tool
// measures the same around the reference loop, and what differs between the
// two designs.  bench/crosscheck/README.md explains each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tracebench::crosscheck {

// The suite's figure a case compares.
enum class SuiteFigure {
  kOverhead,   // traced minus untraced per event (median over repetitions)
  kAmortized,  // the same with costs paid once in many events spread over them
  kUntraced,   // the untraced cost per event (the baseline's median sample)
};

// The independent side.
enum class ToolKind {
  kLoopAlone,   // the loop program alone, untraced
  kPerfBench,   // `perf bench syscall basic`, its own loop
  kTracefs,     // a tracefs instance set up by hand
  kBpftrace,    // a bpftrace one-liner
  kPerfRecord,  // `perf record`
  kLttng,       // an `lttng` CLI session
};

struct SuiteSide {
  std::string tracer, workload, action;  // action "": the tracer's default
  std::size_t payload = 0;
  std::map<std::string, std::string> options;  // the tracer's, key -> value
  SuiteFigure figure = SuiteFigure::kOverhead;
};

// The reference loop program and what one run of it fires.
struct LoopSide {
  std::string program;  // tracebench-crosscheck-loop or -ust
  std::string mode;     // getpid, nop, hot, payload
  std::uint64_t calls = 0, chunk = 0;
  std::uint32_t payload = 0;
  // Events fired before the timed ones; 0: a tenth of `calls`.  A tracer
  // whose buffer pages are first touched by the loop's events needs the whole
  // buffer written once, as the suite's repetitions have by their median.
  std::uint64_t warm = 0;
};

struct Case {
  std::string name;  // untraced_getpid, ftrace_getpid, ...
  std::string what;  // what both sides measure
  std::string tool;  // the independent tool, as the table names it
  ToolKind kind = ToolKind::kLoopAlone;
  SuiteSide suite;
  LoopSide loop;
  std::string reference;  // the reference side's set-up in one line
  std::string differs;    // what differs between the designs ("": nothing known)
};

const std::vector<Case>& all_cases();
const Case* find_case(const std::string& name);
std::vector<std::string> case_names();

// "-t ftrace -w getpid -a count -o ftrace.buffer_kb=8192": the suite side as
// `tracebench run` arguments (for the reader, and to rerun one side).
std::string run_arguments(const SuiteSide& s);

}  // namespace tracebench::crosscheck
