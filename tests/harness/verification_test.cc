// The judge's rules one by one (tracebench/verification.h).  Each test sets
// up counts that one rule alone decides, so dropping or weakening that rule
// turns the test red.
#include <gtest/gtest.h>

#include "tracebench/verification.h"

namespace tracebench {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

EventCounts counted(std::uint64_t recorded, std::uint64_t lost = 0, bool exact = true) {
  EventCounts c;
  c.recorded = recorded;
  c.lost = lost;
  c.exact = exact;
  return c;
}

// A tracer that recorded `n` payloads of `bytes` from the workload, all good.
EventCounts with_payload(std::uint64_t n, std::size_t bytes) {
  EventCounts c = counted(n);
  c.payload_source = PayloadSource::kWorkload;
  c.payload_checked_events = n;
  c.payload_verified = n * bytes;
  return c;
}

// A profile probe: the tracer's timer fires it, so its events are the
// timer's firings.  Its clock bounds them from above, one more per window
// (an enable or the thread switched back in); fewer is said (expiries the
// kernel handled late are coalesced: a stalled vCPU), under half fails; a
// tracer that does not count them has no events to judge.
TEST(Verification, ProfileProbeIsJudgedAgainstItsTimersCount) {
  EventCounts c = counted(998);
  c.timer_fired = 1000;
  c.timer_windows = 3;
  Verification v = judge_events(c, 5000, 0, false, true);
  EXPECT_TRUE(v.passed()) << v.reason;
  EXPECT_TRUE(has(v.reason, "of the 1000 firings the timer's clock made time for in 3 windows")) << v.reason;
  EXPECT_FALSE(has(v.reason, "fewer")) << v.reason;
  EventsResult out;
  EXPECT_TRUE(verify_events(c, 5000, 0, false, &out, true).passed());
  EXPECT_EQ(out.fired, 1000u) << "the events are the timer's, not the workload's 5000 ops";

  c.recorded = 900;  // late expiries coalesced: passed, and said
  v = judge_events(c, 5000, 0, false, true);
  EXPECT_TRUE(v.passed()) << v.reason;
  EXPECT_TRUE(has(v.reason, "100 fewer: expiries handled late")) << v.reason;
  c.recorded = 490;  // under half, less the windows
  v = judge_events(c, 5000, 0, false, true);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "under half the 1000 firings")) << v.reason;
  c.recorded = 1004;  // four over, three windows
  v = judge_events(c, 5000, 0, false, true);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "its timer's clock allows 1000 firings in 3 windows")) << v.reason;
  c.recorded = 1002;
  c.lost = 1;
  EXPECT_TRUE(judge_events(c, 5000, 0, false, true).passed()) << "recorded + lost: 1003";

  EventCounts none = counted(1000);  // a tracer without the timer's count
  v = judge_events(none, 5000, 0, false, true);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "does not count its timer's firings")) << v.reason;

  EventCounts zero = counted(0);
  zero.timer_fired = 0;
  EXPECT_TRUE(judge_events(zero, 5000, 0, false, true).failed());

  EventCounts payload = counted(1000);
  payload.timer_fired = 1000;
  payload.payload_source = PayloadSource::kWorkload;
  payload.payload_checked_events = 1000;
  EXPECT_TRUE(judge_events(payload, 5000, 0, false, true).failed()) << "a timer hands over no payload";
  payload = counted(1000);
  payload.timer_fired = 1000;
  payload.tracer_errors = 1;
  EXPECT_TRUE(judge_events(payload, 5000, 0, false, true).failed());
}

TEST(Verification, BaselineTracerIsNotApplicable) {
  EventCounts c;
  c.records_events = false;
  Verification v = judge_events(c, 1000, 0, false);
  EXPECT_EQ(v.verdict, Verdict::kNotApplicable) << v.reason;
  EXPECT_EQ(to_string(v.verdict), "not_applicable");
}

// A deliberately disabled probe passes when nothing reached the tracer, and
// fails when anything did (recorded or lost) or the tracer faulted.
TEST(Verification, DisabledProbeMustRecordNothing) {
  EventCounts c;
  c.probe_disabled = true;
  c.disabled_detail = "live on syscall::acct:entry";
  Verification v = judge_events(c, 1000, 0, false);
  EXPECT_TRUE(v.passed()) << v.reason;
  EXPECT_TRUE(has(v.reason, "none of the 1000 events fired reached the tracer (live on syscall::acct:entry)"))
      << v.reason;
  c.recorded = 1;
  EXPECT_FALSE(judge_events(c, 1000, 0, false).passed());
  c.recorded = 0;
  c.lost = 3;
  EXPECT_FALSE(judge_events(c, 1000, 0, false).passed());
  c.lost = 0;
  c.tracer_errors = 1;
  EXPECT_FALSE(judge_events(c, 1000, 0, false).passed());
}

TEST(Verification, ExactCountsThatMatchPass) {
  Verification v = judge_events(counted(990, 10), 1000, 0, false);
  EXPECT_TRUE(v.passed()) << v.reason;
  EXPECT_TRUE(has(v.reason, "recorded 990 + lost 10 = fired 1000")) << v.reason;
}

TEST(Verification, ZeroRecordedFails) {
  // Even when lost covers every fired event.
  Verification v = judge_events(counted(0, 1000), 1000, 0, false);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "zero events")) << v.reason;
}

TEST(Verification, ExactUnderRecordingFails) {
  Verification v = judge_events(counted(999), 1000, 0, false);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "999")) << v.reason;
  EXPECT_TRUE(has(v.reason, "1000 were fired")) << v.reason;
}

TEST(Verification, ExactOverRecordingFails) {
  // Records of events the workload did not fire.
  Verification v = judge_events(counted(1001), 1000, 0, false);
  EXPECT_TRUE(v.failed()) << v.reason;
}

TEST(Verification, InexactAllowsMoreButNotFewer) {
  EXPECT_TRUE(judge_events(counted(1500, 0, false), 1000, 0, false).passed());
  Verification v = judge_events(counted(900, 50, false), 1000, 0, false);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "fewer than the 1000 fired")) << v.reason;
}

TEST(Verification, TracerErrorsFail) {
  // 240,064 faults, the count of probe firings otherwise fine: a D-VM
  // script that faults on every firing.
  EventCounts c = counted(240064);
  c.tracer_errors = 240064;
  c.tracer_error_detail = "240064 x invalid address (0x0)";
  Verification v = judge_events(c, 240064, 0, false);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "240064 error(s)")) << v.reason;
  EXPECT_TRUE(has(v.reason, "invalid address")) << v.reason;
}

TEST(Verification, WorkloadPayloadAllCheckedPasses) {
  Verification v = judge_events(with_payload(1000, 64), 1000, 64, true);
  EXPECT_TRUE(v.passed()) << v.reason;
  EXPECT_TRUE(has(v.reason, "64000 bytes verified")) << v.reason;
}

TEST(Verification, WorkloadPayloadNotAllCheckedFails) {
  EventCounts c = with_payload(1000, 64);
  c.payload_checked_events = 999;
  c.payload_verified = 999 * 64;
  Verification v = judge_events(c, 1000, 64, true);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "only 999 of 1000")) << v.reason;
}

TEST(Verification, WorkloadPayloadMismatchFailsWithTheCount) {
  EventCounts c = with_payload(1000, 64);
  c.payload_mismatched_events = 3;
  c.payload_verified = 997 * 64;
  c.payload_mismatch_detail = "event 17: byte 5 differs";
  Verification v = judge_events(c, 1000, 64, true);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "3 of 1000 recorded payloads differ")) << v.reason;
  EXPECT_TRUE(has(v.reason, "event 17")) << v.reason;
}

TEST(Verification, TruncatedPayloadFailsWithTheKeptLength) {
  // ftrace's trace_marker keeps ~4 KiB of a larger write.
  EventCounts c = with_payload(1000, 4096);
  c.payload_truncated_events = 1000;
  c.payload_kept_bytes = 4054;
  c.payload_verified = 0;
  Verification v = judge_events(c, 1000, 4096, true);
  EXPECT_TRUE(v.failed());
  EXPECT_TRUE(has(v.reason, "1000 of 1000 recorded payloads were truncated")) << v.reason;
  EXPECT_TRUE(has(v.reason, "kept 4054 of the 4096 bytes")) << v.reason;
}

TEST(Verification, VerifiedBytesMustCoverEveryCheckedPayload) {
  // An adapter that counts matching prefixes as verified bytes.
  EventCounts c = with_payload(1000, 64);
  c.payload_verified = 1000 * 64 - 1;
  EXPECT_TRUE(judge_events(c, 1000, 64, true).failed());
}

TEST(Verification, WorkloadPayloadClaimWithoutOneFails) {
  EventCounts c = with_payload(1000, 0);
  EXPECT_TRUE(judge_events(c, 1000, 0, true).failed());
  EXPECT_TRUE(judge_events(with_payload(1000, 64), 1000, 64, false).failed());
}

TEST(Verification, TracerGeneratedPayloadIsReportedAndNeverVerified) {
  EventCounts c = counted(1000);
  c.payload_source = PayloadSource::kTracer;
  c.payload_checked_events = 1000;
  c.payload_verified = 64000;  // an adapter must not, but the judge never counts it
  EventsResult r;
  Verification v = verify_events(c, 1000, 64, true, &r);
  EXPECT_TRUE(v.passed()) << v.reason;
  EXPECT_TRUE(has(v.reason, "generated by the tracer")) << v.reason;
  EXPECT_EQ(r.payload_source, "tracer");
  EXPECT_EQ(r.payload_verified, 0u);
}

TEST(Verification, CorruptedTracerRecordsFail) {
  EventCounts c = counted(1000);
  c.payload_source = PayloadSource::kTracer;
  c.payload_checked_events = 1000;
  c.payload_mismatched_events = 2;
  EXPECT_TRUE(judge_events(c, 1000, 64, true).failed());
}

TEST(Verification, CheckedBytesWithoutASourceFail) {
  EventCounts c = counted(1000);
  c.payload_verified = 64000;
  EXPECT_TRUE(judge_events(c, 1000, 64, true).failed());
}

TEST(Verification, VerifyEventsFillsTheResult) {
  EventCounts c = with_payload(1000, 64);
  c.lost = 0;
  EventsResult r;
  Verification v = verify_events(c, 1000, 64, true, &r);
  EXPECT_TRUE(v.passed());
  EXPECT_EQ(r.fired, 1000u);
  EXPECT_EQ(r.recorded, 1000u);
  EXPECT_EQ(r.payload_source, "workload");
  EXPECT_EQ(r.payload_checked_events, 1000u);
  EXPECT_EQ(r.payload_verified, 64000u);
  EXPECT_EQ(r.verification, "passed");
  EXPECT_EQ(r.verification_reason, v.reason);

  c.payload_truncated_events = 5;
  c.payload_kept_bytes = 60;
  v = verify_events(c, 1000, 64, true, &r);
  EXPECT_EQ(r.verification, "failed");
  EXPECT_EQ(r.payload_truncated_events, 5u);
  EXPECT_EQ(r.payload_kept_bytes, 60u);
  EXPECT_TRUE(has(r.verification_reason, "kept 60")) << r.verification_reason;
}

}  // namespace
}  // namespace tracebench
