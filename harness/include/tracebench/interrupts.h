// Interrupts per event: /proc/interrupts read around each block (outside the
// timed region), so a result can say what a tracer's events cost beside the
// instructions on the measured CPU: irq_work self-interrupts, cross-CPU
// wakeups (function-call and rescheduling IPIs), TLB shootdowns.  On a VM each
// of those is an exit to the hypervisor, which is where a figure of many
// microseconds per event comes from.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tracebench {

// One reading: the per-CPU counts of each named row (LOC, IWI, RES, CAL, TLB,
// ...); numbered device rows are summed into "device".
struct InterruptSnapshot {
  std::map<std::string, std::vector<std::uint64_t>> counts;  // kind -> per CPU
  std::map<std::string, std::string> descriptions;           // kind -> "IRQ work interrupts"
};

// Parses the text of /proc/interrupts; an empty snapshot when it is not that.
InterruptSnapshot parse_interrupts(const std::string& text);
InterruptSnapshot read_interrupts();  // empty when /proc/interrupts is unreadable

// Sums of the deltas over blocks of one kind (traced or baseline) and the
// events those blocks fired.
class InterruptTally {
 public:
  void add(const InterruptSnapshot& before, const InterruptSnapshot& after, bool traced, std::uint64_t events);
  // kind -> CPU -> (traced per event - baseline per event), for the kinds
  // where some CPU's difference reaches `min_abs`.
  std::map<std::string, std::map<int, double>> extra_per_event(double min_abs = 0.001) const;
  const std::map<std::string, std::string>& descriptions() const { return descriptions_; }

 private:
  struct Side {
    std::map<std::string, std::vector<std::uint64_t>> delta;
    std::uint64_t events = 0;
  };
  Side traced_, baseline_;
  std::map<std::string, std::string> descriptions_;
};

}  // namespace tracebench
