// Static D-VM probe sites.
//
//   DVM_PROBE(tb, "hot", "fire", i);                 // tb:tracebench:hot:fire
//   DVM_PROBE_REGION(tb, "hot", "payload", p, n, i); // D may read [p, p+n)
//   DVM_SYSCALL_ENTRY(getpid);                       // syscall::getpid:entry
//   DVM_FUNCTION_ENTRY(a, b);                        // fbt:tracebench:<func>:entry
//
// A site is a static object in the "tbdvm_sites" section, so the runtime can
// list every site in the binary without constructors.  Disabled, a site costs
// one load and one predicted-not-taken branch; arguments are evaluated only
// when the site is enabled.
#pragma once

#include <atomic>
#include <cstdint>

#include "kmod/dvm/core/vm.h"

#ifndef TBDVM_MODULE
#define TBDVM_MODULE "tracebench"
#endif

namespace tbdvm {

struct Binding;  // runtime: the State and Probe a site fires into

struct Site {
  const char* provider;
  const char* module;
  const char* function;
  const char* name;
  std::atomic<Binding*> binding;
};

// Out of line: takes the thread's slot lock, re-reads the binding, fires.
void site_fire(Site* site, Region region, const uint64_t* args, uint32_t nargs);

template <typename... A>
inline void site_fire_args(Site* site, Region region, A... a) {
  const uint64_t v[sizeof...(A) + 1] = {static_cast<uint64_t>(a)..., 0};
  site_fire(site, region, v, sizeof...(A));
}

inline bool site_enabled(const Site& s) {
  return __builtin_expect(s.binding.load(std::memory_order_relaxed) != nullptr, 0);
}

}  // namespace tbdvm

#define TBDVM_SITE_ATTR __attribute__((section("tbdvm_sites"), used, aligned(8)))

#define TBDVM_SITE_FIRE_(prov, func, nm, region, ...)                                                                 \
  do {                                                                                                                \
    static ::tbdvm::Site tbdvm_site_ TBDVM_SITE_ATTR = {prov, TBDVM_MODULE, func, nm, {nullptr}};                     \
    if (::tbdvm::site_enabled(tbdvm_site_)) ::tbdvm::site_fire_args(&tbdvm_site_, region __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

#define DVM_PROBE(provider, function, name, ...) \
  TBDVM_SITE_FIRE_(                              \
      #provider, function, name, ::tbdvm::Region {} __VA_OPT__(, ) __VA_ARGS__)

#define DVM_PROBE_REGION(provider, function, name, ptr, len, ...)                                               \
  TBDVM_SITE_FIRE_(#provider, function, name,                                                                   \
                   (::tbdvm::Region{reinterpret_cast<uint64_t>(ptr), static_cast<uint64_t>(len)})__VA_OPT__(, ) \
                       __VA_ARGS__)

#define DVM_SYSCALL_ENTRY(sysname, ...) \
  TBDVM_SITE_FIRE_(                     \
      "syscall", #sysname, "entry", ::tbdvm::Region {} __VA_OPT__(, ) __VA_ARGS__)

#define DVM_SYSCALL_RETURN(sysname, ...) \
  TBDVM_SITE_FIRE_(                      \
      "syscall", #sysname, "return", ::tbdvm::Region {} __VA_OPT__(, ) __VA_ARGS__)

#define DVM_FUNCTION_ENTRY(...) \
  TBDVM_SITE_FIRE_(             \
      "fbt", __func__, "entry", ::tbdvm::Region {} __VA_OPT__(, ) __VA_ARGS__)
