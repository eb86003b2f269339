// Internal to the runner: one benchmark's life, from attach through the
// pilot (batch and block size), the interleaved baseline/traced blocks, to
// verification and teardown.  run_benchmarks() (runner.cc) drives it.
#pragma once

#include <time.h>
#include <x86intrin.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "tracebench/adaptive.h"
#include "tracebench/consumer_catch_up.h"
#include "tracebench/consumer_meter.h"
#include "contenders.h"
#include "injected_cost.h"
#include "run_state.h"
#include "time_block.h"
#include "tracebench/clock.h"
#include "tracebench/clock_check.h"
#include "tracebench/counters.h"
#include "tracebench/cpu_gaps.h"
#include "tracebench/interrupts.h"
#include "tracebench/probe_site.h"
#include "tracebench/results.h"
#include "tracebench/runner.h"
#include "tracebench/sample_book.h"
#include "tracebench/simulated_host.h"
#include "tracebench/steady_state.h"
#include "tracebench/stats.h"
#include "tracebench/tracer.h"
#include "tracebench/verification.h"
#include "tracebench/workload.h"

namespace tracebench {

class BenchRun {
 public:
  BenchRun(const BenchSpec& spec, const RunOptions& opt, const Machine& m) : spec_(spec), opt_(opt), m_(m) {
    r_.name = spec.name();
    r_.tracer = spec.tracer;
    r_.workload = spec.workload;
    r_.action = spec.action;
    r_.payload_bytes = spec.payload_bytes;
    r_.threads = spec.threads;
    r_.gap_us = spec.gap_us;
    r_.samples_per_block_limit = opt.samples;
    if (spec.gap_us > 0) {
      gap_.tv_sec = static_cast<time_t>(spec.gap_us / 1000000);
      gap_.tv_nsec = static_cast<long>(spec.gap_us % 1000000) * 1000;
    }
    if (auto it = opt.options.find(spec.tracer); it != opt.options.end()) r_.options = it->second;
    r_.repetitions = opt.repetitions;
  }
  ~BenchRun() { teardown(); }

  Status setup() {
    workload_ = find_workload(spec_.workload);
    tracer_ = make_tracer(spec_.tracer);
    if (!workload_ || !tracer_) return Status::error("unknown tracer or workload");
    r_.probe = workload_->probe.name;
    r_.probe_kind = std::string(to_string(workload_->probe.kind));
    // Before anything of ours is attached: the code as mapped must be the file's.
    TB_TRY(check_site());
    active_ = std::make_unique<ActiveTracer>(tracer_.get());
    AttachSpec as;
    as.probe = workload_->probe;
    as.action = spec_.action;
    as.payload_bytes = spec_.payload_bytes;
    as.options = r_.options;
    as.parsed_options = spec_.options;  // parsed once, by the plan
    as.pid = getpid();
    attached_ = true;  // teardown() is safe after a failed attach
    if (Status s = tracer_->attach(as); !s) return Status::error(fmt::format("attach: {}", s.message()));
    consumer_.start(*tracer_);
    WorkloadParams wp;
    wp.payload_bytes = spec_.payload_bytes;
    wp.marker_file = tracer_->marker_file();
    if (Status s = workload_->setup(wp, &state_); !s)
      return Status::error(fmt::format("workload setup: {}", s.message()));
    TB_TRY(inject_costs());
    if (spec_.threads > 1) TB_TRY(contenders_.start_threads(*workload_, wp, spec_.threads - 1, m_.measured_cpu));
    ++g_progress;  // attaching can take seconds: the watcher must not take it for a hang
    TB_TRY(pilot());
    if (Status s = tracer_->plan_block(samples_ * r_.batch); !s)
      return Status::error(
          fmt::format("size the tracer's buffer for a block of {} events: {}", samples_ * r_.batch, s.message()));
    return warm_up();
  }

  // A cost on both paths: the tracer's injection (none.inject_cycles, or
  // none.inject_percent of the workload's own cost measured here), and a
  // simulated host's slow syscalls (host_simulation.h) where each event
  // makes one (a syscall's entry, a trace_marker write).
  Status inject_costs() {
    const std::uint64_t simulated = simulated_syscall_cycles_per_event(workload_->probe.kind, m_.clock.tsc_hz);
    std::uint64_t c = tracer_->injected_cycles_per_event() + simulated;
    if (const double percent = tracer_->injected_percent_of_workload(); percent > 0) {
      // In batches of at least 64 events, as the blocks fire them (a batch
      // of one would add a call's cost to every event).
      const std::uint64_t unit = std::max<std::uint64_t>(1, workload_->min_batch);
      const double own =
          workload_cycles_per_event(*state_, unit * ((63 + unit) / unit)) + static_cast<double>(simulated);
      const auto share = static_cast<std::uint64_t>(std::llround(own * percent / 100));
      c += share;
      r_.warnings.push_back(fmt::format(
          "injected {:g}% of the workload's own cost: {} cycles per event (the workload measured {:.0f} cycles per "
          "event here before the blocks)",
          percent, share, own));
    }
    if (c > 0) state_ = std::make_unique<InjectedCost>(std::move(state_), c);
    return Status::ok();
  }

  // One repetition: a baseline block and a traced block, order alternating.
  Status repetition(int rep) {
    bool traced_first = rep % 2 == 1;
    for (int k = 0; k < 2; ++k) {
      bool traced = (k == 0) == traced_first;
      if (g_stop_requested) return Status::error("interrupted");
      TimedBlock b;
      TB_TRY(run_block(traced, &b));
      book_->add_block(traced, rep, b);
      ++g_progress;
    }
    book_->end_repetition();
    return Status::ok();
  }

  // Level shifts and stationarity are judged above two clock floors and two
  // clock steps per event (below that the floor's own subtraction and the
  // clock's resolution are the noise), and, for the overhead, above a fifth
  // of what a traced event costs whole: an overhead near zero (the `none`
  // tracer's) moves by more than 10% of itself for nothing, and on the
  // simulated slow host the untraced half-nanosecond calls' overheads sat at
  // 0.0 and then at 0.46 cycles, each level without spread.
  static constexpr double kShiftShareOfTraced = 0.2;
  ShiftRule steady_rule() const {
    ShiftRule rule;
    const double batch = static_cast<double>(std::max<std::uint64_t>(1, r_.batch));
    rule.min_absolute = 2 * std::max(m_.clock.floor_cycles, static_cast<double>(m_.clock.step_cycles)) / batch;
    if (book_) rule.min_absolute = std::max(rule.min_absolute, kShiftShareOfTraced * book_->traced_level());
    return rule;
  }

  // After a repetition: a level shift among the repetitions kept leaves
  // those before it out (bench_run_steady.h).
  void settle_levels();

  void finish() {
    if (failed_) return;
    for (auto& note : consumer_.before_drain(*tracer_)) r_.warnings.push_back(std::move(note));
    consumer_.caller_begin(*tracer_);
    Status drained = tracer_->drain();
    consumer_.caller_end();
    if (!drained) {
      fail(fmt::format("drain: {}", drained.message()));
      return;
    }
    consumer_.after_drain();
    EventCounts c = tracer_->counts();
    if (c.records_events) r_.consumer = consumer_.result(c.recorded, c.consumer_wakeups);
    if (r_.consumer) r_.consumer->wakes_on_timer = c.consumer_wakes_on_timer;
    record_catch_up();
    r_.events.fired = fired_;
    r_.events.recorded = c.recorded;
    r_.events.lost = c.lost;
    r_.events.exact = c.exact;
    r_.events.payload_verified = c.payload_verified;
    r_.tracer_details = tracer_->details();
    // What a tracer says weakens its figure (e.g. a consumer on the measured CPU).
    if (r_.tracer_details.contains("warnings") && r_.tracer_details["warnings"].is_array()) {
      for (const auto& w : r_.tracer_details["warnings"])
        if (w.is_string()) r_.warnings.push_back(w.get<std::string>());
    }
    record_interrupts();
    std::string no_figure = book_->finish(m_.clock.tsc_hz, m_.counters->live_names(), &r_);
    const bool timer_probe = workload_->probe.kind == ProbeKind::kProfile;
    if (Verification v = verify_events(c, fired_, spec_.payload_bytes, workload_->takes_payload, &r_.events,
                                       timer_probe, opt_.max_lost_share);
        v.failed()) {
      fail(v.reason);
      return;
    }
    if (!no_figure.empty()) {
      fail(no_figure);
      return;
    }
    if (std::string why = unsteady(); !why.empty()) {
      // Measured, but on no one level: marked, with the levels and no figure.
      r_.status = "unsteady";
      r_.error = why;
      r_.overhead_cycles.reset();
      r_.overhead_ns.reset();
      r_.events_per_second.reset();
      return;
    }
    if (std::string why = resolution_problem(); !why.empty()) {
      fail(why);
      return;
    }
    if (timer_probe && c.records_events) per_timer_firing(c.recorded + c.lost);
  }

  // A profile probe: the workload's ops fire nothing, the tracer's timer
  // fires while they run.  The overhead per op becomes the overhead per
  // firing with the firings per op over the enabled windows: those the
  // tracer saw (judged against its timer's clock) over the
  // measured thread's ops (the timer samples that thread).
  void per_timer_firing(std::uint64_t firings) {
    if (own_fired_ == 0 || firings == 0) {
      fail(fmt::format("the tracer's timer fired {} times over {} ops: no cost per firing", firings, own_fired_));
      return;
    }
    const double per_op = static_cast<double>(firings) / static_cast<double>(own_fired_);
    r_.events.timer_events_per_op = per_op;
    for (auto* e : {&r_.overhead_cycles, &r_.overhead_ns}) {
      if (!*e) continue;
      (*e)->median /= per_op;
      (*e)->low /= per_op;
      (*e)->high /= per_op;
    }
  }

  void fail(const std::string& msg) {
    if (!failed_) {
      failed_ = true;
      r_.status = workload_ ? "error" : "skipped";  // never set up: it did not run
      r_.error = msg;
      r_.overhead_cycles.reset();
      r_.overhead_ns.reset();
      r_.events_per_second.reset();
    }
    teardown();
  }

  void teardown() {
    std::lock_guard<std::recursive_mutex> exclusive(g_active_mu);  // never beside the watcher's teardown
    ++g_progress;
    contenders_.run(false);
    contenders_.stop_threads();
    state_.reset();
    if (tracer_ && attached_) {
      if (enabled_) (void)tracer_->disable();
      tracer_->teardown();
      attached_ = false;
    }
    active_.reset();
  }

  // After teardown: a probe placed by someone else while this benchmark ran
  // (its traps are in the figures) fails it too.
  void check_site_after() {
    if (failed_ || !workload_) return;
    if (Status s = check_site(); !s) fail(s.message());
  }

  bool failed() const { return failed_; }
  bool started() const { return book_ != nullptr; }
  BenchmarkResult& result() { return r_; }
  const SampleBook* book() const { return book_.get(); }
  // The result with its samples, moved out of the book: what the journal
  // keeps once the benchmark is done (called once).
  BenchmarkResult take_result() {
    BenchmarkResult r = r_;
    if (book_) r.samples = book_->take_rows();
    return r;
  }

 private:
  // Whether the level the run ended in held; traced blocks until the cost
  // settles, and one such block (bench_run_steady.h).
  std::string unsteady();
  Status warm_up();
  Status warm_block(std::uint64_t chunks, std::uint64_t chunk, std::vector<double>* medians);

  // The probe site's executable code, as mapped here, against its file on
  // disk (tracebench/probe_site.h); only while no tracer of ours is attached.
  Status check_site() {
    std::string unchecked;
    Status s = check_probe_point_unshared(workload_->probe, &unchecked);
    if (!unchecked.empty() && std::find(r_.warnings.begin(), r_.warnings.end(), unchecked) == r_.warnings.end())
      r_.warnings.push_back(unchecked);
    return s;
  }

  // Times events with and without the tracer to pick the batch size, and
  // records the first (cold) event of each variant apart.  The per-event
  // estimate itself is taken over samples long enough for the clock (a
  // single cheap event on a TSC that ticks in steps of 21 cycles reads as 0
  // or 21): the pilot's batch grows until a sample spans the clock plan's
  // minimum.
  Status pilot() {
    const std::uint64_t unit = std::max<std::uint64_t>(1, workload_->min_batch);
    const double floor = m_.clock.floor_cycles;
    double cost[2] = {0, 0};
    for (int traced = 0; traced < 2; ++traced) {
      if (traced) catch_up_.before_traced_block(*tracer_);
      if (traced) TB_TRY(enable());
      double raw0 = 0;
      std::uint8_t mig0 = 0;
      time_block(state_.get(), unit, 1, m_, &raw0, &mig0);
      std::uint64_t fired = unit;
      (traced ? r_.traced : r_.baseline).cold_first_event_cycles =
          std::max(0.0, raw0 - floor) / static_cast<double>(unit);
      Status s = estimate_cost(unit, &cost[traced], &fired);
      if (traced) {
        fired_ += fired;
        own_fired_ += fired;
        TB_TRY(disable());
      }
      TB_TRY(s);
    }
    // A batch the user forced is held to the clock's resolution rule too
    // (the pilot's own batch meets it by construction): refused here, before
    // any block, when the pilot's estimate already shows its samples short.
    // After an idle gap the events cost more than the warm pilot's, so there
    // the measured baseline decides (resolution_problem() in finish()).
    if (opt_.batch > 0 && spec_.gap_us == 0)
      if (std::string why = forced_batch_problem(m_.clock, cost[0], opt_.batch, unit); !why.empty())
        return Status::error(why);
    if (spec_.gap_us > 0) return gap_plan(unit);
    r_.batch = choose_batch(cost[0], m_.clock.min_sample_cycles, unit, opt_.batch);
    // Bound one block's traced time (RunOptions::block_seconds: 50 ms, the
    // quick suite 10 ms: a tracer that records every event then writes a
    // trace of a size it can read back in seconds).
    double block_cycles = opt_.block_seconds * m_.clock.tsc_hz;
    // A tracer whose buffer holds fewer events than that: the block shrinks
    // to what it holds at the pilot's traced cost, so none are discarded.
    if (const std::uint64_t hold = tracer_->block_event_capacity(); hold > 0 && cost[1] > 0)
      block_cycles = std::min(block_cycles, static_cast<double>(hold) * cost[1]);
    // The batch is one for both variants and picked for the cheaper baseline;
    // where tracing costs thousands of times more (a uprobe on a 3-cycle
    // call), it is capped so that 50 traced samples still fit in a block.
    // The baseline's samples are then shorter than the clock plan's span:
    // its figure is resolved to a TSC step / batch per event, said in the
    // result, and negligible beside such an overhead.
    if (opt_.batch == 0 && cost[1] > 0) {
      std::uint64_t cap = static_cast<std::uint64_t>(block_cycles / (50.0 * std::max(cost[0], cost[1])));
      cap = std::max(unit, cap - cap % unit);
      if (r_.batch > cap) {
        r_.batch = cap;
        r_.warnings.push_back(fmt::format(
            "batch capped at {} events so a traced block stays near {:.0f} ms: a baseline sample spans ~{:.0f} cycles, "
            "less than the clock's {:.0f}, so the baseline is resolved to ~{:.2f} cycles per event",
            cap, 1e3 * block_cycles / m_.clock.tsc_hz, cost[0] * static_cast<double>(cap), m_.clock.min_sample_cycles,
            static_cast<double>(m_.clock.step_cycles) / static_cast<double>(cap)));
      }
    }
    cap_batch_for_gaps(cost, unit);
    double per_sample = std::max(1.0, std::max(cost[0], cost[1]) * static_cast<double>(r_.batch));
    std::uint64_t cap = static_cast<std::uint64_t>(block_cycles / per_sample);
    samples_ = std::min<std::uint64_t>(opt_.samples, std::max<std::uint64_t>(50, cap));  // never above --samples
    r_.samples_per_block = samples_;
    open_book();
    return Status::ok();
  }

  // The book of this benchmark's samples, at the batch chosen.  A sample
  // a preemption's length above its block's median (cpu_gaps.h) was
  // preempted: another task's time (a consumer's is counted apart), left
  // out of the amortized figure too, as the host's longer gaps are left out
  // of the share it takes off.
  void open_book() {
    book_ = std::make_unique<SampleBook>(m_.interrupt_gap_cycles, r_.batch, m_.counters->empty_block_delta(),
                                         opt_.write_samples);
    book_->amortize(m_.host_share, kPreemptionNs * 1e-9 * m_.clock.tsc_hz);
  }

  // A traced sample that would span longer than the host's gaps allow
  // (cpu_gaps.h: most samples would hold one, and the median with them) is
  // made shorter, whatever the baseline's resolution loses by it (said in
  // the result, as for the block's cap).
  void cap_batch_for_gaps(const double cost[2], std::uint64_t unit) {
    const double longest = std::max(cost[0], cost[1]);
    if (opt_.batch > 0 || !(m_.sample_cap_cycles > 0) || !(longest > 0)) return;
    std::uint64_t cap = static_cast<std::uint64_t>(m_.sample_cap_cycles / longest);
    cap = std::max(unit, cap - cap % unit);
    if (r_.batch <= cap) return;
    r_.batch = cap;
    r_.warnings.push_back(fmt::format(
        "batch capped at {} events so a traced sample spans at most ~{:.1f} us, the time in which the host's gaps "
        "hit one sample in {:.0f} (context.cpu_gaps): a baseline sample spans ~{:.0f} cycles, so the baseline is "
        "resolved to ~{:.2f} cycles per event",
        cap, 1e6 * longest * static_cast<double>(cap) / m_.clock.tsc_hz, 1 / kHitShare,
        cost[0] * static_cast<double>(cap), static_cast<double>(m_.clock.step_cycles) / static_cast<double>(cap)));
  }

  // A forced batch whose measured baseline samples came out shorter than the
  // clock's minimum span: no figure, the reason instead (never a number the
  // clock's step made).
  std::string resolution_problem() const {
    if (opt_.batch == 0 || r_.baseline.cycles.n == 0) return "";
    return forced_batch_problem(m_.clock, r_.baseline.cycles.p50, r_.batch,
                                std::max<std::uint64_t>(1, workload_->min_batch));
  }

  // With a gap before each sample, a sample is the workload's smallest batch
  // (or --batch): what it times is the events that follow an idle gap, which
  // a longer batch would dilute with warm ones.  A block is about 100 ms of
  // gaps (at least 20 samples, never above --samples).
  Status gap_plan(std::uint64_t unit) {
    r_.batch = opt_.batch > 0 ? opt_.batch : unit;
    samples_ = std::min<std::uint64_t>(opt_.samples, std::max<std::uint64_t>(20, 100000 / spec_.gap_us));
    r_.samples_per_block = samples_;
    open_book();
    return Status::ok();
  }

  // Median cost per event (floor subtracted) over 16 samples of a batch that
  // spans the clock plan's minimum; adds the events it fired to `fired`.
  Status estimate_cost(std::uint64_t unit, double* cost, std::uint64_t* fired) {
    constexpr int kPilot = 16;
    constexpr std::uint64_t kMaxBatch = 100000;
    double raw[kPilot];
    std::uint8_t migrated[kPilot];
    std::uint64_t b = unit;
    for (;;) {
      time_block(state_.get(), b, kPilot, m_, raw, migrated);
      *fired += kPilot * b;
      std::vector<double> v;
      for (int i = 0; i < kPilot; ++i) {
        if (!migrated[i]) v.push_back(raw[i]);
      }
      if (v.empty())
        return Status::error(
            fmt::format("every pilot sample migrated CPU (detected by {})", to_string(m_.clock.migration)));
      double med = summarize(std::move(v)).p50;
      *cost = std::max(0.0, med - m_.clock.floor_cycles) / static_cast<double>(b);
      if (med >= m_.clock.min_sample_cycles || b >= kMaxBatch) return Status::ok();
      double grow = std::ceil(m_.clock.min_sample_cycles / std::max(med, 1.0));
      std::uint64_t next = std::min<std::uint64_t>(kMaxBatch, b * static_cast<std::uint64_t>(std::max(2.0, grow)));
      b = std::max(unit, next - next % unit);
    }
  }

  Status enable() {
    if (Status s = tracer_->enable(); !s) return Status::error(fmt::format("enable: {}", s.message()));
    enabled_ = true;
    consumer_.enabled();
    return Status::ok();
  }
  Status disable() {
    enabled_ = false;
    consumer_.caller_begin(*tracer_);
    Status s = tracer_->disable();
    consumer_.caller_end();
    if (!s) return Status::error(fmt::format("disable: {}", s.message()));
    return Status::ok();
  }

  // What the traced blocks cost beside the measured CPU's instructions: the
  // interrupts they added per event (on a VM each is an exit to the
  // hypervisor).  Said as a warning from 0.05 per event on.
  void record_interrupts() {
    std::vector<std::string> notable;
    for (const auto& [kind, per_cpu] : interrupts_.extra_per_event()) {
      auto d = interrupts_.descriptions().find(kind);
      const std::string desc = d == interrupts_.descriptions().end() ? "" : d->second;
      nlohmann::json cpus = nlohmann::json::object();
      for (const auto& [cpu, x] : per_cpu) {
        cpus[std::to_string(cpu)] = std::round(x * 1e4) / 1e4;
        if (x >= 0.05) notable.push_back(fmt::format("{} ({}) {:+.2f} on CPU {}", kind, desc, x, cpu));
      }
      r_.interrupts_per_event[kind] = {{"description", desc}, {"extra_per_event", cpus}};
    }
    if (!notable.empty())
      r_.warnings.push_back(fmt::format(
          "traced blocks took more interrupts per event than untraced ones: {}; the figure includes them (on a "
          "VM each is an exit to the hypervisor), e.g. a tracer waking its consumer on another CPU",
          fmt::join(notable, ", ")));
  }

  // How often the traced blocks waited for the consumer, in the result; a
  // warning when it was still busy after the bound before some of them.
  void record_catch_up() {
    const CatchUpResult& t = catch_up_.tally();
    if (r_.consumer && !r_.consumer->tasks.empty()) r_.consumer->catch_up = t;
    if (t.timeouts > 0)
      r_.warnings.push_back(fmt::format(
          "the tracer's consumer was still busy {} time(s) when a traced block was due, after waiting {:g} s each: "
          "the machine is too busy for it to keep up, and those blocks may have lost events",
          t.timeouts, static_cast<double>(catch_up_.bound().count()) / 1e6));
  }

  Status run_block(bool traced, TimedBlock* b) {
    const std::uint64_t samples = samples_;
    b->per_event.resize(samples);
    b->migrated.resize(samples);
    std::vector<std::int64_t> c0, c1;
    // Counters are read outside the enabled window: a read(2) of them is an
    // event for tracers of the read syscall.
    if (traced) catch_up_.before_traced_block(*tracer_);
    m_.counters->read(&c0);
    InterruptSnapshot i0 = read_interrupts();
    if (traced) consumer_.block_begin(*tracer_);
    if (traced) TB_TRY(enable());
    const std::uint64_t batch = r_.batch;
    contenders_.run(true, batch);  // returns once every helper fires
    const double start_ns = clock_ns(CLOCK_MONOTONIC);
    time_block(state_.get(), batch, samples, m_, b->per_event.data(), b->migrated.data(),
               spec_.gap_us > 0 ? &gap_ : nullptr);
    contenders_.run(false);
    b->seconds = (clock_ns(CLOCK_MONOTONIC) - start_ns) / 1e9;
    std::uint64_t helper_events = contenders_.take_fired();
    if (traced) {
      TB_TRY(disable());
      consumer_.block_end(*tracer_);
      fired_ += samples * batch + helper_events;
      own_fired_ += samples * batch;
    }
    InterruptSnapshot i1 = read_interrupts();
    m_.counters->read(&c1);
    interrupts_.add(i0, i1, traced, samples * batch + helper_events);
    b->events = samples * batch;
    b->all_events = samples * batch + helper_events;
    for (double& x : b->per_event) x = (x - m_.clock.floor_cycles) / static_cast<double>(batch);
    b->counter_delta.resize(c0.size());
    for (std::size_t k = 0; k < c0.size(); ++k) b->counter_delta[k] = c1[k] - c0[k];
    return Status::ok();
  }

  BenchSpec spec_;
  const RunOptions& opt_;
  const Machine& m_;
  BenchmarkResult r_;
  const Workload* workload_ = nullptr;
  std::unique_ptr<Tracer> tracer_;
  std::unique_ptr<ActiveTracer> active_;
  std::unique_ptr<WorkloadState> state_;
  Contenders contenders_;
  bool attached_ = false, enabled_ = false, failed_ = false;
  std::uint64_t samples_ = 0, fired_ = 0;
  std::uint64_t own_fired_ = 0;  // of fired_, the measured thread's (no contenders')
  timespec gap_{};
  std::unique_ptr<SampleBook> book_;
  InterruptTally interrupts_;
  ConsumerMeter consumer_;
  ConsumerCatchUp catch_up_;
};

}  // namespace tracebench

#include "bench_run_steady.h"  // BenchRun's steady state: warm-up, level shifts
