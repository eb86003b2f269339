#include "tracebench/sample_book.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "tracebench/stats.h"

namespace tracebench {

SampleBook::SampleBook(double interrupt_gap_cycles, std::uint64_t batch, std::vector<double> empty_counter_delta,
                       bool keep_rows)
    : gap_(interrupt_gap_cycles),
      batch_(std::max<std::uint64_t>(1, batch)),
      empty_counter_delta_(std::move(empty_counter_delta)),
      keep_rows_(keep_rows) {}

void SampleBook::amortize(double host_share, double preemption_cycles) {
  amortize_ = true;
  host_share_ = std::clamp(host_share, 0.0, 0.5);
  preemption_cycles_ = preemption_cycles;
}

void SampleBook::add_block(bool traced, int repetition, const TimedBlock& b) {
  if (reps_.empty() || reps_.back().index != repetition) reps_.push_back(Repetition{repetition, {}, false});
  Block& a = reps_.back().block[traced];
  std::vector<bool> outlier = flag_disturbed(b.per_event, gap_ / static_cast<double>(batch_));
  for (std::size_t i = 0; i < b.per_event.size(); ++i) {
    bool migrated = i < b.migrated.size() && b.migrated[i];
    bool excluded = outlier[i] || migrated || !std::isfinite(b.per_event[i]);
    a.samples++;
    if (excluded) {
      a.excluded++;
      if (migrated) a.migrated++;
      if (!migrated && std::isfinite(b.per_event[i])) a.hit.push_back(b.per_event[i]);
    } else {
      a.values.push_back(b.per_event[i]);
    }
    if (keep_rows_)
      rows_.push_back({traced, repetition, static_cast<std::uint32_t>(i), b.per_event[i], excluded, migrated});
  }
  a.counters.resize(b.counter_delta.size(), 0);
  for (std::size_t k = 0; k < b.counter_delta.size(); ++k) {
    a.counters[k] +=
        static_cast<double>(b.counter_delta[k]) - (k < empty_counter_delta_.size() ? empty_counter_delta_[k] : 0);
  }
  a.events += b.events;
  a.all_events += b.all_events;
  a.seconds += b.seconds;
}

void SampleBook::end_repetition() {
  if (reps_.empty()) return;
  auto enough = [](const Block& a) {
    return !a.values.empty() &&
           static_cast<double>(a.values.size()) >= kMinKeptShareForRepetition * static_cast<double>(a.samples);
  };
  Repetition& r = reps_.back();
  r.counted = enough(r.block[0]) && enough(r.block[1]);
  if (!r.counted) return;
  const double base = summarize(r.block[0].values).p50, traced = summarize(r.block[1].values).p50;
  overhead_.push_back(traced - base);
  if (amortize_)
    amortized_.push_back(amortized_mean(r.block[1], traced) - amortized_mean(r.block[0], base) -
                         host_share_ * (traced - base));
}

double SampleBook::amortized_mean(const Block& b, double median) const {
  const double bound = median + preemption_cycles_ / static_cast<double>(batch_);
  double sum = 0;
  std::size_t n = 0;
  for (const std::vector<double>* v : {&b.values, &b.hit}) {
    for (double x : *v) {
      if (x > bound) continue;
      sum += x;
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : median;
}

void SampleBook::leave_out_before(std::size_t counted) {
  if (counted == 0 || counted >= overhead_.size()) return;  // the later level keeps at least one
  std::size_t seen = 0;
  for (std::size_t i = first_kept_; i < reps_.size(); ++i) {
    if (!reps_[i].counted || seen++ != counted) continue;
    // reps_[i] is the first repetition of the later level.
    for (std::size_t k = first_kept_; k < i; ++k) reps_[k] = Repetition{reps_[k].index, {}, reps_[k].counted};
    first_kept_ = i;
    break;
  }
  left_out_overhead_.insert(left_out_overhead_.end(), overhead_.begin(),
                            overhead_.begin() + static_cast<std::ptrdiff_t>(counted));
  overhead_.erase(overhead_.begin(), overhead_.begin() + static_cast<std::ptrdiff_t>(counted));
  if (amortized_.size() >= counted)
    amortized_.erase(amortized_.begin(), amortized_.begin() + static_cast<std::ptrdiff_t>(counted));
}

double SampleBook::traced_level() const {
  std::vector<double> medians;
  for (std::size_t i = first_kept_; i < reps_.size(); ++i)
    if (reps_[i].counted) medians.push_back(summarize(reps_[i].block[1].values).p50);
  return medians.empty() ? 0.0 : std::fabs(summarize(std::move(medians)).p50);
}

std::size_t SampleBook::repetitions_dropped() const {
  return reps_.size() - overhead_.size() - left_out_overhead_.size();
}

std::vector<SampleRow> SampleBook::take_rows() {
  if (first_kept_ > 0) {
    const int first = reps_[first_kept_].index;
    rows_.erase(std::remove_if(rows_.begin(), rows_.end(), [&](const SampleRow& r) { return r.repetition < first; }),
                rows_.end());
  }
  return std::move(rows_);
}

bool SampleBook::last(double* baseline, double* traced) const {
  if (reps_.empty() || !reps_.back().counted) return false;
  *baseline = summarize(reps_.back().block[0].values).p50;
  *traced = summarize(reps_.back().block[1].values).p50;
  return true;
}

std::optional<double> SampleBook::traced_events_per_second() const {
  std::vector<double> rates;
  for (std::size_t i = first_kept_; i < reps_.size(); ++i) {
    const double rate = reps_[i].block[1].events_per_second();
    if (reps_[i].counted && rate > 0) rates.push_back(rate);
  }
  if (rates.empty()) return std::nullopt;
  return summarize(std::move(rates)).p50;
}

double SampleBook::last_traced_events_per_second() const {
  return reps_.empty() ? 0 : reps_.back().block[1].events_per_second();
}

namespace {

// One variant over the repetitions kept.
struct Pooled {
  std::vector<double> values, rep_medians, counters;
  std::uint64_t samples = 0, excluded = 0, migrated = 0, events = 0;
};

// A figure in cycles per event as ns per event at `tsc_hz`.
MedianCI in_ns(MedianCI c, double tsc_hz) {
  const double k = 1e9 / tsc_hz;
  c.median *= k;
  c.low *= k;
  c.high *= k;
  return c;
}

}  // namespace

std::string SampleBook::finish(double tsc_hz, const std::vector<std::string>& counter_names, BenchmarkResult* r) const {
  Pooled pooled[2];
  for (std::size_t i = first_kept_; i < reps_.size(); ++i) {
    for (int traced = 0; traced < 2; ++traced) {
      const Block& b = reps_[i].block[traced];
      Pooled& p = pooled[traced];
      p.values.insert(p.values.end(), b.values.begin(), b.values.end());
      if (reps_[i].counted) p.rep_medians.push_back(summarize(b.values).p50);
      p.samples += b.samples;
      p.excluded += b.excluded;
      p.migrated += b.migrated;
      p.events += b.events;
      p.counters.resize(std::max(p.counters.size(), b.counters.size()), 0);
      for (std::size_t k = 0; k < b.counters.size(); ++k) p.counters[k] += b.counters[k];
    }
  }
  std::string why;
  for (int traced = 0; traced < 2; ++traced) {
    const Pooled& a = pooled[traced];
    VariantResult& v = traced ? r->traced : r->baseline;
    const char* name = traced ? "traced" : "baseline";
    v.samples = a.samples;
    v.disturbed = a.excluded;
    v.migrated = a.migrated;
    v.repetition_medians = a.rep_medians;
    v.cycles = summarize(a.values);
    std::vector<double> ns(a.values);
    for (double& x : ns) x *= 1e9 / tsc_hz;
    v.ns = summarize(std::move(ns));
    v.counters_per_event.clear();
    for (std::size_t i = 0; i < counter_names.size() && i < a.counters.size(); ++i) {
      if (a.events) v.counters_per_event[counter_names[i]] = a.counters[i] / static_cast<double>(a.events);
    }
    if (a.samples == 0) {
      if (why.empty()) why = fmt::format("the {} variant took no sample", name);
    } else if (a.values.empty()) {
      if (why.empty())
        why = fmt::format(
            "no valid sample in the {} variant: all {} samples excluded ({} migrated CPU, {} hit by an "
            "interrupt or preemption)",
            name, a.samples, a.migrated, a.excluded - a.migrated);
    } else if (static_cast<double>(a.excluded) > kMaxExcludedShare * static_cast<double>(a.samples)) {
      r->warnings.push_back(fmt::format(
          "{:.0f}% of the {} samples excluded ({} migrated CPU, {} hit by an interrupt or preemption): the figure "
          "rests on the rest",
          100.0 * static_cast<double>(a.excluded) / static_cast<double>(a.samples), name, a.migrated,
          a.excluded - a.migrated));
    }
  }
  const std::size_t reps = reps_.size(), dropped = repetitions_dropped();
  r->dropped_repetitions = dropped;
  if (why.empty() && overhead_.size() < 2) {
    why = fmt::format("only {} of {} repetitions kept at least {:.0f}% of their samples in both blocks (2 needed)",
                      overhead_.size(), reps, 100 * kMinKeptShareForRepetition);
  }
  if (!why.empty()) {
    r->overhead_cycles.reset();
    r->overhead_ns.reset();
    r->amortized_overhead_cycles.reset();
    r->amortized_overhead_ns.reset();
    r->events_per_second.reset();
    return why;
  }
  r->events_per_second = traced_events_per_second();
  if (dropped > 0)
    r->warnings.push_back(fmt::format("{} of {} repetitions dropped: a block kept fewer than {:.0f}% of its samples",
                                      dropped, reps, 100 * kMinKeptShareForRepetition));
  r->overhead_cycles = median_ci(overhead_);
  r->overhead_ns = in_ns(*r->overhead_cycles, tsc_hz);
  finish_amortized(tsc_hz, r);
  return "";
}

void SampleBook::finish_amortized(double tsc_hz, BenchmarkResult* r) const {
  r->amortized_overhead_cycles.reset();
  r->amortized_overhead_ns.reset();
  if (amortized_.size() < 2) return;
  r->amortized_overhead_cycles = median_ci(amortized_);
  const MedianCI c = in_ns(*r->amortized_overhead_cycles, tsc_hz);
  r->amortized_overhead_ns = c;
  // Worth a warning where the interval of the amortized figure lies wholly
  // above the median figure by kAmortizedShareWorthSaying of it.
  const MedianCI& o = *r->overhead_ns;
  if (!(o.median > 0) || c.low < o.median * (1 + kAmortizedShareWorthSaying)) return;
  r->warnings.push_back(fmt::format(
      "amortized {:.1f} ns per event, {:.0f}% above the median event's {:.1f}: a cost paid in few events (a buffer "
      "page, a wakeup) that the median sample leaves out; throughput follows the amortized figure",
      c.median, 100 * (c.median / o.median - 1), o.median));
}

std::uint64_t choose_batch(double per_event_cycles, double min_sample_cycles, std::uint64_t unit,
                           std::uint64_t user_batch) {
  if (user_batch > 0) return user_batch;
  double per_event = std::max(per_event_cycles, 0.5);
  std::uint64_t batch =
      per_event >= min_sample_cycles ? 1 : static_cast<std::uint64_t>(std::ceil(min_sample_cycles / per_event));
  batch = std::min<std::uint64_t>(batch, 100000);
  unit = std::max<std::uint64_t>(1, unit);
  // Whole units (a kmod workload fires in ioctl batches of `unit`).
  batch = std::max(batch, unit);
  if (batch % unit) batch += unit - batch % unit;
  return batch;
}

}  // namespace tracebench
