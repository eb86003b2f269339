// The one judge of a benchmark's events: turns what a tracer reported
// (EventCounts, tracebench/tracer.h) and what the workload did into a verdict
// with its reason in words.  Every tracer goes through it; no adapter decides
// pass or fail on its own.
//
// Rules, in order (the first that fails decides):
//   1. A tracer that records nothing by design (the baseline "none")
//      is not_applicable.
//   1c. A probe the tracer's timer fires (timer_probe, ProbeKind::kProfile):
//      the tracer must count its timer's firings (EventCounts::timer_fired);
//      in rule 3, recorded + lost must then be at most them plus one per
//      window (an enable or the thread switched back in) and at least half
//      of them (an expiry handled late is forwarded past the periods it
//      missed: fewer is said, not failed).  `fired` is the workload's ops,
//      said only.
//   2. recorded == 0 fails.
//   3. exact counts: recorded + lost must equal the events fired while the
//      tracer was enabled; inexact counts: recorded + lost >= fired.
//   4. Any tracer-side error or fault fails.
//   5. When the workload hands over a payload (it carries one and
//      payload_bytes > 0) and the tracer records it from the workload,
//      every recorded payload must have been checked, none may be truncated
//      (a kept length other than payload_bytes) and none may differ; the
//      verified bytes must be exactly checked events x payload_bytes.
//      A tracer that claims the workload's payload where the workload hands
//      none fails too.
//   6. A payload the tracer generated itself is reported as such: it may be
//      checked (a corrupted one is a tracer error), but its bytes are never
//      counted as verified workload bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tracebench/results.h"
#include "tracebench/tracer.h"

namespace tracebench {

// kPartial: every count adds up, but the tracer lost more of the events
// than allowed: the figure is kept (status ok), the verdict says it is not
// the cost of recording every event, and the model leaves it out.
enum class Verdict { kPassed, kPartial, kFailed, kNotApplicable };

std::string_view to_string(Verdict v);  // "passed", "partial", "failed", "not_applicable"

// Share of the events the tracer saw (recorded + lost) it may lose and still
// pass (`run --max-lost-percent`, `model validate --max-lost-percent`).
inline constexpr double kDefaultMaxLostShare = 0.05;

struct Verification {
  Verdict verdict = Verdict::kNotApplicable;
  std::string reason;  // why, in words (also when passed)
  bool passed() const { return verdict == Verdict::kPassed; }
  bool failed() const { return verdict == Verdict::kFailed; }
};

// fired: events fired while the tracer was enabled; payload_bytes: bytes the
// workload handed over per event (AttachSpec::payload_bytes);
// workload_has_payload: the workload carries a payload at all
// (Workload::takes_payload); timer_probe: the probe is a profile probe,
// fired by the tracer's timer; max_lost_share: above it a verdict that
// would pass is partial.
Verification judge_events(const EventCounts& c, std::uint64_t fired, std::size_t payload_bytes,
                          bool workload_has_payload, bool timer_probe = false,
                          double max_lost_share = kDefaultMaxLostShare);

// Judges and writes the whole `events` object of a result (counts, payload
// fields, verdict and reason; `fired` is the timer's count where the tracer
// gave one).  The runner's one call.
Verification verify_events(const EventCounts& c, std::uint64_t fired, std::size_t payload_bytes,
                           bool workload_has_payload, EventsResult* out, bool timer_probe = false,
                           double max_lost_share = kDefaultMaxLostShare);

}  // namespace tracebench
