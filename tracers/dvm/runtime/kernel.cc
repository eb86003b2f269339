// The kernel home of a session: the D-VM inside the tracebench module
// (/dev/tracebench, kmod/dvm).  The probes it offers (dtrace:::BEGIN/END,
// sdt:tracebench::tracebench_fixed/_payload, syscall::<name>:entry/return,
// names from libseccomp's table for this architecture, fbt:<module>:<function>:
// entry/return for the text symbols of /proc/kallsyms; profile/tick and pid
// and usdt probes are made for the descriptions that name them:
// kernel_timer_probes here, kernel_pid_probes in pid.cc, kernel_usdt_probes
// in usdt.cc) and the DVM_* ioctls a session drives: enable, go, stop,
// buffer and aggregation snapshots, status.
#include "tracers/dvm/runtime/internal.h"

#include <fcntl.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "kmod/include/tracebench_kmod_abi.h"

namespace tbdvm {

static_assert(sizeof(tb_kmod_dif_insn) == sizeof(Insn), "the module's DIF instruction is the core's");
static_assert(TB_KMOD_DVM_FAULTS >= kFaultCount, "the status carries every fault kind");
static_assert(TB_KMOD_DVM_USDT_ARGS <= kMaxArgs, "every usdt argument the module reads reaches the VM");

namespace {

// fbt:<module>:<function>:entry/return for every text symbol /proc/kallsyms
// lists (module "kernel" for the kernel image), once per process.
const std::vector<std::pair<std::string, std::string>>& kernel_functions() {
  static const std::vector<std::pair<std::string, std::string>> funcs = [] {
    std::vector<std::pair<std::string, std::string>> v;
    std::set<std::pair<std::string, std::string>> seen;
    std::ifstream in("/proc/kallsyms");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string addr, type, name, mod;
      if (!(ls >> addr >> type >> name) || (type != "t" && type != "T")) continue;
      ls >> mod;
      mod = mod.size() > 2 && mod.front() == '[' ? mod.substr(1, mod.size() - 2) : "kernel";
      if (seen.insert({mod, name}).second) v.emplace_back(mod, name);
    }
    return v;
  }();
  return funcs;
}

// A probe kind as the stage tables name it.
std::string kernel_probe_kind_name(uint32_t kind) {
  switch (kind) {
    case TB_KMOD_DVM_PROBE_BEGIN: return "dtrace BEGIN";
    case TB_KMOD_DVM_PROBE_END: return "dtrace END";
    case TB_KMOD_DVM_PROBE_ERROR: return "dtrace ERROR";
    case TB_KMOD_DVM_PROBE_SYSCALL_ENTRY: return "syscall entry";
    case TB_KMOD_DVM_PROBE_SYSCALL_RETURN: return "syscall return";
    case TB_KMOD_DVM_PROBE_SDT: return "sdt";
    case TB_KMOD_DVM_PROBE_FBT_ENTRY: return "fbt entry";
    case TB_KMOD_DVM_PROBE_FBT_RETURN: return "fbt return";
    case TB_KMOD_DVM_PROBE_PROFILE: return "profile";
    case TB_KMOD_DVM_PROBE_TICK: return "tick";
    case TB_KMOD_DVM_PROBE_PID_ENTRY: return "pid entry";
    case TB_KMOD_DVM_PROBE_PID_RETURN: return "pid return";
    case TB_KMOD_DVM_PROBE_USDT: return "usdt";
    default: return "kind " + std::to_string(kind);
  }
}

}  // namespace

const std::vector<ProbeInfo>& list_kernel_probes() {
  static const std::vector<ProbeInfo> probes = [] {
    std::vector<ProbeInfo> out;
    uint32_t id = 1;
    out.push_back(ProbeInfo{id++, nullptr, "dtrace", "", "", "BEGIN", TB_KMOD_DVM_PROBE_BEGIN, 0});
    out.push_back(ProbeInfo{id++, nullptr, "dtrace", "", "", "END", TB_KMOD_DVM_PROBE_END, 0});
    out.push_back(ProbeInfo{id++, nullptr, "dtrace", "", "", "ERROR", TB_KMOD_DVM_PROBE_ERROR, 0});
    // The module's own tracepoints, fired by its FIRE loop (workloads kmod_fixed, kmod_payload).
    out.push_back(
        ProbeInfo{id++, nullptr, "sdt", "tracebench", "", "tracebench_fixed", TB_KMOD_DVM_PROBE_SDT, TB_KMOD_EV_FIXED});
    out.push_back(ProbeInfo{id++, nullptr, "sdt", "tracebench", "", "tracebench_payload", TB_KMOD_DVM_PROBE_SDT,
                            TB_KMOD_EV_PAYLOAD});
    // Syscall numbers are the architecture's ABI; libseccomp knows their names,
    // the module (when loaded) how many this kernel's table holds.
    uint32_t nr_syscalls = 0;
    const int nr_end = kernel_home_check(&nr_syscalls).ok() && nr_syscalls > 0 && nr_syscalls <= 1024
                           ? static_cast<int>(nr_syscalls)
                           : 1024;
    for (int nr = 0; nr < nr_end; nr++) {
      char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
      if (!name) continue;
      out.push_back(ProbeInfo{id++, nullptr, "syscall", "", name, "entry", TB_KMOD_DVM_PROBE_SYSCALL_ENTRY,
                              static_cast<uint32_t>(nr)});
      out.push_back(ProbeInfo{id++, nullptr, "syscall", "", name, "return", TB_KMOD_DVM_PROBE_SYSCALL_RETURN,
                              static_cast<uint32_t>(nr)});
      std::free(name);
    }
    // Kernel functions: a kprobe (entry) or kretprobe (return) each, made when
    // a session enables them; one the kernel will not probe is refused then.
    for (const auto& [mod, func] : kernel_functions()) {
      out.push_back(ProbeInfo{id++, nullptr, "fbt", mod, func, "entry", TB_KMOD_DVM_PROBE_FBT_ENTRY, 0});
      out.push_back(ProbeInfo{id++, nullptr, "fbt", mod, func, "return", TB_KMOD_DVM_PROBE_FBT_RETURN, 0});
    }
    return out;
  }();
  return probes;
}

std::vector<ProbeInfo> kernel_timer_probes(const std::vector<std::string>& patterns) {
  std::vector<ProbeInfo> out;
  uint32_t id = static_cast<uint32_t>(list_kernel_probes().size()) + 1;
  for (const std::string& pattern : patterns) {
    const auto pos = pattern.rfind(':');
    const std::string name = pos == std::string::npos ? pattern : pattern.substr(pos + 1);
    const bool profile = name.rfind("profile-", 0) == 0, tick = name.rfind("tick-", 0) == 0;
    if (!profile && !tick) continue;
    std::string rate = name.substr(profile ? 8 : 5);
    if (rate.size() > 2 && rate.substr(rate.size() - 2) == "hz") rate.resize(rate.size() - 2);
    if (rate.empty() || rate.size() > 5 || rate.find_first_not_of("0123456789") != std::string::npos) continue;
    const unsigned long hz = std::stoul(rate);
    if (hz < 1 || hz > TB_KMOD_DVM_MAX_HZ) continue;
    bool dup = false;
    for (const auto& p : out) dup = dup || p.name == name;
    if (!dup)
      out.push_back(ProbeInfo{id++, nullptr, "profile", "", "", name,
                              profile ? TB_KMOD_DVM_PROBE_PROFILE : TB_KMOD_DVM_PROBE_TICK, static_cast<uint32_t>(hz)});
  }
  return out;
}

namespace {
std::string errno_text(const char* what, int err) { return std::string(what) + ": " + std::strerror(err); }

// Opens the module's device and reads its INFO: this binary's ABI and a
// D-VM, or why not (*fd stays open only when the answer is yes).
Error open_module(int* fd, tb_kmod_info* info) {
  *fd = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  if (*fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      return {std::string(TB_KMOD_DEVICE_PATH) +
              " does not exist: the tracebench module is not loaded (the D-VM's kernel home needs it; run in the "
              "VM lab: tracebench vm -- run -t dvm_kernel ... or tracebench vm -- dvm --kernel ...)"};
    return {errno_text("open " TB_KMOD_DEVICE_PATH " (needs root)", err)};
  }
  Error e;
  if (ioctl(*fd, TB_KMOD_IOC_INFO, info) != 0)
    e = {errno_text("TB_KMOD_IOC_INFO", errno)};
  else if (info->abi_version != TB_KMOD_ABI_VERSION)
    e = {"tracebench module ABI " + std::to_string(info->abi_version) + ", this binary speaks " +
         std::to_string(TB_KMOD_ABI_VERSION) + ": rebuild kmod/ from this source tree"};
  else if (!(info->caps & TB_KMOD_CAP_DVM))
    e = {"the tracebench module has no D-VM (TB_KMOD_CAP_DVM)"};
  if (!e.ok()) {
    close(*fd);
    *fd = -1;
  }
  return e;
}
}  // namespace

Error kernel_home_check(uint32_t* nr_syscalls) {
  int fd;
  tb_kmod_info info{};
  Error e = open_module(&fd, &info);
  if (!e.ok()) return e;
  close(fd);
  if (nr_syscalls) *nr_syscalls = info.nr_syscalls;
  return e;
}

KernelHome::~KernelHome() {
  if (fd_ >= 0) close(fd_);  // the module disarms and frees the session
}

// Long (~120 lines) on purpose: it lays the session out in the module's ABI
// (tracebench_kmod_abi.h: objects, key objects, actions, ECBs, probes) as
// DVM_ENABLE takes them and reads the module's refusal back, so that the
// layout is read against the ABI in one place.
Error KernelHome::enable(const std::vector<const Binding*>& bindings, const std::vector<const Ecb*>& ecbs,
                         const std::vector<const std::vector<Action>*>& actions, const Options& o) {
  tb_kmod_info info{};
  if (Error e = open_module(&fd_, &info); !e.ok()) return e;

  // Objects: every predicate, action value and key, numbered from 1.
  std::vector<tb_kmod_dif_verify> objs;
  std::map<const Program*, uint32_t> index;
  auto object = [&](const Program* p) -> uint32_t {
    if (!p) return 0;
    auto it = index.find(p);
    if (it != index.end()) return it->second;
    tb_kmod_dif_verify v{};
    v.insns_ptr = reinterpret_cast<uint64_t>(p->insns);
    v.ints_ptr = reinterpret_cast<uint64_t>(p->inttab);
    v.strtab_ptr = reinterpret_cast<uint64_t>(p->strtab);
    v.n_insns = p->ninsns;
    v.n_ints = p->nints;
    v.strtab_len = p->strtab_len;
    v.flags = p->returns_string ? TB_KMOD_DIF_RETURNS_STRING : 0;
    objs.push_back(v);
    uint32_t i = static_cast<uint32_t>(objs.size());
    index.emplace(p, i);
    return i;
  };
  std::vector<uint32_t> keys;
  std::vector<tb_kmod_dvm_action> acts;
  std::map<const Action*, uint32_t> first_action;
  for (const auto* list : actions) {
    if (list->empty()) continue;
    first_action[list->data()] = static_cast<uint32_t>(acts.size());
    for (const Action& a : *list) {
      tb_kmod_dvm_action x{};
      x.kind = a.kind;
      x.agg_kind = a.agg_kind;
      x.value = object(a.value);
      x.keys_first = static_cast<uint32_t>(keys.size());
      x.nkeys = a.nkeys;
      for (uint32_t k = 0; k < a.nkeys; k++) keys.push_back(object(a.keys[k]));
      x.agg_id = a.agg_id;
      x.offset = a.offset;
      x.size = a.size;
      x.format_id = a.format_id;
      x.arg_index = a.arg_index;
      x.lq_base = a.lq_base;
      x.lq_limit = a.lq_limit;
      x.lq_step = a.lq_step;
      acts.push_back(x);
    }
  }
  std::vector<tb_kmod_dvm_probe> probes;
  std::map<const Binding*, uint32_t> probe_index;
  for (const Binding* b : bindings) {
    tb_kmod_dvm_probe p{};
    p.kind = b->kernel.kernel_kind;
    p.arg = b->kernel.kernel_arg;
    p.id = b->probe.id;
    if (b->names.size() > sizeof p.names) return {"probe name too long for the module: " + b->names};
    std::memcpy(p.names, b->names.data(), b->names.size());
    p.names_len = static_cast<uint32_t>(b->names.size());
    p.path_ptr = b->kernel.kernel_path.empty() ? 0 : reinterpret_cast<uint64_t>(b->kernel.kernel_path.c_str());
    p.offset = b->kernel.kernel_offset;
    p.ref_ctr_offset = b->kernel.kernel_ref_ctr;
    if (b->kernel.usdt_args.size() > TB_KMOD_DVM_USDT_ARGS)
      return {"usdt probe with more than 10 arguments: " + b->names};
    p.usdt_nargs = static_cast<uint32_t>(b->kernel.usdt_args.size());
    for (size_t i = 0; i < b->kernel.usdt_args.size(); i++) {
      p.usdt_args[i].value = b->kernel.usdt_args[i].value;
      p.usdt_args[i].kind = b->kernel.usdt_args[i].kind;
      p.usdt_args[i].size = b->kernel.usdt_args[i].size;
      p.usdt_args[i].reg = b->kernel.usdt_args[i].reg;
      p.usdt_args[i].index = b->kernel.usdt_args[i].index;
      p.usdt_args[i].scale = b->kernel.usdt_args[i].scale;
    }
    probe_index[b] = static_cast<uint32_t>(probes.size());
    probes.push_back(p);
  }
  std::vector<tb_kmod_dvm_ecb> kecbs;
  for (const Ecb* e : ecbs) {
    tb_kmod_dvm_ecb x{};
    x.epid = e->epid;
    x.predicate = object(e->predicate);
    x.actions_first = e->nactions ? first_action.at(e->actions) : 0;
    x.nactions = e->nactions;
    x.record_size = e->record_size;
    kecbs.push_back(x);
  }
  // Each ECB's probe: the binding that lists it.
  for (const Binding* b : bindings)
    for (const Ecb* e : b->ecbs) kecbs[e->epid - 1].probe = probe_index.at(b);

  tb_kmod_dvm_enable req{};
  req.version = TB_KMOD_DVM_VERSION;
  req.flags = o.stage_timing ? TB_KMOD_DVM_TIMED | (o.stage_trap ? TB_KMOD_DVM_TIMED_TRAP : 0) : 0;
  if (o.syscall_kprobe) req.flags |= TB_KMOD_DVM_SYSCALL_KPROBE;
  req.bufsize = o.bufsize;
  req.aggsize = o.aggsize;
  req.dynvarsize = o.dynvarsize;
  req.strsize = o.strsize;
  req.scratchsize = o.scratchsize;
  req.objects_ptr = reinterpret_cast<uint64_t>(objs.data());
  req.n_objects = static_cast<uint32_t>(objs.size());
  req.key_objects_ptr = reinterpret_cast<uint64_t>(keys.data());
  req.n_key_objects = static_cast<uint32_t>(keys.size());
  req.actions_ptr = reinterpret_cast<uint64_t>(acts.data());
  req.n_actions = static_cast<uint32_t>(acts.size());
  req.ecbs_ptr = reinterpret_cast<uint64_t>(kecbs.data());
  req.n_ecbs = static_cast<uint32_t>(kecbs.size());
  req.probes_ptr = reinterpret_cast<uint64_t>(probes.data());
  req.n_probes = static_cast<uint32_t>(probes.size());
  if (ioctl(fd_, TB_KMOD_IOC_DVM_ENABLE, &req) != 0) {
    int err = errno;
    if (err == EINVAL && req.err[0]) {
      std::string why = std::string("the module refused the program: ") + req.err;
      if (req.err_object)
        why += " (DIF object " + std::to_string(req.err_object) + ", instruction " + std::to_string(req.err_pc) + ")";
      return {why};
    }
    if (err == EBUSY) return {"another D-VM session is enabled in the module (one at a time)"};
    return {errno_text("TB_KMOD_IOC_DVM_ENABLE", err)};
  }
  ncpus_ = req.ncpus;
  return Error::none();
}

Error KernelHome::go() {
  if (ioctl(fd_, TB_KMOD_IOC_DVM_GO) != 0) return {errno_text("TB_KMOD_IOC_DVM_GO", errno)};
  return Error::none();
}

Error KernelHome::stop(bool end) {
  tb_kmod_dvm_stop s{};
  s.flags = end ? TB_KMOD_DVM_STOP_END : 0;
  if (ioctl(fd_, TB_KMOD_IOC_DVM_STOP, &s) != 0) return {errno_text("TB_KMOD_IOC_DVM_STOP", errno)};
  return Error::none();
}

uint32_t KernelHome::snap(bool agg, uint32_t cpu, uint8_t* dst, uint32_t cap, uint64_t* ns) {
  tb_kmod_dvm_snap s{};
  s.cpu = cpu;
  s.buf_ptr = reinterpret_cast<uint64_t>(dst);
  s.buf_size = cap;
  if (ioctl(fd_, agg ? TB_KMOD_IOC_DVM_AGGSNAP : TB_KMOD_IOC_DVM_BUFSNAP, &s) != 0) return 0;
  if (ns) *ns += s.switch_ns;
  return s.len;
}

Error KernelHome::agg_reset(uint32_t agg_id, const std::string* key, bool unlink) {
  tb_kmod_dvm_aggreset r{};
  r.agg_id = agg_id;
  r.flags = unlink ? TB_KMOD_DVM_AGGRESET_TRUNC : 0;
  if (key) {
    if (key->size() > sizeof r.key) return {"aggregation key of " + std::to_string(key->size()) + " bytes"};
    r.flags |= TB_KMOD_DVM_AGGRESET_KEY;
    r.keylen = static_cast<uint32_t>(key->size());
    std::memcpy(r.key, key->data(), key->size());
  }
  if (ioctl(fd_, TB_KMOD_IOC_DVM_AGGRESET, &r) != 0) return {errno_text("TB_KMOD_IOC_DVM_AGGRESET", errno)};
  return Error::none();
}

bool KernelHome::status(Counters* c, bool* exit_requested) {
  tb_kmod_dvm_status s{};
  s.cpu = ~0u;
  if (ioctl(fd_, TB_KMOD_IOC_DVM_STATUS, &s) != 0) return false;
  c->fired = s.fired;
  c->ecb_fired = s.ecb_fired;
  c->drops = s.drops;
  c->agg_drops = s.agg_drops;
  c->busy_drops = s.busy_drops;
  c->errors = s.errors;
  for (uint32_t f = 0; f < kFaultCount; f++) c->faults[f] = s.faults[f];
  c->stages.firings = s.timed_firings;
  c->stages.entry_cycles = s.entry_cycles;
  c->stages.vm_cycles = s.vm_cycles;
  c->stages.floor_cycles = s.floor_cycles;
  c->stages.providers.clear();
  for (uint32_t k = 0; k < TB_KMOD_DVM_KINDS; k++) {
    if (!s.kind_firings[k]) continue;
    c->stages.providers.push_back({kernel_probe_kind_name(k), s.kind_firings[k], s.kind_entry_cycles[k],
                                   s.kind_vm_cycles[k], s.kind_trap_firings[k], s.kind_trap_cycles[k]});
  }
  *exit_requested = s.exit_requested != 0;
  return true;
}

}  // namespace tbdvm
