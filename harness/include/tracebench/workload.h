// A workload fires events at one probe point; the harness times it with and
// without a tracer attached.  One file per benchmark family in bench/
// registers its workloads with one line each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench {

// Per-thread state a workload keeps between fire() calls (file descriptors,
// payload buffers).  Created by setup() on the firing thread.
class WorkloadState {
 public:
  virtual ~WorkloadState() = default;
  // Fires exactly `n` events at the workload's probe point.  This is the
  // measured region: no allocation, no logging.
  virtual void fire(std::uint64_t n) = 0;
};

struct WorkloadParams {
  std::size_t payload_bytes = 0;
  std::string marker_file;  // kMarker workloads: from Tracer::marker_file()
  int thread_index = 0;     // 0 = the measured thread; others add contention
};

struct Workload {
  std::string name;    // "getpid"
  std::string family;  // file in bench/ that defines it ("syscalls")
  std::string description;
  ProbePoint probe;  // where its events fire
  bool takes_payload = false;
  // Called on the firing thread after the tracer is attached.
  std::function<Status(const WorkloadParams&, std::unique_ptr<WorkloadState>*)> setup;
  // Optional: whether the workload can run here at all (the companion
  // module loaded, ...); empty means always.  Checked when planning, so an
  // unavailable workload is skipped with its reason instead of failing.
  std::function<Availability()> available;
  // Fewest events per timed sample.  A workload whose fire() pays a fixed
  // entry cost (an ioctl that starts an in-kernel loop) sets it so that the
  // entry is amortized over many events; the automatic batch never goes below.
  std::uint64_t min_batch = 1;
  // A payload whose size the event fixes (an LTTng-UST fixed-size array):
  // the plan uses these sizes instead of the sweep and refuses others.
  std::vector<std::size_t> fixed_payloads;
  // Non-empty: planned with this tracer only (a site no other tracer sees,
  // e.g. the delay tracer's known-cost sites); empty: with every tracer
  // that supports the probe.
  std::string only_tracer;
  // The largest payload the workload hands over (a kernel module's fixed
  // limit): the plan refuses a larger one before anything is attached.
  std::size_t max_payload_bytes = SIZE_MAX;
  // Planned only when -w names it, never in a run of every workload: one
  // whose tracers take long to set up and tear down at each block (a
  // many-probe workload's hundreds of uprobes).
  bool only_when_named = false;
};

const std::vector<Workload>& workload_registry();
const Workload* find_workload(std::string_view name);
bool register_workload(Workload w);

}  // namespace tracebench

#define TRACEBENCH_REGISTER_WORKLOAD(id, ...)                                         \
  [[maybe_unused]] static const bool TRACEBENCH_CONCAT(tb_registered_workload_, id) = \
      ::tracebench::register_workload(__VA_ARGS__)
