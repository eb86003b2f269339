// The handler behind tbdelay::site() and its per-thread event counts.
#include "site.h"

#include <x86intrin.h>

#include <array>

#include "handled.h"

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
// initial-exec: a thread-pointer offset, not a __tls_get_addr call, on the handler's path.
__attribute__((tls_model("initial-exec"))) thread_local std::uint32_t t_generation = 0;
__attribute__((tls_model("initial-exec"))) thread_local Slot* t_slot = nullptr;

__attribute__((noinline)) Slot* claim_slot() {
  t_generation = g_generation.load(std::memory_order_acquire);
  const std::uint32_t i = g_next_slot.fetch_add(1, std::memory_order_relaxed);
  t_slot = i < kSlots ? &g_slots[i] : nullptr;
  return t_slot;
}

}  // namespace

void handle(std::uint64_t cycles) {
  const std::uint64_t start = __rdtsc();
  Slot* s = t_slot;
  if (__builtin_expect(t_generation != g_generation.load(std::memory_order_relaxed), 0)) s = claim_slot();
  if (s != nullptr) {
    s->events.store(s->events.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    g_overflow.fetch_add(1, std::memory_order_relaxed);
  }
  while (__rdtsc() - start < cycles) {}
}

void reset_handled() {
  for (auto& s : g_slots) s.events.store(0, std::memory_order_relaxed);
  g_overflow.store(0, std::memory_order_relaxed);
  g_next_slot.store(0, std::memory_order_relaxed);
  g_generation.fetch_add(1, std::memory_order_release);
}

std::uint64_t handled() {
  std::uint64_t n = g_overflow.load(std::memory_order_relaxed);
  for (const auto& s : g_slots) n += s.events.load(std::memory_order_relaxed);
  return n;
}

}  // namespace tbdelay
