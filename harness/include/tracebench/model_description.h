// What a tracer tells the cost model about itself (Tracer::model()): the
// held-out scenarios of Table 7 it has (`tracebench model suite` measures
// and validates them) and the options the model must know by meaning rather
// than by name (which of them vary its consumer's wakeups, which make two
// runs comparable, how its buffer holds a validation segment).  The harness
// learns all of it from here, never from a tracer's name: a new tracer that
// fills it in appears in `model suite` with no change outside its folder.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tracebench {

// One held-out macro scenario (the paper's sys, sys10, pid, a payload
// recording scenario with its consumer, profile; or the tracer's own, e.g. a
// kernel function probe).
struct ModelScenario {
  std::string name;  // sys, sys10, pid, payload, profile, ...
  std::string what;  // in words, for the table
  std::string workload, action;
  std::uint64_t payload_bytes = 0;
  double rate_hz = 0;
  int handlers = 1;  // > 1: the extra handlers' predicates are false (sys10)
  // TRACER.KEY=VALUE options of every run and validation of the scenario
  // (its model entry is the one with these options), e.g. a buffer that
  // holds a validation segment's records (ModelDescription::segment_buffer).
  std::vector<std::string> options;
  // TRACER.KEY=VALUE options that wake the consumer on few records: the
  // payload sweep runs again with them, which tells what the probe pays per
  // wakeup and the consumer's per-wakeup term (none: no such run).
  std::vector<std::string> few_wakeups;
  // `-o O` for each of `options`, then `-o T.ecbs=N -o
  // T.extra_predicate=false` for a scenario with handlers.
  std::vector<std::string> option_args(const std::string& tracer) const;
  // The handler counts `model suite` sweeps for a scenario with handlers
  // (2, 4 and its own, once each), each with the extra predicates holding and failing;
  // none for one handler.  A tracer that compiles its handlers ahead (the
  // VM lab's SystemTap scripts) compiles these.
  std::vector<int> handler_sweep() const {
    if (handlers <= 1) return {};
    std::vector<int> counts = {2, 4};
    if (handlers != 2 && handlers != 4) counts.push_back(handlers);
    return counts;
  }
};

// A buffer emptied only between validation segments (read while the
// tracer is disabled) must hold a segment's records: the option that sizes
// it, in KiB, and the bytes a record takes beyond its payload.
struct SegmentBuffer {
  std::string option_kib;  // TRACER.KEY the size in KiB is given to
  std::uint64_t record_overhead_bytes = 0;
};

struct ModelDescription {
  // Table 7's scenarios; none: the suite has no row for the tracer but
  // "no held-out scenarios".
  std::vector<ModelScenario> scenarios;
  // Option keys (without the tracer's prefix) that set how often the
  // consumer is woken, or its timer fires: runs that differ only in them
  // are pooled for the consumer fit and the probe's per-wakeup term.
  std::set<std::string> wakeup_knobs;
  // The runs that would vary them, in words with the `-o` to type, for a
  // fit that lacks them (empty: the tracer has no option for it).
  std::string wakeup_hint;
  // A consumer that wakes on its own timer (a switch rate): a
  // TRACER.KEY=VALUE at a second rate, the runs at which tell a pass's cost
  // from a record's (and the counting scenarios' runs after an idle gap
  // tell a pass on an idle CPU).  Unset: the consumer is woken by records.
  std::optional<std::string> second_timer_rate;
  // What the tracer's empty handler ("empty" action, the model's flow
  // alone) and the action compared with it both need set (TRACER.KEY=VALUE):
  // the sys and payload scenarios run their action beside it.  Unset: the
  // tracer has no empty handler.
  std::optional<std::vector<std::string>> empty_handler_options;
  std::optional<SegmentBuffer> segment_buffer;
};

// A scenario with the fields every one has.
inline ModelScenario model_scenario(std::string name, std::string what, std::string workload, std::string action,
                                    std::uint64_t payload, double rate, int handlers = 1) {
  ModelScenario s;
  s.name = std::move(name);
  s.what = std::move(what);
  s.workload = std::move(workload);
  s.action = std::move(action);
  s.payload_bytes = payload;
  s.rate_hz = rate;
  s.handlers = handlers;
  return s;
}

// The words of the paper's scenarios, shared by the tracers that have them.
inline constexpr const char* kSysWhat = "syscall probe, count";
inline constexpr const char* kSys10What = "ten handlers on the syscall probe, nine predicates false";
inline constexpr const char* kPidWhat = "user-function probe (uprobe), count";

}  // namespace tracebench
