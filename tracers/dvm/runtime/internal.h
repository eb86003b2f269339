// Internal to the D-VM runtime (runtime/*.cc): what its parts share.  Not
// for adapters or tests: they use tracers/dvm/runtime.h.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tracers/common/elf.h"
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
  ProbeInfo kernel;  // the kernel home's probe as listed: kind, arg, file, offset, semaphore, arguments
};

// A process's files as the pid and usdt providers find them (pid.cc).
bool glob(const std::string& pattern, const std::string& s);  // fnmatch; "" matches anything
// A provider field that names a process: letters (and digits after the
// first) then the pid's digits, "pid123" -> ("pid", 123), "tracebench7" ->
// ("tracebench", 7).
bool provider_process(const std::string& field, std::string* prefix, long* pid);
struct ProcessModule {
  std::string name, path;  // as D names it (a.out, or the file's basename); the file
};
// Process pid's modules the module field matches (Options::target_exe for
// a held -c command); an error, prefixed by `where`, says what is missing.
Error process_modules(long pid, const std::string& mod, const Options& o, const std::string& where,
                      std::vector<ProcessModule>* out);
// ELF files are read through tracers/common/elf.h (elf::File).
using ElfFile = tracebench::elf::File;
// An ELF file's defined functions at their file offsets (.symtab, else
// .dynsym; both when present, the first of a name wins).
struct FileFunction {
  std::string name;
  uint64_t offset, size;
};
Error elf_functions(const std::string& path, std::vector<FileFunction>* out);
void elf_functions(const ElfFile& f, std::vector<FileFunction>* out);  // one already open

// The kernel home (kernel.cc): a session in the tracebench module, driven
// through /dev/tracebench.  Closing it (the destructor) disarms and frees
// the module's session.
class KernelHome {
 public:
  ~KernelHome();
  // Hands the module every object, action, ECB and probe; it verifies them again.
  Error enable(const std::vector<const Binding*>& bindings, const std::vector<const Ecb*>& ecbs,
               const std::vector<const std::vector<Action>*>& actions, const Options& o);
  Error go();            // arms (BEGIN fires at the first)
  Error stop(bool end);  // disarms (END fires with end)
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
