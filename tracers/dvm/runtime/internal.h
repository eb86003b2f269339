// Internal to the D-VM runtime (runtime/*.cc): what its parts share.  Not
// for adapters or tests: they use tracers/dvm/runtime.h.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tracers/dvm/runtime.h"

namespace tbdvm {

// Process-wide slot locks (probes.cc): they outlive every State so a site
// can take its lock before it reads its binding (see site_fire).
constexpr uint32_t kMaxSlots = 256;
extern SpinLock g_slot_locks[kMaxSlots];
void lock_slot(SpinLock* l);

// What a site points to while a session has it enabled: the session's
// state, the probe as the VM sees it, and the ECBs that fire there.
struct Binding {
  State* state = nullptr;
  Probe probe;
  std::string names;
  std::vector<Ecb*> ecbs;
};

struct Session::EcbInfo {
  const ClauseDesc* clause = nullptr;
  const Ecb* ecb = nullptr;
  const Binding* binding = nullptr;
};

// dtrace:::BEGIN and dtrace:::END (probes.cc).
extern Site g_begin, g_end;
// Creates profile:::profile-N when `pattern` names one (probes.cc).
void ensure_profile_probe(const std::string& pattern);
// Fires `site` from a signal handler: never waits for a busy slot, counts
// the drop instead (probes.cc).
void site_fire_in_signal(Site* site, FireArgs& fa);

}  // namespace tbdvm
