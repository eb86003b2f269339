// Internal to the D-VM runtime (runtime/*.cc): what its parts share.  Not
// for adapters or tests: they use tracers/dvm/runtime.h.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <map>
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
  uint32_t kernel_kind = 0, kernel_arg = 0;  // the kernel home's probe
  std::string kernel_path;                    // pid probes (ProbeInfo)
  uint64_t kernel_offset = 0;
};

// The kernel home (kernel.cc): a session in the tracebench module, driven
// through /dev/tracebench.  Closing it (the destructor) disarms and frees
// the module's session.
class KernelHome {
 public:
  ~KernelHome();
  // Hands the module every object, action, ECB and probe; it verifies them again.
  Error enable(const std::vector<const Binding*>& bindings,
               const std::vector<const Ecb*>& ecbs, const std::vector<const std::vector<Action>*>& actions,
               const Options& o);
  Error go();                 // arms (BEGIN fires at the first)
  Error stop(bool end);       // disarms (END fires with end)
  // A CPU's principal buffer (switched) or aggregation buffer, copied into
  // dst; returns its bytes and adds the module's switch time to *ns.
  uint32_t snap(bool agg, uint32_t cpu, uint8_t* dst, uint32_t cap, uint64_t* ns);
  bool status(Counters* c, bool* exit_requested);
  // clear()/trunc() on every CPU's aggregation buffer (dvm_agg_reset there);
  // key == nullptr: every key of agg_id.
  Error agg_reset(uint32_t agg_id, const std::string* key, bool unlink);
  uint32_t ncpus() const { return ncpus_; }

 private:
  int fd_ = -1;
  uint32_t ncpus_ = 0;
};

struct Session::EcbInfo {
  const ClauseDesc* clause = nullptr;
  const Ecb* ecb = nullptr;
  const Binding* binding = nullptr;
};

// dtrace:::BEGIN and dtrace:::END (probes.cc).
extern Site g_begin, g_end;
// dtrace:::ERROR (probes.cc): its binding is the State's error_probe.
extern Site g_error;
// Creates profile:::profile-N when `pattern` names one (probes.cc).
void ensure_profile_probe(const std::string& pattern);
// Fires `site` from a signal handler: never waits for a busy slot, counts
// the drop instead (probes.cc).
void site_fire_in_signal(Site* site, FireArgs& fa);

}  // namespace tbdvm
