// Counters read around blocks of events (never around one cheap event: a
// read() of a perf software event costs thousands of cycles here).  PAPI
// presets where the CPU exposes them; perf software events (task-clock,
// context switches, page faults, migrations) through perf_event_open where
// it does not.  A counter that cannot be opened is reported unavailable with
// the reason, never as 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench {

struct CounterInfo {
  std::string name;    // "PAPI_TOT_INS", "task-clock", ...
  std::string source;  // "papi" or "perf_event"
  bool live = false;
  std::string unavailable_reason;
};

// Whether the kernel exposes the CPU's hardware PMU to perf (a "cpu" event
// source, or "cpu_core"/"cpu_atom" on hybrid CPUs) under `root` ("" for the
// running system; tests give a directory that mimics /sys).  A VM without
// PMU passthrough has none: no PAPI preset and no hardware event can count.
bool hardware_pmu_exposed(const std::string& root = "");

// Why perf_event_open refused a counter (errno `err`; `hardware`: a hardware
// event or a PAPI preset), in words that say what to do, from what the
// kernel exposes under `root`: perf_event_paranoid for EACCES/EPERM, the
// missing PMU for a hardware event.  "" adds nothing to the errno's text.
std::string perf_refusal_hint(int err, bool hardware, const std::string& root = "");

class Counters {
 public:
  Counters() = default;
  ~Counters();
  Counters(const Counters&) = delete;
  Counters& operator=(const Counters&) = delete;

  // Opens counters for the calling thread; must be called on the measured
  // thread.  Never fails hard: what cannot be opened is listed unavailable.
  void open();
  void close();

  const std::vector<CounterInfo>& info() const { return info_; }
  std::vector<std::string> live_names() const;
  std::size_t live_count() const { return live_.size(); }

  // Current values of the live counters, in live_names() order.
  void read(std::vector<std::int64_t>* values);

  // Median cycles one read() costs, and the counter deltas of an empty
  // block (two back-to-back reads): both are measured at open().
  double read_cost_cycles() const { return read_cost_cycles_; }
  const std::vector<double>& empty_block_delta() const { return empty_delta_; }
  std::string papi_version() const { return papi_version_; }

 private:
  void open_papi();
  void open_perf();
  void calibrate();

  std::vector<CounterInfo> info_;
  std::vector<std::size_t> live_;  // indices into info_
  int papi_eventset_ = -1;
  std::size_t papi_live_ = 0;
  int perf_leader_ = -1;
  std::vector<int> perf_fds_;
  std::size_t perf_live_ = 0;
  std::vector<std::uint64_t> perf_buf_;
  std::vector<long long> papi_buf_;
  double read_cost_cycles_ = 0;
  std::vector<double> empty_delta_;
  std::string papi_version_;
  bool open_ = false;
};

}  // namespace tracebench
