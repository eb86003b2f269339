#include "cases.h"

#include <algorithm>
#include <string>

namespace tracebench::crosscheck {
namespace {

// Loop sizes: a traced run fires about what a quick suite block does
// (10 ms), in chunks long enough that the two clock reads around a chunk
// are under 1% of an untraced syscall chunk.
constexpr const char* kLoop = "tracebench-crosscheck-loop";
constexpr const char* kUstLoop = "tracebench-crosscheck-ust";
// The LTTng cases' warm-up: with 64-byte events (~80 bytes each in the
// buffer) the channel's 8 x 2 MiB written through once, so that the timed
// events find its pages touched, as the suite's repetitions do by their
// median.  In a new session every page is first touched by an event: on one
// Intel host that made the 64-byte event cost 115-194 ns against ~105 warm.
constexpr std::uint64_t kUstWarm = 250000;
// Why the LTTng cases compare the suite's amortized overhead.
constexpr const char* kLoopSpansPages =
    "a chunk of the loop spans several buffer pages of records, so its median holds their cost (and the host's "
    "short gaps), which the suite's median sample of a few dozen events leaves out: the suite's amortized figure is "
    "compared";

std::vector<Case> make_cases() {
  std::vector<Case> c;
  c.push_back({"untraced_getpid",
               "untraced getpid(2), ns per call",
               "C loop (clock_gettime)",
               ToolKind::kLoopAlone,
               {"none", "getpid", "", 0, {}, SuiteFigure::kUntraced},
               {kLoop, "getpid", 50000, 100, 0},
               "syscall(SYS_getpid) in a C loop pinned to the measured CPU, the median chunk of 100 calls",
               "the suite times batches of a few calls with rdtsc and subtracts its clock floor (its median moves "
               "in steps: here 3.4 ns, samples of 3 calls); the loop times chunks of 100 with clock_gettime"});
  c.push_back({"untraced_getppid",
               "untraced getppid(2), ns per call",
               "perf bench syscall basic",
               ToolKind::kPerfBench,
               {"none", "getppid", "", 0, {}, SuiteFigure::kUntraced},
               {"", "", 200000, 0, 0},
               "`perf bench syscall basic -l 200000` pinned to the measured CPU, SCHED_FIFO: its usecs/op",
               "perf bench gives the mean over all its calls, interrupts included; the suite the median sample"});
  c.push_back({"ftrace_getpid",
               "syscalls:sys_enter_getpid in a tracefs instance, ns per event",
               "tracefs by hand",
               ToolKind::kTracefs,
               {"ftrace", "getpid", "", 0, {{"buffer_kb", "8192"}, {"clock", "local"}}, SuiteFigure::kOverhead},
               {kLoop, "getpid", 20000, 100, 0},
               "an instance made by writing tracefs files (buffer_size_kb 8192, trace_clock local, overwrite, "
               "set_event_pid = the loop), the event's enable file written around each traced run",
               "the suite reads the buffer back after each block; by hand the buffer is read only as its counters"});
  c.push_back({"ebpf_tracepoint",
               "a count on syscalls:sys_enter_getpid, ns per event",
               "bpftrace",
               ToolKind::kBpftrace,
               {"ebpf", "getpid", "update", 0, {}, SuiteFigure::kOverhead},
               {kLoop, "getpid", 50000, 100, 0},
               "bpftrace -e 'tracepoint:syscalls:sys_enter_getpid /pid == LOOP/ { @ = count(); }', one per traced "
               "run",
               "bpftrace compiles its own program; the suite's action `update` is that program as bpftrace 0.17 "
               "compiles it (per-CPU map lookup, add, bpf_map_update_elem), loaded through libbpf"});
  c.push_back({"ebpf_uprobe",
               "a count on a uprobe at a one-byte nop, ns per event",
               "bpftrace",
               ToolKind::kBpftrace,
               {"ebpf", "site_nop", "update", 0, {}, SuiteFigure::kOverhead},
               {kLoop, "nop", 20000, 100, 0},
               "bpftrace -e 'uprobe:LOOP:tb_xc_nop /pid == LOOP/ { @ = count(); }' on the loop's own nop function, "
               "one per traced run",
               "two binaries: the uprobe sits on the suite's tb_site_nop and on the loop's tb_xc_nop (both `nop; "
               "ret`); bpftrace's map vs the suite's `update` action as above"});
  c.push_back({"perf_getpid",
               "perf samples of syscalls:sys_enter_getpid, period 1, ns per event",
               "perf record",
               ToolKind::kPerfRecord,
               {"perf", "getpid", "", 0, {{"sample", "record"}, {"mmap_pages", "512"}}, SuiteFigure::kOverhead},
               {kLoop, "getpid", 8000, 100, 0},
               "perf record -e syscalls:sys_enter_getpid -c 1 -m 512 -p LOOP -D -1, one per traced run, switched on "
               "and off through its control FIFO",
               "the suite's consumer thread reads the rings and drops the samples; perf record reads them in "
               "another process and writes perf.data (same sample layout: IP|TID|TIME|CPU|PERIOD|RAW)"});
  c.push_back({"lttng_hot",
               "LTTng-UST tracebench:hot (one 32-bit field), ns per event",
               "lttng CLI",
               ToolKind::kLttng,
               {"lttng", "ust_hot", "", 0, {}, SuiteFigure::kAmortized},
               {kUstLoop, "hot", 100000, 2000, 0, kUstWarm},
               "an `lttng` CLI session (per-UID buffers, discard, 8 x 2 MiB sub-buffers, the loop's vpid tracked), "
               "enable-event/disable-event around each traced run, events counted in the trace with babeltrace2",
               std::string("the suite's provider is dlopen()ed into tracebench; the loop links the same probes "
                           "statically; ") +
                   kLoopSpansPages});
  c.push_back({"lttng_payload64",
               "LTTng-UST tracebench:payload with 64 bytes, ns per event",
               "lttng CLI",
               ToolKind::kLttng,
               {"lttng", "ust_payload", "", 64, {}, SuiteFigure::kAmortized},
               {kUstLoop, "payload", 100000, 2000, 64, kUstWarm},
               "as lttng_hot, the event tracebench:payload with 64 bytes; every event's bytes checked",
               std::string("as lttng_hot; the payload bytes differ (the suite's pattern, the loop's alphabet); ") +
                   kLoopSpansPages});
  return c;
}

}  // namespace

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = make_cases();
  return cases;
}

const Case* find_case(const std::string& name) {
  for (const auto& c : all_cases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& c : all_cases()) names.push_back(c.name);
  return names;
}

std::string run_arguments(const SuiteSide& s) {
  std::string a = "-t " + s.tracer + " -w " + s.workload;
  if (!s.action.empty()) a += " -a " + s.action;
  if (s.payload > 0) a += " -p " + std::to_string(s.payload);
  for (const auto& [k, v] : s.options) a += " -o " + s.tracer + "." + k + "=" + v;
  return a;
}

}  // namespace tracebench::crosscheck
