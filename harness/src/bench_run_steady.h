// BenchRun's steady state (tracebench/steady_state.h), kept apart from the
// rest of a benchmark's life: the warm-up before the repetitions, the level
// shifts among them, and whether the level the run ended in held.
// Included at the end of bench_run.h, whose class declares these members.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_run.h"

namespace tracebench {

// After a repetition: a level shift among the repetitions kept leaves
// those before it out (steady_state.h); the result says what was left out.
inline void BenchRun::settle_levels() {
  if (failed_ || !book_) return;
  const auto shift = find_level_shift(book_->overheads(), steady_rule());
  if (!shift) return;
  r_.level_shifts.push_back({static_cast<int>(shift->index), shift->before, shift->after});
  book_->leave_out_before(shift->index);
  r_.left_out_overheads_cycles = book_->left_out_overheads();
}

// After level shifts, the level the run ended in must hold the
// repetitions an interval needs (or the cap, if lower): else the benchmark
// is unsteady, with no figure, and the reason names the levels.  When it
// holds, a note says what was left out.
inline std::string BenchRun::unsteady() {
  if (r_.level_shifts.empty()) return "";
  const double ns = 1e9 / m_.clock.tsc_hz;
  std::string levels;
  for (const auto& s : r_.level_shifts)
    levels += fmt::format("{}{} repetitions at {:.1f} ns then {:.1f} ns", levels.empty() ? "" : "; ",
                          s.repetitions_left_out, s.before_cycles * ns, s.after_cycles * ns);
  const std::size_t kept = book_->repetitions_counted();
  const std::size_t need =
      std::min<std::size_t>(kMinRepetitionsForInterval, static_cast<std::size_t>(opt_.repetitions));
  if (kept >= need) {
    r_.warnings.push_back(fmt::format(
        "level shift in the repetitions ({}): those before it are left out, the figure is of the {} repetitions "
        "after it",
        levels, kept));
    return "";
  }
  return fmt::format(
      "the overhead changed level during the run ({}), and the last level held {} counted repetitions "
      "of the {} an interval needs within {} in all; rerun with a longer warm-up (--warmup) or more repetitions "
      "(-r)",
      levels, kept, need, r_.repetitions);
}

// Traced blocks, each one enabled window of three chunks, until the last
// three chunks agree (steady_state.h), after the events a tracer says it
// costs more for at first (Tracer::first_pass_events: LTTng-UST's buffer
// pages touched on its first passes, 2.5x the steady cost for ~1.8 passes
// on a VM whose page faults are dear), within the time budget.
// A block is a measured block's size (what the tracer's buffer is sized
// for), enabled and disabled once: for eBPF and perf an enable and a
// disable cost tens of milliseconds, more than the block.  Its events are
// fired with the tracer enabled, so they count for verification.
inline Status BenchRun::warm_up() {
  WarmUpResult& w = r_.warmup.emplace();
  if (spec_.gap_us > 0 || opt_.warmup_seconds <= 0) {
    w.stop = spec_.gap_us > 0 ? "gap" : "off";
    return Status::ok();
  }
  constexpr std::uint64_t kChunks = 3;
  const std::uint64_t chunk = std::max<std::uint64_t>(1, samples_ / kChunks);  // a block is >= 50 samples
  w.min_events = tracer_->first_pass_events();
  const ShiftRule rule = steady_rule();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    TB_TRY(warm_block(kChunks, chunk, &w.chunk_medians_cycles));
    ++g_progress;
    w.blocks++;
    w.events += kChunks * chunk * r_.batch;
    w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (w.events >= w.min_events && stationary(w.chunk_medians_cycles, rule)) {
      w.stop = "stationary";
      return Status::ok();
    }
    if (w.seconds >= opt_.warmup_seconds) {
      w.stop = "budget";
      r_.warnings.push_back(fmt::format(
          "the warm-up did not settle in {:.1f} s ({} traced blocks, {} events): {}; the repetitions' level check "
          "still applies (--warmup gives it longer)",
          w.seconds, w.blocks, w.events,
          w.events < w.min_events
              ? fmt::format("the {} events the tracer costs more for at first had not all fired", w.min_events)
              : std::string("the last chunks' medians still moved by more than 10%")));
      return Status::ok();
    }
    if (g_stop_requested) return Status::error("interrupted");
  }
}

// One traced block of `chunks` x `chunk` samples in one enabled window,
// each chunk's median per event appended to `medians` (in place: nothing
// is allocated while the tracer records).  No counters, no interrupt
// tally: a warm-up is not compared with anything.
inline Status BenchRun::warm_block(std::uint64_t chunks, std::uint64_t chunk, std::vector<double>* medians) {
  std::vector<double> per_event(chunk);
  std::vector<std::uint8_t> migrated(chunk);
  const std::uint64_t batch = r_.batch;
  catch_up_.before_traced_block(*tracer_);
  consumer_.block_begin(*tracer_);
  TB_TRY(enable());
  contenders_.run(true);
  for (std::uint64_t c = 0; c < chunks; ++c) {
    time_block(state_.get(), batch, chunk, m_, per_event.data(), migrated.data());
    const auto mid = per_event.begin() + static_cast<std::ptrdiff_t>(chunk / 2);
    std::nth_element(per_event.begin(), mid, per_event.end());
    medians->push_back((*mid - m_.clock.floor_cycles) / static_cast<double>(batch));
  }
  contenders_.run(false);
  const std::uint64_t helper_events = contenders_.take_fired();
  TB_TRY(disable());
  consumer_.block_end(*tracer_);
  fired_ += chunks * chunk * batch + helper_events;
  own_fired_ += chunks * chunk * batch;
  return Status::ok();
}

}  // namespace tracebench
