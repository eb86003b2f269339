#include "tracebench/sample_book.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tracebench/stats.h"

namespace tracebench {

SampleBook::SampleBook(double interrupt_gap_cycles, std::uint64_t batch, std::vector<double> empty_counter_delta,
                       bool keep_rows)
    : gap_(interrupt_gap_cycles),
      batch_(std::max<std::uint64_t>(1, batch)),
      empty_counter_delta_(std::move(empty_counter_delta)),
      keep_rows_(keep_rows) {}

void SampleBook::add_block(bool traced, int repetition, const TimedBlock& b) {
  Acc& a = acc_[traced];
  std::vector<bool> outlier = flag_disturbed(b.per_event, gap_ / static_cast<double>(batch_));
  a.rep_values.clear();
  a.rep_samples = b.per_event.size();
  for (std::size_t i = 0; i < b.per_event.size(); ++i) {
    bool migrated = i < b.migrated.size() && b.migrated[i];
    bool excluded = outlier[i] || migrated || !std::isfinite(b.per_event[i]);
    a.samples++;
    if (excluded) {
      a.excluded++;
      if (migrated) a.migrated++;
    } else {
      a.values.push_back(b.per_event[i]);
      a.rep_values.push_back(b.per_event[i]);
    }
    if (keep_rows_)
      rows_.push_back({traced, repetition, static_cast<std::uint32_t>(i), b.per_event[i], excluded, migrated});
  }
  a.counter_sum.resize(b.counter_delta.size(), 0);
  for (std::size_t k = 0; k < b.counter_delta.size(); ++k) {
    a.counter_sum[k] +=
        static_cast<double>(b.counter_delta[k]) - (k < empty_counter_delta_.size() ? empty_counter_delta_[k] : 0);
  }
  a.events += b.events;
}

void SampleBook::end_repetition() {
  auto enough = [](const Acc& a) {
    return !a.rep_values.empty() &&
           static_cast<double>(a.rep_values.size()) >= kMinKeptShareForRepetition * static_cast<double>(a.rep_samples);
  };
  last_counted_ = enough(acc_[0]) && enough(acc_[1]);
  if (!last_counted_) {
    ++dropped_reps_;
    return;
  }
  double base = summarize(acc_[0].rep_values).p50;
  double tr = summarize(acc_[1].rep_values).p50;
  acc_[0].rep_medians.push_back(base);
  acc_[1].rep_medians.push_back(tr);
  overhead_.push_back(tr - base);
}

bool SampleBook::last(double* baseline, double* traced) const {
  if (!last_counted_ || overhead_.empty()) return false;
  *baseline = acc_[0].rep_medians.back();
  *traced = acc_[1].rep_medians.back();
  return true;
}

std::string SampleBook::finish(double tsc_hz, const std::vector<std::string>& counter_names, BenchmarkResult* r) const {
  std::string why;
  for (int traced = 0; traced < 2; ++traced) {
    const Acc& a = acc_[traced];
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
    for (std::size_t i = 0; i < counter_names.size() && i < a.counter_sum.size(); ++i) {
      if (a.events) v.counters_per_event[counter_names[i]] = a.counter_sum[i] / static_cast<double>(a.events);
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
  std::size_t reps = overhead_.size() + dropped_reps_;
  r->dropped_repetitions = dropped_reps_;
  if (why.empty() && overhead_.size() < 2) {
    why = fmt::format("only {} of {} repetitions kept at least {:.0f}% of their samples in both blocks (2 needed)",
                      overhead_.size(), reps, 100 * kMinKeptShareForRepetition);
  }
  if (!why.empty()) {
    r->overhead_cycles.reset();
    r->overhead_ns.reset();
    return why;
  }
  if (dropped_reps_ > 0)
    r->warnings.push_back(fmt::format("{} of {} repetitions dropped: a block kept fewer than {:.0f}% of its samples",
                                      dropped_reps_, reps, 100 * kMinKeptShareForRepetition));
  MedianCI oc = median_ci(overhead_);
  r->overhead_cycles = oc;
  MedianCI on = oc;
  double k = 1e9 / tsc_hz;
  on.median *= k;
  on.low *= k;
  on.high *= k;
  r->overhead_ns = on;
  return "";
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
