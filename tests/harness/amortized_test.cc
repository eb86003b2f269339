// The amortized overhead (sample_book.h): a cost a tracer pays once in many
// events, which the median sample leaves out, is in it; the host's short
// gaps (their share of the time) and a preemption are not.
#include <gtest/gtest.h>

#include <string>

#include "tracebench/results.h"
#include "tracebench/sample_book.h"

namespace tracebench {
namespace {
namespace amortized {  // the test binary is built in unity batches: names of its own

constexpr double kHz = 2e9;
constexpr double kGap = 2000;          // an interrupt: 1 us at 2 GHz
constexpr double kPreemption = 40000;  // 20 us at 2 GHz
constexpr std::size_t kSamples = 1000;

// `n` samples around `value` cycles per event (value + 0..6, median and
// mean value + 3), every `every`-th one `extra` more (0: none).
TimedBlock block(double value, std::size_t every = 0, double extra = 0) {
  TimedBlock b;
  for (std::size_t i = 0; i < kSamples; ++i) {
    const bool hit = every > 0 && i % every == every - 1;
    b.per_event.push_back(value + static_cast<double>(i % 7) + (hit ? extra : 0));
    b.migrated.push_back(0);
  }
  b.events = kSamples;
  return b;
}

BenchmarkResult run(SampleBook& book, const TimedBlock& base, const TimedBlock& traced) {
  BenchmarkResult r;
  r.name = "amortized";
  r.tracer = "none";
  r.repetitions = 4;
  for (int rep = 0; rep < 4; ++rep) {
    book.add_block(false, rep, base);
    book.add_block(true, rep, traced);
    book.end_repetition();
  }
  EXPECT_EQ(book.finish(kHz, {}, &r), "");
  return r;
}

bool warned(const BenchmarkResult& r) {
  for (const std::string& w : r.warnings)
    if (w.rfind("amortized ", 0) == 0) return true;
  return false;
}

// A tracer's buffer page: one sample in 20 carries 4000 cycles more per
// event (above the interrupt bound, so the median and its samples leave it
// out); spread over the samples, 200 cycles per event.
TEST(Amortized, KeepsACostPaidOnceInManySamples) {
  SampleBook book(kGap, 1);
  book.amortize(0, kPreemption);
  BenchmarkResult r = run(book, block(100), block(300, 20, 4000));
  ASSERT_TRUE(r.overhead_cycles && r.amortized_overhead_cycles && r.amortized_overhead_ns);
  EXPECT_NEAR(r.overhead_cycles->median, 200, 1e-9);
  EXPECT_NEAR(r.amortized_overhead_cycles->median, 400, 1e-9);
  EXPECT_NEAR(r.amortized_overhead_ns->median, 200, 1e-9);
  EXPECT_TRUE(warned(r)) << "the median leaves out half of what the events cost";
}

// The host takes 1% of the time in short gaps, in proportion to a sample's
// length: one sample in 25 of each block holds 25 times 1% of its length
// (25 cycles in a baseline sample of ~100, 75 in a traced one of ~300).
// Its share of the 200 cycles the events add comes off; without it the
// figure reads 2 cycles high.
TEST(Amortized, TakesTheHostsShareOfTheAddedTimeOff) {
  const TimedBlock base = block(100, 25, 25), traced = block(300, 25, 75);
  SampleBook with(kGap, 1), without(kGap, 1);
  with.amortize(0.01, kPreemption);
  without.amortize(0, kPreemption);
  BenchmarkResult a = run(with, base, traced), b = run(without, base, traced);
  ASSERT_TRUE(a.amortized_overhead_cycles && b.amortized_overhead_cycles);
  EXPECT_NEAR(a.overhead_cycles->median, 200, 1e-9);
  EXPECT_NEAR(a.amortized_overhead_cycles->median, 200, 1e-9);
  EXPECT_NEAR(b.amortized_overhead_cycles->median, 202, 1e-9);
  EXPECT_FALSE(warned(a));
}

// Another task ran for 100 us in one sample in 100 (at a batch of 10:
// 20000 cycles per event more): the tracer's consumer, whose CPU time is
// counted apart, or a host's long exit.  Not in the figure.
TEST(Amortized, LeavesAPreemptionOut) {
  SampleBook book(kGap, 10);
  book.amortize(0, kPreemption);
  BenchmarkResult r = run(book, block(100), block(300, 100, 20000));
  ASSERT_TRUE(r.amortized_overhead_cycles);
  EXPECT_NEAR(r.amortized_overhead_cycles->median, 200, 0.01);
  EXPECT_FALSE(warned(r));
}

// A book that was not asked for it gives none, and a result without it
// says nothing of it.
TEST(Amortized, OnlyWhenAsked) {
  SampleBook book(kGap, 1);
  BenchmarkResult r = run(book, block(100), block(300, 20, 4000));
  EXPECT_TRUE(r.overhead_cycles);
  EXPECT_FALSE(r.amortized_overhead_cycles);
  EXPECT_FALSE(warned(r));
}

}  // namespace amortized
}  // namespace
}  // namespace tracebench
