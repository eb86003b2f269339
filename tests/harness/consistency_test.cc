// Integrity of figures and inputs: the result validator every reader applies
// (tracebench/result_check.h), interval labels, the resolution rule for a
// forced batch, the verification's lost-event limit, the model's term checks
// and the verdict of a validation that did not hold its scenario.  Each case
// breaks one rule, so dropping that rule turns it red.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "tracebench/clock_check.h"
#include "tracebench/model.h"
#include "tracebench/result_check.h"
#include "tracebench/stats.h"
#include "tracebench/verification.h"

namespace tracebench {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr double kHz = 2e9;

VariantResult variant(const std::vector<double>& cycles, const std::vector<double>& medians) {
  VariantResult v;
  v.cycles = summarize(cycles);
  std::vector<double> ns(cycles);
  for (double& x : ns) x *= 1e9 / kHz;
  v.ns = summarize(ns);
  v.samples = cycles.size();
  v.repetition_medians = medians;
  return v;
}

// A result as `tracebench run` writes it: 6 repetitions, none dropped, every
// figure consistent with the others.
RunResult good_run() {
  RunResult r;
  r.context.tsc_hz = kHz;
  r.context.tsc_calibrated_hz = kHz * 1.001;
  r.context.floor_cycles = 40;
  BenchmarkResult b;
  b.name = "ftrace/getpid/count/payload:0/threads:1";
  b.tracer = "ftrace";
  b.repetitions = 6;
  b.dropped_repetitions = 0;
  b.batch = 10;
  b.samples_per_block = 100;
  b.baseline = variant({300, 305, 310, 320, 330, 400}, {301, 304, 306, 309, 311, 315});
  b.traced = variant({900, 905, 910, 920, 930, 1400}, {901, 906, 905, 912, 915, 925});
  std::vector<double> diff;
  for (int i = 0; i < 6; ++i) diff.push_back(b.traced.repetition_medians[i] - b.baseline.repetition_medians[i]);
  b.overhead_cycles = median_ci(diff);
  MedianCI ns = *b.overhead_cycles;
  for (double* x : {&ns.median, &ns.low, &ns.high}) *x *= 1e9 / kHz;
  b.overhead_ns = ns;
  // Amortized: a cost in few events, 4 cycles a repetition more.
  for (double& x : diff) x += 4;
  b.amortized_overhead_cycles = median_ci(diff);
  ns = *b.amortized_overhead_cycles;
  for (double* x : {&ns.median, &ns.low, &ns.high}) *x *= 1e9 / kHz;
  b.amortized_overhead_ns = ns;
  b.events.verification = "passed";
  r.benchmarks.push_back(b);
  return r;
}

// The field a refusal names, and the file.
void expect_refused(const RunResult& r, const std::string& field) {
  Status s = check_result(r, "R/result.json");
  ASSERT_FALSE(s.is_ok()) << "accepted, expected a refusal naming " << field;
  EXPECT_TRUE(has(s.message(), "R/result.json: ")) << s.message();
  EXPECT_TRUE(has(s.message(), field)) << s.message();
}

TEST(ResultCheck, AConsistentResultPasses) {
  RunResult r = good_run();
  Status s = check_result(r, "R/result.json");
  EXPECT_TRUE(s.is_ok()) << s.message();
  // An error benchmark has no figures to check.
  BenchmarkResult e;
  e.name = "x";
  e.status = "error";
  r.benchmarks.push_back(e);
  EXPECT_TRUE(check_result(r, "R/result.json").is_ok());
}

TEST(ResultCheck, EachInconsistencyIsRefusedNamingItsField) {
  const std::vector<std::pair<std::function<void(RunResult&)>, std::string>> cases = {
      // Fewer repetition medians than the repetitions kept.
      {[](RunResult& r) {
         auto& b = r.benchmarks[0];
         b.baseline.repetition_medians.resize(2);
         b.traced.repetition_medians.resize(2);
         b.overhead_cycles->n = b.overhead_ns->n = 2;
       },
       "2 medians for 6 repetitions"},
      {[](RunResult& r) { r.benchmarks[0].traced.repetition_medians.resize(5); }, "5 traced repetition medians"},
      // A per-event figure below what an empty sample gives (-floor/batch = -4).
      {[](RunResult& r) {
         for (auto* v : {&r.benchmarks[0].baseline, &r.benchmarks[0].traced})
           for (double& x : v->repetition_medians) x = -x;
       },
       "repetition_medians_cycles[0]"},
      {[](RunResult& r) { r.benchmarks[0].baseline.cycles.min = -500; }, "baseline.cycles_per_event.min"},
      // Percentiles out of order.
      {[](RunResult& r) { r.benchmarks[0].traced.cycles.p90 = 1; }, "traced.cycles_per_event"},
      // An interval that does not hold its median.
      {[](RunResult& r) { std::swap(r.benchmarks[0].overhead_cycles->low, r.benchmarks[0].overhead_cycles->high); },
       "overhead_cycles_per_event: the interval"},
      {[](RunResult& r) { r.benchmarks[0].overhead_ns->high = r.benchmarks[0].overhead_ns->median - 1; },
       "overhead_ns_per_event: the interval"},
      {[](RunResult& r) { r.benchmarks[0].overhead_cycles->confidence = 1.5; }, "ci_confidence"},
      // ns not the cycles at the run's rate.
      {[](RunResult& r) { r.benchmarks[0].overhead_ns->median *= 3; }, "overhead_ns_per_event"},
      // The amortized figure alike.
      {[](RunResult& r) {
         auto& a = *r.benchmarks[0].amortized_overhead_cycles;
         std::swap(a.low, a.high);
       },
       "amortized_overhead_cycles_per_event: the interval"},
      {[](RunResult& r) { r.benchmarks[0].amortized_overhead_ns->median *= 3; }, "amortized_overhead_ns_per_event"},
      {[](RunResult& r) { r.benchmarks[0].baseline.ns.p50 *= 1.5; }, "baseline.ns_per_event"},
      // The TSC rate ten times the calibrated one.
      {[](RunResult& r) { r.context.tsc_hz *= 10; }, "context.tsc.hz"},
      {[](RunResult& r) { r.context.tsc_hz = 0; }, "context.tsc.hz"},
      // Not finite.
      {[](RunResult& r) { r.benchmarks[0].traced.cycles.mean = std::numeric_limits<double>::quiet_NaN(); },
       "traced.cycles_per_event.mean"},
      {[](RunResult& r) { r.benchmarks[0].overhead_cycles->median = std::numeric_limits<double>::infinity(); },
       "overhead_cycles_per_event.median"},
      // Counts of an ok benchmark.
      {[](RunResult& r) { r.benchmarks[0].batch = 0; }, ".batch"},
      {[](RunResult& r) { r.benchmarks[0].samples_per_block = 0; }, ".samples_per_block"},
      {[](RunResult& r) { r.benchmarks[0].traced.samples = 0; }, "0 traced samples"},
      {[](RunResult& r) { r.benchmarks[0].baseline.disturbed = 99; }, "baseline: 6 samples, 99 disturbed"},
      {[](RunResult& r) {
         r.benchmarks[0].overhead_cycles->n = 4;
         r.benchmarks[0].overhead_ns->n = 4;
       },
       "overhead_cycles_per_event.n"},
      {[](RunResult& r) { r.benchmarks[0].events.verification = "fine"; }, "events.verification"},
      {[](RunResult& r) { r.benchmarks[0].status = "great"; }, ".status"},
  };
  for (const auto& [breakit, field] : cases) {
    RunResult r = good_run();
    breakit(r);
    expect_refused(r, field);
  }
}

// Overhead may be negative (a tracer can make the path cheaper); a
// per-event figure slightly below zero (floor noise) is what a run writes.
TEST(ResultCheck, NegativeOverheadAndFloorNoiseAreAccepted) {
  RunResult r = good_run();
  auto& b = r.benchmarks[0];
  std::swap(b.baseline, b.traced);
  for (auto* c : {&*b.overhead_cycles, &*b.overhead_ns}) {
    const double lo = c->low;
    c->median = -c->median;
    c->low = -c->high;
    c->high = -lo;
  }
  b.baseline.repetition_medians[0] = -3.5;  // above -floor/batch = -4
  Status s = check_result(r, "R/result.json");
  EXPECT_TRUE(s.is_ok()) << s.message();
}

// Results written before dropped_repetitions: fewer medians than
// repetitions are possible (dropped), more are not.
TEST(ResultCheck, OlderResultsWithoutTheDroppedCount) {
  RunResult r = good_run();
  auto& b = r.benchmarks[0];
  b.dropped_repetitions.reset();
  b.repetitions = 7;
  EXPECT_TRUE(check_result(r, "f").is_ok());
  b.repetitions = 5;
  expect_refused(r, "6 medians for 5 repetitions");
}

TEST(ConfidenceLabel, SaysWhatTheIntervalCovers) {
  EXPECT_EQ(confidence_label(0.5), "50%");
  EXPECT_EQ(confidence_label(median_ci({1, 2}).confidence), "50%");
  EXPECT_EQ(confidence_label(median_ci({1, 2, 3, 4, 5, 6}).confidence), "96.8%");  // 1 - 2/64, not rounded up
  EXPECT_EQ(confidence_label(0.9499), "94.9%");
  EXPECT_EQ(confidence_label(1.0), "100%");
}

ClockPlan plan(std::uint64_t step, double floor) {
  ClockPlan p;
  p.step_cycles = step;
  p.floor_cycles = floor;
  p.min_sample_cycles = std::max({400.0, kFloorsPerSample * floor, kStepsPerSample * static_cast<double>(step)});
  return p;
}

TEST(ForcedBatch, ASampleUnderTheClocksSpanIsRefusedWithWhatToGive) {
  const ClockPlan p = plan(20, 30);  // min span 20000 cycles
  // One 2-cycle call per sample: the clock's step, not the call.
  std::string why = forced_batch_problem(p, 2, 1, 1);
  EXPECT_TRUE(has(why, "--batch 1: a sample spans ~32 cycles")) << why;
  EXPECT_TRUE(has(why, "under the 20000")) << why;
  EXPECT_TRUE(has(why, "give --batch 9985 or more")) << why;
  // Whole units of the workload's smallest batch.
  EXPECT_TRUE(has(forced_batch_problem(p, 2, 1, 64), "give --batch 10048 or more"))
      << forced_batch_problem(p, 2, 1, 64);
  // Free events (0 cycles after the floor): no batch helps.
  why = forced_batch_problem(p, 0, 1000, 1);
  EXPECT_FALSE(has(why, "give --batch")) << why;
  EXPECT_TRUE(has(why, "leave --batch out")) << why;
  // Long enough: no problem.
  EXPECT_EQ(forced_batch_problem(p, 2, 10000, 1), "");
  EXPECT_EQ(forced_batch_problem(p, 25000, 1, 1), "");
}

TEST(Verification, LostEventsAboveTheLimitArePartial) {
  EventCounts c;
  c.recorded = 90;
  c.lost = 10;  // 10% of the 100 the tracer saw
  Verification v = judge_events(c, 100, 0, false);
  EXPECT_EQ(v.verdict, Verdict::kPartial) << v.reason;
  EXPECT_EQ(to_string(v.verdict), "partial");
  EXPECT_TRUE(has(v.reason, "10 of the 100 events the tracer saw were lost (10.0%, more than the 5% allowed"))
      << v.reason;
  EXPECT_FALSE(v.failed());
  // The limit is the caller's.
  EXPECT_TRUE(judge_events(c, 100, 0, false, false, 0.2).passed());
  c.recorded = 96;
  c.lost = 4;
  EXPECT_TRUE(judge_events(c, 100, 0, false).passed());
  // A count that does not add up still fails, whatever was lost.
  c.recorded = 50;
  c.lost = 40;
  EXPECT_TRUE(judge_events(c, 100, 0, false).failed());
  // verify_events writes the verdict.
  c.recorded = 50;
  c.lost = 50;
  EventsResult out;
  verify_events(c, 100, 0, false, &out);
  EXPECT_EQ(out.verification, "partial");
}

namespace m = model;

m::Model model_with(const char* term, double cycles, double lo, double hi) {
  m::Model mo;
  mo.tsc_hz = kHz;
  m::Entry e;
  e.tracer = "ebpf";
  e.probe_kind = "syscall";
  e.action = "count";
  for (auto* p : {&e.fixed, &e.per_byte}) {
    p->cycles = 100;
    p->ci_low = 90;
    p->ci_high = 110;
  }
  m::Param p;
  p.cycles = cycles;
  p.ci_low = lo;
  p.ci_high = hi;
  if (std::string(term) == "fixed") e.fixed = p;
  if (std::string(term) == "consumer_per_record") e.consumer_per_record = p;
  if (std::string(term) == "action_over_empty") e.action_over_empty = p;
  if (std::string(term) == "contention") e.contention[2] = p;
  if (std::string(term) == "per_byte") e.per_byte = p;
  if (std::string(term) == "per_ecb") e.per_ecb = p;
  if (std::string(term) == "false_predicate") e.false_predicate = p;
  if (std::string(term) == "idle_start") e.idle_start = p;
  mo.entries.push_back(e);
  return mo;
}

TEST(ModelTerms, NegativeAndHugeTermsAreRefusedByName) {
  EXPECT_TRUE(m::check_model_terms(model_with("fixed", 100, 90, 110)).is_ok());
  const std::vector<std::tuple<const char*, double, double, double, std::string>> bad = {
      {"fixed", -5000, -5100, -4900, "term fixed: -5000 cycles, interval [-5100, -4900]: a cost cannot be negative"},
      {"fixed", 1e300, 90, 110, "term fixed: 1e+300 cycles is beyond"},
      {"fixed", 100, 90, std::numeric_limits<double>::infinity(), "term fixed: ci_high is inf"},
      {"fixed", std::numeric_limits<double>::quiet_NaN(), 90, 110, "not a finite number"},
      {"fixed", 100, 110, 90, "is inverted"},
      {"fixed", -5000, 90, 110, "far outside its own interval"},
      {"contention", 1e12, 0, 1, "term contention_2"},
      {"per_byte", -20, -21, -19, "term per_byte: -20 cycles, interval [-21, -19]: a cost cannot be negative"},
      {"per_ecb", -900, -950, -850, "term per_ecb: -900 cycles"},
      {"false_predicate", -900, -950, -850, "term false_predicate: -900 cycles"},
      {"idle_start", -900, -950, -850, "term idle_start: -900 cycles"},
  };
  for (const auto& [term, v, lo, hi, want] : bad) {
    Status s = m::check_model_terms(model_with(term, v, lo, hi));
    ASSERT_FALSE(s.is_ok()) << term << " " << v;
    EXPECT_TRUE(has(s.message(), "model entry ebpf syscall count: ")) << s.message();
    EXPECT_TRUE(has(s.message(), want)) << s.message();
  }
  // A difference of two costs may be negative; noise around zero is not refused.
  EXPECT_TRUE(m::check_model_terms(model_with("action_over_empty", -40, -60, -20)).is_ok());
  EXPECT_TRUE(m::check_model_terms(model_with("contention", -40, -60, -20)).is_ok());
  EXPECT_TRUE(m::check_model_terms(model_with("consumer_per_record", -3, -10, 4)).is_ok());
  // A wide interval (a consumer term fitted from few, noisy runs, as under
  // TCG) is uncertain, not absurd: only its estimate is held to a magnitude.
  EXPECT_TRUE(m::check_model_terms(model_with("consumer_per_record", 2e6, -3e9, 4e9)).is_ok());
  // The consumer's least-squares terms may come out negative (another term
  // takes their share: a real perf fit gave -125 [-126, -125]); a disabled
  // probe's fixed cost sits within noise of zero.
  EXPECT_TRUE(m::check_model_terms(model_with("consumer_per_record", -125, -126, -125)).is_ok());
  EXPECT_TRUE(m::check_model_terms(model_with("fixed", -3, -4, -2)).is_ok());
}

// Signed terms (a difference, a consumer's least-squares term) that pass
// their own check may still add up to a negative cost: `model predict`
// refuses the prediction, never printing negative cycles or CPU shares.
TEST(ModelTerms, APredictionBelowZeroIsRefused) {
  m::Model mo = model_with("contention", -400, -420, -380);
  mo.entries[0].per_byte = m::Param::absent("one payload size");
  ASSERT_TRUE(m::check_model_terms(mo).is_ok());
  m::Scenario sc;
  sc.probes.push_back({"ebpf", "syscall", "count", 0, 1, 1, 1000, 2});
  m::Prediction pr;
  ASSERT_TRUE(m::predict(mo, sc, &pr).is_ok());
  Status s = m::check_prediction_costs(sc, pr);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(has(s.message(), "ebpf syscall count: the model's terms add up to -300.0 cycles a firing"))
      << s.message();
  sc.probes[0].threads = 1;
  ASSERT_TRUE(m::predict(mo, sc, &pr).is_ok());
  EXPECT_TRUE(m::check_prediction_costs(sc, pr).is_ok());
  EXPECT_GT(pr.cpu_percent, 0);
  mo = model_with("consumer_per_record", -125, -126, -124);
  mo.entries[0].per_byte = m::Param::absent("one payload size");
  m::Scenario consumer;
  consumer.probes.push_back({"ebpf", "syscall", "count", 0, 1, 1, 1000, 1});
  consumer.consumers.push_back({});
  consumer.consumers[0].tracer = "ebpf";
  consumer.consumers[0].probe_kind = "syscall";
  consumer.consumers[0].action = "count";
  consumer.consumers[0].records_hz = 1000;
  ASSERT_TRUE(m::predict(mo, consumer, &pr).is_ok());
  s = m::check_prediction_costs(consumer, pr);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(has(s.message(), "the consumers: the model's terms add up to")) << s.message();
}

TEST(ModelTerms, AFixedCostFarFromItsPointsIsRefused) {
  m::Model mo = model_with("fixed", 999995, 999990, 1000000);
  mo.entries[0].per_byte.cycles = 0.1;
  mo.entries[0].points = {{0, 1000, 1000, 6}, {4096, 1400, 1400, 6}};
  Status s = m::check_fixed_against_points(mo);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(has(s.message(), "the fitted fixed cost 999995 cycles is absurd for its inputs")) << s.message();
  mo.entries[0].fixed.cycles = 1010;
  EXPECT_TRUE(m::check_fixed_against_points(mo).is_ok());
}

m::ValidationMeasured paced(double longest_ms, std::uint64_t seen, std::uint64_t lost) {
  m::ValidationMeasured x;
  m::ValidationSegment g;
  g.longest_period_ns = longest_ms * 1e6;
  x.segments.push_back(g);
  x.seen = seen;
  x.lost = lost;
  return x;
}

TEST(ValidationVerdict, SaysWhatTheRunDidNotHold) {
  m::ValidationScenario s;
  s.rate_hz = 2e6;
  m::Validation v;
  v.ops_hz = 1.99e6;
  m::ValidationLimits lim;
  v.longest_period_ms = 3;
  EXPECT_TRUE(m::validation_problems(s, paced(3, 1000, 0), v, lim).empty());
  // 98 kHz of the 2 MHz asked.
  v.ops_hz = 98000;
  auto p = m::validation_problems(s, paced(3, 1000, 0), v, lim);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(has(p[0], "the rate was not held: 98000 Hz of the 2000000 Hz asked (5%")) << p[0];
  // Stopped for 2 s (SIGSTOP) and caught up: the rate looks held, the period does not.
  v.ops_hz = 2e6;
  v.longest_period_ms = 2000;
  p = m::validation_problems(s, paced(2000, 1000, 0), v, lim);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(has(p[0], "a 1 ms pacing period lasted 2000 ms")) << p[0];
  EXPECT_TRUE(has(p[0], "SIGSTOP")) << p[0];
  // 86% of the events lost.
  v.longest_period_ms = 3;
  v.lost_share = 0.86;
  p = m::validation_problems(s, paced(3, 1000, 860), v, lim);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(has(p[0], "lost 860 of the 1000 events it saw (86.0%")) << p[0];
}

nlohmann::json validation(double err, bool held) {
  nlohmann::json v = {
      {"measured",
       {{"rate_hz", 98000},
        {"probe_cycles", 900},
        {"cpu_percent", 3.0 + err},
        {"probe_cpu_percent", 2.0},
        {"consumer_cpu_percent", 1.0 + err},
        {"untraced_spread_ns_per_event", 40}}},
      {"predicted",
       {{"probe_cycles", 800}, {"cpu_percent", 3.0}, {"probe_cpu_percent", 2.0}, {"consumer_cpu_percent", 1.0}}},
      {"error", {{"cpu_percent", err}}}};
  v["conditions"] = {{"held", held},
                     {"problems", held ? nlohmann::json::array()
                                       : nlohmann::json::array({"the rate was not held: 98000 Hz of the 2000000 Hz"})},
                     {"rate_asked_hz", 2e6},
                     {"longest_period_ms", 2},
                     {"lost_share", 0}};
  return v;
}

// A validation document read back as the suite reads it.
m::ValidationFile typed(const nlohmann::json& j) {
  m::ValidationFile v;
  const Status s = m::validation_from_json(j, &v);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return v;
}

TEST(ValidationVerdict, Table7SaysNotValidNeverYes) {
  const std::string t = m::table7_markdown({{"ebpf", "sys", "getpid", typed(validation(0.2, false)), ""}});
  EXPECT_FALSE(has(t, "yes")) << t;
  EXPECT_TRUE(has(t, "**not valid**: the rate was not held: 98000 Hz of the 2000000 Hz")) << t;
  EXPECT_TRUE(has(m::table7_markdown({{"ebpf", "sys", "getpid", typed(validation(0.2, true)), ""}}), "yes (±1)"));
  // Files written before conditions existed are taken as they are.
  nlohmann::json old = validation(0.2, true);
  old.erase("conditions");
  EXPECT_TRUE(m::validation_held(typed(old)));
  EXPECT_FALSE(m::validation_held(typed(validation(0.2, false))));
  // Rounds: one that did not hold has no error to count.
  std::vector<double> errors;
  auto r = m::median_round({typed(validation(0.1, false)), typed(validation(3.0, true)), typed(validation(2.5, true))},
                           &errors);
  EXPECT_EQ(errors, (std::vector<double>{3.0, 2.5}));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(m::validation_held(*r));
  // None held: the row is a round that did not, and says so.
  r = m::median_round({typed(validation(0.1, false))}, &errors);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(m::validation_held(*r));
  EXPECT_TRUE(errors.empty());
}

}  // namespace
}  // namespace tracebench
