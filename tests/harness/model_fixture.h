// A small cost model for the tests that read and write one: one entry
// (eBPF, syscall probe, count) with a fixed cost and no per-byte term.
#pragma once

#include "tracebench/model.h"

namespace tracebench::fixtures {

inline model::Model one_entry_model() {
  model::Model m;
  m.host = "h";
  m.tsc_hz = 2e9;
  m.runs = {"r1"};
  model::Entry e;
  e.tracer = "ebpf";
  e.probe_kind = "syscall";
  e.action = "count";
  e.fixed.cycles = 100;
  e.fixed.ci_low = 95;
  e.fixed.ci_high = 105;
  e.fixed.n = 6;
  e.per_byte = model::Param::absent("one payload size");
  m.entries.push_back(e);
  return m;
}

}  // namespace tracebench::fixtures
