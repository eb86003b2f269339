// The probe path and the probe table: per-thread slots and their locks, a
// site's binding fired under its slot lock, the sites of the binary
// (section tbdvm_sites) and the dynamic ones (profile-N), matching
// provider:module:function:name patterns.
#include "tracers/dvm/runtime/internal.h"

#include <fnmatch.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <set>

namespace tbdvm {

// ---------------------------------------------------------------------------
// Process-wide slot locks: they outlive every State so a site can take its
// lock before it reads its binding (see site_fire).
SpinLock g_slot_locks[kMaxSlots];

namespace {
std::atomic<uint32_t> g_next_thread{0};

struct ThreadInfo {
  uint64_t tid;
  uint32_t slot_ordinal;
  bool init;
};
thread_local ThreadInfo t_info;

inline ThreadInfo* thread_info() {
  ThreadInfo* t = &t_info;
  if (__builtin_expect(!t->init, 0)) {
    t->tid = static_cast<uint64_t>(syscall(SYS_gettid));
    // A thread keeps the slot of the CPU it first fired on (threads pinned
    // to different CPUs never share a slot); round-robin if that fails.
    int cpu = sched_getcpu();
    t->slot_ordinal = cpu >= 0 ? static_cast<uint32_t>(cpu) : g_next_thread.fetch_add(1, std::memory_order_relaxed);
    t->init = true;
  }
  return t;
}

}  // namespace

void lock_slot(SpinLock* l) {
  uint32_t t = l->next.fetch_add(1, std::memory_order_relaxed);
  uint32_t spins = 0;
  while (l->owner.load(std::memory_order_acquire) != t) {
    if (++spins > 1000) {
      sched_yield();  // the holder was preempted on this CPU
      spins = 0;
    } else {
      __builtin_ia32_pause();
    }
  }
}

namespace {
inline void fire_binding_site(Site* site, FireArgs& fa, bool in_signal) {
  ThreadInfo* t = thread_info();
  Binding* b0 = site->binding.load(std::memory_order_acquire);
  if (!b0) return;
  uint32_t slot = t->slot_ordinal % b0->state->nslots;
  SpinLock* lock = &g_slot_locks[slot];
  if (!lock->try_lock()) {
    if (in_signal) {
      b0->state->slots[slot].busy_drops.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    lock_slot(lock);
  }
  // Re-read under the lock: disable() clears bindings and then takes every
  // slot lock once, so a binding seen here stays alive until we unlock.
  Binding* b = site->binding.load(std::memory_order_acquire);
  if (b) {
    fa.tid = t->tid;
    fa.thread = reinterpret_cast<uint64_t>(t);
    dvm_fire_locked(b->state, &b->probe, &fa, slot % b->state->nslots);
  }
  lock->unlock();
}
}  // namespace

void site_fire_in_signal(Site* site, FireArgs& fa) { fire_binding_site(site, fa, true); }

void site_fire(Site* site, Region region, const uint64_t* args, uint32_t nargs) {
  FireArgs fa;
  uint32_t n = nargs < kMaxArgs ? nargs : kMaxArgs;
  for (uint32_t i = 0; i < n; i++) fa.args[i] = args[i];
  fa.region = region;
  fire_binding_site(site, fa, false);
}

// ---------------------------------------------------------------------------
// Probe table.
extern "C" {
extern Site __start_tbdvm_sites[] __attribute__((weak));
extern Site __stop_tbdvm_sites[] __attribute__((weak));
}

Site g_begin TBDVM_SITE_ATTR = {"dtrace", "", "", "BEGIN", {nullptr}};
Site g_end TBDVM_SITE_ATTR = {"dtrace", "", "", "END", {nullptr}};
// Never armed: the core fires its binding's ECBs after a fault (State::error_probe).
Site g_error TBDVM_SITE_ATTR = {"dtrace", "", "", "ERROR", {nullptr}};

namespace {
std::mutex g_probe_mu;
std::deque<Site> g_dynamic_sites;  // profile-N
std::deque<std::string> g_dynamic_names;
std::map<Site*, uint32_t> g_probe_ids;
uint32_t g_next_probe_id = 1;

uint32_t probe_id_locked(Site* s) {
  auto it = g_probe_ids.find(s);
  if (it != g_probe_ids.end()) return it->second;
  uint32_t id = g_next_probe_id++;
  g_probe_ids.emplace(s, id);
  return id;
}

}  // namespace

// Creates profile:::profile-N on demand (N in Hz, "profile-997" or "profile-997hz").
void ensure_profile_probe(const std::string& pattern) {
  auto pos = pattern.rfind(':');
  std::string name = pos == std::string::npos ? pattern : pattern.substr(pos + 1);
  if (name.rfind("profile-", 0) != 0) return;
  std::string rate = name.substr(8);
  if (rate.size() > 2 && rate.substr(rate.size() - 2) == "hz") rate.resize(rate.size() - 2);
  if (rate.empty() || rate.find_first_not_of("0123456789") != std::string::npos) return;
  std::lock_guard<std::mutex> g(g_probe_mu);
  for (auto& s : g_dynamic_sites)
    if (name == s.name) return;
  g_dynamic_names.push_back(name);
  Site& s = g_dynamic_sites.emplace_back();
  s.provider = "profile";
  s.module = "";
  s.function = "";
  s.name = g_dynamic_names.back().c_str();
  s.binding.store(nullptr);
}

std::vector<ProbeInfo> list_probes() {
  std::lock_guard<std::mutex> g(g_probe_mu);
  std::vector<ProbeInfo> out;
  std::set<std::string> seen;
  auto add = [&](Site* s) {
    ProbeInfo p{probe_id_locked(s), s, s->provider, s->module, s->function, s->name};
    out.push_back(std::move(p));
  };
  if (__start_tbdvm_sites && __stop_tbdvm_sites)
    for (Site* s = __start_tbdvm_sites; s < __stop_tbdvm_sites; s++) add(s);
  for (auto& s : g_dynamic_sites) add(&s);
  std::sort(out.begin(), out.end(), [](const ProbeInfo& a, const ProbeInfo& b) { return a.id < b.id; });
  return out;
}

std::vector<std::string> description_fields(const std::string& pattern) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t c = pattern.find(':', start);
    parts.push_back(pattern.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  if (parts.size() > 4) return {};
  while (parts.size() < 4) parts.insert(parts.begin(), "");
  return parts;
}

bool probe_matches(const std::string& pattern, const ProbeInfo& p) {
  const std::vector<std::string> parts = description_fields(pattern);
  if (parts.empty()) return false;
  const std::string* fields[4] = {&p.provider, &p.module, &p.function, &p.name};
  for (int i = 0; i < 4; i++) {
    if (parts[i].empty()) continue;
    if (fnmatch(parts[i].c_str(), fields[i]->c_str(), 0) != 0) return false;
  }
  return true;
}

}  // namespace tbdvm
