#include "tracebench/verification.h"

#include <fmt/format.h>

namespace tracebench {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kPassed: return "passed";
    case Verdict::kPartial: return "partial";
    case Verdict::kFailed: return "failed";
    case Verdict::kNotApplicable: return "not_applicable";
  }
  return "unknown";
}

namespace {

Verification fail(std::string why) { return Verification{Verdict::kFailed, std::move(why)}; }

std::string with_detail(const std::string& what, const std::string& detail) {
  return detail.empty() ? what : what + " (" + detail + ")";
}

// A verdict that passed, partial when the tracer lost more of the events it
// saw than `max_lost_share`: its figure then mixes recording and dropping.
Verification limit_losses(Verification v, const EventCounts& c, double max_lost_share) {
  const std::uint64_t seen = c.recorded + c.lost;
  if (!v.passed() || seen == 0) return v;
  const double share = static_cast<double>(c.lost) / static_cast<double>(seen);
  if (share <= max_lost_share) return v;
  return Verification{Verdict::kPartial,
                      fmt::format("{}; but {} of the {} events the tracer saw were lost ({:.1f}%, more than the "
                                  "{:g}% allowed, --max-lost-percent): the figure mixes recording and dropping, "
                                  "give the tracer bigger buffers (its README)",
                                  v.reason, c.lost, seen, 100 * share, 100 * max_lost_share)};
}

Verification judge_counts(const EventCounts& c, std::uint64_t fired, std::size_t payload_bytes,
                          bool workload_has_payload, bool timer_probe) {
  // 1. The baseline records nothing by design.
  if (!c.records_events) return Verification{Verdict::kNotApplicable, "the tracer records no events (baseline)"};

  // 1b. A disabled probe: the workload's events must not reach the tracer.
  if (c.probe_disabled) {
    if (c.recorded || c.lost)
      return fail(fmt::format("the probe is disabled, yet the tracer recorded {} and lost {} of the {} events fired",
                              c.recorded, c.lost, fired));
    if (c.tracer_errors)
      return fail(
          with_detail(fmt::format("tracer reported {} error(s) or fault(s)", c.tracer_errors), c.tracer_error_detail));
    return Verification{Verdict::kPassed,
                        with_detail(fmt::format("the probe is disabled: none of the {} events fired reached the "
                                                "tracer",
                                                fired),
                                    c.disabled_detail)};
  }

  // 1c. A probe the tracer's timer fires: its firings are the events, and
  // only the tracer's timer can count them.
  if (timer_probe && !c.timer_fired)
    return fail("the probe is fired by the tracer's timer, but the tracer does not count its timer's firings");

  // 2. Nothing recorded.
  if (c.recorded == 0)
    return fail(c.timer_fired ? fmt::format("tracer recorded zero events (its timer fired {})", *c.timer_fired)
                              : fmt::format("tracer recorded zero events (fired {})", fired));

  // 3. Counts.
  const std::uint64_t seen = c.recorded + c.lost;
  std::string counts;
  if (c.timer_fired) {
    // The timer's clock bounds its firings from above (one more per window
    // at most: its phase at each start).  Not from below: an expiry the
    // kernel handles late (a vCPU the host stalled) is forwarded past the
    // periods it missed, one firing for several.
    const std::uint64_t want = *c.timer_fired;
    if (seen > want + c.timer_windows)
      return fail(
          fmt::format("tracer recorded {} + lost {} = {} events, but its timer's clock allows {} firings in {} "
                      "windows (one more per window at most: its enables and the thread's switches back in)",
                      c.recorded, c.lost, seen, want, c.timer_windows));
    if (2 * (seen + c.timer_windows) < want)
      return fail(
          fmt::format("tracer recorded {} + lost {} = {} events, under half the {} firings its timer's clock "
                      "made time for: more than late expiries coalesced explain",
                      c.recorded, c.lost, seen, want));
    counts = fmt::format("recorded {} + lost {} = {} of the {} firings the timer's clock made time for in {} windows",
                         c.recorded, c.lost, seen, want, c.timer_windows);
    if (seen + c.timer_windows < want)
      counts +=
          fmt::format(" ({} fewer: expiries handled late, each forwarded past the periods it missed)", want - seen);
    counts += fmt::format(", while the workload ran {} ops", fired);
  } else {
    if (c.exact && seen != fired)
      return fail(fmt::format("tracer recorded {} + lost {} = {} events, but {} were fired (exact count)", c.recorded,
                              c.lost, seen, fired));
    if (!c.exact && seen < fired)
      return fail(fmt::format("tracer recorded {} + lost {} = {} events, fewer than the {} fired", c.recorded, c.lost,
                              seen, fired));
    counts = c.exact ? fmt::format("recorded {} + lost {} = fired {}", c.recorded, c.lost, fired)
                     : fmt::format("recorded {} + lost {} >= fired {} (inexact probe)", c.recorded, c.lost, fired);
  }

  // 4. Tracer-side errors and faults.
  if (c.tracer_errors)
    return fail(
        with_detail(fmt::format("tracer reported {} error(s) or fault(s)", c.tracer_errors), c.tracer_error_detail));

  const bool workload_payload = workload_has_payload && payload_bytes > 0;

  // 5. A payload copied from the workload.
  if (c.payload_source == PayloadSource::kWorkload) {
    if (!workload_payload)
      return fail("tracer claims a payload copied from the workload, but the workload hands over none");
    if (c.payload_truncated_events)
      return fail(with_detail(
          fmt::format("{} of {} recorded payloads were truncated: the tracer kept {} of the {} bytes the workload "
                      "handed over",
                      c.payload_truncated_events, c.recorded, c.payload_kept_bytes, payload_bytes),
          c.payload_mismatch_detail));
    if (c.payload_mismatched_events)
      return fail(with_detail(fmt::format("{} of {} recorded payloads differ from the workload's {} bytes",
                                          c.payload_mismatched_events, c.recorded, payload_bytes),
                              c.payload_mismatch_detail));
    if (c.payload_checked_events != c.recorded)
      return fail(fmt::format("only {} of {} recorded payloads were checked against the workload's bytes",
                              c.payload_checked_events, c.recorded));
    if (c.payload_verified != c.payload_checked_events * payload_bytes)
      return fail(fmt::format("{} payload bytes verified, but {} checked payloads of {} bytes make {}",
                              c.payload_verified, c.payload_checked_events, payload_bytes,
                              c.payload_checked_events * payload_bytes));
    return Verification{Verdict::kPassed,
                        fmt::format("{}; all {} payloads copied from the workload matched its {} bytes ({} bytes "
                                    "verified)",
                                    counts, c.recorded, payload_bytes, c.payload_verified)};
  }

  // 6. A payload the tracer wrote itself.
  if (c.payload_source == PayloadSource::kTracer) {
    if (c.payload_mismatched_events || c.payload_truncated_events)
      return fail(with_detail(fmt::format("{} of {} records the tracer wrote itself came back corrupted",
                                          c.payload_mismatched_events + c.payload_truncated_events, c.recorded),
                              c.payload_mismatch_detail));
    return Verification{
        Verdict::kPassed,
        counts + (workload_payload ? "; payload generated by the tracer, not copied from the workload: no "
                                     "workload bytes verified"
                                   : "; the tracer records a payload of its own")};
  }

  if (c.payload_checked_events || c.payload_verified)
    return fail("tracer reports checked payload bytes but no payload source");
  return Verification{Verdict::kPassed, counts + (workload_payload ? "; the tracer records no payload" : "")};
}

}  // namespace

Verification judge_events(const EventCounts& c, std::uint64_t fired, std::size_t payload_bytes,
                          bool workload_has_payload, bool timer_probe, double max_lost_share) {
  return limit_losses(judge_counts(c, fired, payload_bytes, workload_has_payload, timer_probe), c, max_lost_share);
}

Verification verify_events(const EventCounts& c, std::uint64_t fired, std::size_t payload_bytes,
                           bool workload_has_payload, EventsResult* out, bool timer_probe, double max_lost_share) {
  Verification v = judge_events(c, fired, payload_bytes, workload_has_payload, timer_probe, max_lost_share);
  out->fired = c.timer_fired ? *c.timer_fired : fired;
  out->recorded = c.recorded;
  out->lost = c.lost;
  out->exact = c.exact;
  out->payload_source = std::string(to_string(c.payload_source));
  out->payload_checked_events = c.payload_checked_events;
  out->payload_mismatched_events = c.payload_mismatched_events;
  out->payload_truncated_events = c.payload_truncated_events;
  out->payload_kept_bytes = c.payload_kept_bytes;
  out->payload_verified = c.payload_source == PayloadSource::kWorkload ? c.payload_verified : 0;
  out->tracer_errors = c.tracer_errors;
  out->verification = std::string(to_string(v.verdict));
  out->verification_reason = v.reason;
  return v;
}

}  // namespace tracebench
