// What a delay site's spin adds by a plain loop, beside what `run` recovers:
//
//   tbdelay::PlainFigure f;
//   TB_TRY(tbdelay::plain_added_ns("delay_getpid", spin_cycles, tsc_hz, cpu, &f));
//
// The site's own workload fires in interleaved blocks with the switch on
// (the spin the run's tracer chose) and off, each sample of a few events
// timed alone with the TSC; a pair's figure is the traced block's median
// minus the untraced one's, and the figure the median of the pairs.  None of
// `run`'s machinery (pilot, floor, batch, repetitions, judge) is in it.
//
// Where a spin before a syscall costs less than it spins (a spin that waits
// on the TSC overlaps whatever the syscall left pending: its spin is
// wall-clock time, not work), N is not the known answer of the syscall site,
// and `tracebench selftest` judges that case against this figure instead.
#pragma once

#include <cstdint>

#include "tracebench/status.h"

namespace tbdelay {

struct PlainFigure {
  double added_ns = 0;      // the median of the pairs' differences, ns per event
  double halfwidth_ns = 0;  // half the 95% interval of that median
};

// `workload` must be one of the delay sites (bench/delay_sites.cc); the
// calling thread is pinned to `cpu` and the switch left off on return.
tracebench::Status plain_added_ns(const char* workload, std::uint64_t spin_cycles, double tsc_hz, int cpu,
                                  PlainFigure* out);

}  // namespace tbdelay
