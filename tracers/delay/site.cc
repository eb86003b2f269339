// The handler behind tbdelay::site() and its per-thread event counts.
#include "site.h"

#include <x86intrin.h>

#include <array>

#include "handled.h"
#include "tracebench/host_simulation.h"

namespace tbdelay {

std::atomic<std::uint64_t> g_spin_cycles{0};

namespace {

// Each firing thread counts in a slot of its own (a load and a store, no
// locked instruction: the count must cost far less than the smallest delay).
// A thread claims a slot at its first event of a generation; reset_handled()
// starts a new generation, so slots of threads that have gone are reused.
constexpr std::size_t kSlots = 64;
struct alignas(64) Slot {
  std::atomic<std::uint64_t> events{0};
};
std::array<Slot, kSlots> g_slots;
std::atomic<std::uint32_t> g_generation{1};
std::atomic<std::uint32_t> g_next_slot{0};
std::atomic<std::uint64_t> g_overflow{0};  // threads beyond kSlots share this one (locked add)
// The first pass: whether there is one, its length and period in events,
// its spin, and the events handled since it was set (a relaxed load and
// store, no locked instruction: the first pass is for one firing thread).
std::atomic<bool> g_first_pass_on{false};
std::atomic<std::uint64_t> g_first_pass_events{0}, g_first_pass_every{0}, g_first_pass_cycles{0};
std::atomic<std::uint64_t> g_since_first_pass{0};
// A step between two of the spin's TSC reads this long or longer is a gap,
// not spin (set_gap_cycles; none until it is set).
std::atomic<std::uint64_t> g_gap_cycles{~std::uint64_t{0}};
// initial-exec: a thread-pointer offset, not a __tls_get_addr call, on the handler's path.
__attribute__((tls_model("initial-exec"))) thread_local std::uint32_t t_generation = 0;
__attribute__((tls_model("initial-exec"))) thread_local Slot* t_slot = nullptr;

// The spin of the next event while a first pass is set: the first pass's
// for its events (and again every `every` events, when given), the
// switch's otherwise.
__attribute__((noinline)) std::uint64_t first_pass_spin(std::uint64_t cycles) {
  const std::uint64_t n = g_since_first_pass.load(std::memory_order_relaxed);
  g_since_first_pass.store(n + 1, std::memory_order_relaxed);
  const std::uint64_t every = g_first_pass_every.load(std::memory_order_relaxed);
  const std::uint64_t at = every > 0 ? n % every : n;
  return at < g_first_pass_events.load(std::memory_order_relaxed) ? g_first_pass_cycles.load(std::memory_order_relaxed)
                                                                  : cycles;
}

__attribute__((noinline)) Slot* claim_slot() {
  t_generation = g_generation.load(std::memory_order_acquire);
  const std::uint32_t i = g_next_slot.fetch_add(1, std::memory_order_relaxed);
  t_slot = i < kSlots ? &g_slots[i] : nullptr;
  return t_slot;
}

}  // namespace

void handle(std::uint64_t cycles) {
  const std::uint64_t start = tracebench::seen_tsc(__rdtsc());
  Slot* s = t_slot;
  if (__builtin_expect(t_generation != g_generation.load(std::memory_order_relaxed), 0)) s = claim_slot();
  if (s != nullptr) {
    s->events.store(s->events.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    g_overflow.fetch_add(1, std::memory_order_relaxed);
  }
  if (__builtin_expect(g_first_pass_on.load(std::memory_order_relaxed), 0)) cycles = first_pass_spin(cycles);
  // The spin counts the time it held the CPU: a step between two reads as
  // long as a gap is the host's (an interrupt, a preemption, stolen time),
  // and it adds to the event's cost as it would to a tracer's work, instead
  // of being spent out of the spin.
  const std::uint64_t gap = g_gap_cycles.load(std::memory_order_relaxed);
  std::uint64_t held = 0, prev = start;
  while (held < cycles) {
    const std::uint64_t now = tracebench::seen_tsc(__rdtsc());
    if (now - prev < gap) held += now - prev;
    prev = now;
  }
}

void set_gap_cycles(std::uint64_t cycles) { g_gap_cycles.store(cycles, std::memory_order_relaxed); }

void reset_handled() {
  for (auto& s : g_slots) s.events.store(0, std::memory_order_relaxed);
  g_overflow.store(0, std::memory_order_relaxed);
  g_next_slot.store(0, std::memory_order_relaxed);
  g_generation.fetch_add(1, std::memory_order_release);
}

void set_first_pass(std::uint64_t events, std::uint64_t every, std::uint64_t cycles) {
  g_first_pass_on.store(false, std::memory_order_relaxed);
  g_first_pass_events.store(events, std::memory_order_relaxed);
  g_first_pass_every.store(every, std::memory_order_relaxed);
  g_first_pass_cycles.store(cycles, std::memory_order_relaxed);
  g_since_first_pass.store(0, std::memory_order_relaxed);
  g_first_pass_on.store(events > 0, std::memory_order_relaxed);
}

std::uint64_t handled() {
  std::uint64_t n = g_overflow.load(std::memory_order_relaxed);
  for (const auto& s : g_slots) n += s.events.load(std::memory_order_relaxed);
  return n;
}

}  // namespace tbdelay
