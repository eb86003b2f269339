// D-VM runtime: probe table, sessions, consumer, profile provider.
#include "tracers/dvm/runtime.h"

#include <fnmatch.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <set>

namespace tbdvm {

// ---------------------------------------------------------------------------
// Process-wide slot locks: they outlive every State so a site can take its
// lock before it reads its binding (see site_fire).
namespace {
constexpr uint32_t kMaxSlots = 256;
SpinLock g_slot_locks[kMaxSlots];
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
    t->slot_ordinal = cpu >= 0 ? static_cast<uint32_t>(cpu)
                               : g_next_thread.fetch_add(1, std::memory_order_relaxed);
    t->init = true;
  }
  return t;
}

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
}  // namespace

struct Binding {
  State* state = nullptr;
  Probe probe;
  std::string names;
  std::vector<Ecb*> ecbs;
};

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

namespace {
Site g_begin TBDVM_SITE_ATTR = {"dtrace", "", "", "BEGIN", {nullptr}};
Site g_end TBDVM_SITE_ATTR = {"dtrace", "", "", "END", {nullptr}};

std::mutex g_probe_mu;
std::deque<Site> g_dynamic_sites;          // profile-N
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
}  // namespace

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

bool probe_matches(const std::string& pattern, const ProbeInfo& p) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t c = pattern.find(':', start);
    parts.push_back(pattern.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  if (parts.size() > 4) return false;
  while (parts.size() < 4) parts.insert(parts.begin(), "");
  const std::string* fields[4] = {&p.provider, &p.module, &p.function, &p.name};
  for (int i = 0; i < 4; i++) {
    if (parts[i].empty()) continue;
    if (fnmatch(parts[i].c_str(), fields[i]->c_str(), 0) != 0) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Host.
namespace {
uint64_t g_tsc0, g_ns0, g_mult;  // ns = ns0 + ((tsc - tsc0) * mult) >> 32
std::once_flag g_calib_once;
pid_t g_pid;

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void calibrate() {
  g_pid = getpid();
  uint64_t n0 = mono_ns(), t0 = __rdtsc();
  uint64_t n1;
  do n1 = mono_ns();
  while (n1 - n0 < 20000000ull);
  uint64_t t1 = __rdtsc();
  g_tsc0 = t1;
  g_ns0 = n1;
  g_mult = static_cast<uint64_t>((static_cast<unsigned __int128>(n1 - n0) << 32) / (t1 - t0));
}

uint64_t host_timestamp() {
  uint64_t d = __rdtsc() - g_tsc0;
  return g_ns0 + static_cast<uint64_t>((static_cast<unsigned __int128>(d) * g_mult) >> 32);
}
uint64_t host_vtimestamp() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
uint64_t host_walltimestamp() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}
uint64_t host_cpu() {
  unsigned aux;
  __rdtscp(&aux);
  return aux & 0xfff;
}
bool host_copyin(void* dst, uint64_t src, uint64_t len) {
  if (len == 0) return true;
  iovec local{dst, len};
  iovec remote{reinterpret_cast<void*>(src), len};
  ssize_t n = process_vm_readv(g_pid, &local, 1, &remote, 1, 0);
  return n == static_cast<ssize_t>(len);
}
struct UnwindCtx {
  uint64_t* pcs;
  uint32_t max, n, skip;
};
_Unwind_Reason_Code unwind_cb(_Unwind_Context* ctx, void* arg) {
  auto* u = static_cast<UnwindCtx*>(arg);
  if (u->skip) {
    u->skip--;
    return _URC_NO_REASON;
  }
  if (u->n >= u->max) return _URC_END_OF_STACK;
  u->pcs[u->n++] = _Unwind_GetIP(ctx);
  return _URC_NO_REASON;
}
uint32_t host_stack(uint64_t* pcs, uint32_t max) {
  // Skip the D-VM's own frames (host_stack, run_action, dvm_fire_locked, site).
  UnwindCtx u{pcs, max, 0, 5};
  _Unwind_Backtrace(unwind_cb, &u);
  return u.n;
}
}  // namespace

uint64_t rdtsc_cycles() { return __rdtsc(); }

Host default_host() {
  std::call_once(g_calib_once, calibrate);
  Host h;
  h.timestamp = host_timestamp;
  h.vtimestamp = host_vtimestamp;
  h.walltimestamp = host_walltimestamp;
  h.cpu = host_cpu;
  h.copyin = host_copyin;
  h.stack = host_stack;
  h.pid = static_cast<uint64_t>(g_pid);
  return h;
}

// ---------------------------------------------------------------------------
// Options.
Error set_option(Options* o, const std::string& key, const std::string& value) {
  auto size = [&](uint32_t* out) -> Error {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(value.c_str(), &end, 10);
    if (errno || end == value.c_str()) return {"option " + key + "=" + value + ": expected a size like 64k or 4m"};
    std::string suf(end);
    if (suf == "k" || suf == "K") v <<= 10;
    else if (suf == "m" || suf == "M") v <<= 20;
    else if (!suf.empty()) return {"option " + key + "=" + value + ": unknown size suffix '" + suf + "' (use k or m)"};
    if (v == 0 || v > (1ull << 30)) return {"option " + key + "=" + value + ": must be between 1 and 1g"};
    *out = static_cast<uint32_t>(v);
    return Error::none();
  };
  if (key == "bufsize") return size(&o->bufsize);
  if (key == "aggsize") return size(&o->aggsize);
  if (key == "dynvarsize") return size(&o->dynvarsize);
  if (key == "scratchsize") return size(&o->scratchsize);
  if (key == "strsize") {
    Error e = size(&o->strsize);
    if (e.ok() && (o->strsize < 16 || o->strsize > 4096)) return {"option strsize must be in 16..4096"};
    return e;
  }
  if (key == "nslots" || key == "cpus") {
    Error e = size(&o->nslots);
    if (e.ok() && o->nslots > kMaxSlots) return {"option nslots must be <= 256"};
    return e;
  }
  if (key == "switchrate" || key == "aggrate") {
    std::string v = value;
    if (v.size() > 2 && v.substr(v.size() - 2) == "hz") v.resize(v.size() - 2);
    char* end = nullptr;
    double hz = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end || hz <= 0 || hz > 10000)
      return {"option switchrate=" + value + ": expected a rate like 1hz or 100hz"};
    o->switchrate_hz = hz;
    return Error::none();
  }
  if (key == "zdefs" || key == "Z") {
    o->allow_zero_probes = true;
    return Error::none();
  }
  return {"unknown D-VM option '" + key +
          "' (known: bufsize, aggsize, dynvarsize, scratchsize, strsize, nslots, switchrate)"};
}

// ---------------------------------------------------------------------------
// DIF objects.
const Program* DifObject::finalize() {
  prog.insns = insns.data();
  prog.ninsns = static_cast<uint32_t>(insns.size());
  prog.inttab = ints.empty() ? nullptr : ints.data();
  prog.nints = static_cast<uint32_t>(ints.size());
  prog.strtab = strtab.empty() ? nullptr : strtab.data();
  prog.strtab_len = static_cast<uint32_t>(strtab.size());
  prog.returns_string = returns_string;
  return &prog;
}

// ---------------------------------------------------------------------------
// Profile provider: a POSIX timer signals the target thread at N Hz and the
// handler fires profile:::profile-N with arg0 = interrupted pc.
namespace {
struct ProfileTimer {
  timer_t timer;
  Site* site;
  struct sigaction old;
};
std::atomic<Site*> g_profile_site{nullptr};

void profile_handler(int, siginfo_t*, void* uc) {
  Site* s = g_profile_site.load(std::memory_order_acquire);
  if (!s) return;
  int saved = errno;
  FireArgs fa;
  fa.args[0] = static_cast<uint64_t>(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP]);
  fa.args[1] = 0;
  fire_binding_site(s, fa, true);
  errno = saved;
}
}  // namespace

// ---------------------------------------------------------------------------
struct Session::EcbInfo {
  const ClauseDesc* clause = nullptr;
  const Ecb* ecb = nullptr;
  const Binding* binding = nullptr;
};

Session::Session(Options o) : opt_(o) {}

Session::~Session() {
  disable();
  free_state();
}

Error Session::alloc_state() {
  uint32_t ncpu = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  uint32_t nslots = opt_.nslots ? opt_.nslots : std::max(1u, std::min(ncpu, kMaxSlots));
  state_.host = default_host();
  state_.strsize = opt_.strsize;
  std::snprintf(state_.execname, sizeof(state_.execname), "%s", program_invocation_short_name);
  // Slot memory: 2 principal halves + aggregation arena + buckets + scratch.
  uint32_t agg_buckets = 1024;
  uint64_t per_slot = 2ull * opt_.bufsize + opt_.aggsize + agg_buckets * 4ull + opt_.scratchsize + 64;
  uint64_t total = per_slot * nslots;
  if (total > (4ull << 30)) return {"D-VM buffers would need " + std::to_string(total >> 20) +
                                    " MB; lower bufsize/aggsize or nslots"};
  memory_.assign(total + 64, 0);
  slots_ = std::vector<Slot>(nslots);
  uint8_t* p = memory_.data();
  p += (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
  for (uint32_t i = 0; i < nslots; i++) {
    Slot& s = slots_[i];
    s.lock = &g_slot_locks[i];
    s.buf.data[0] = p; p += opt_.bufsize;
    s.buf.data[1] = p; p += opt_.bufsize;
    s.buf.size = opt_.bufsize;
    s.agg.arena = p; p += opt_.aggsize;
    s.agg.size = opt_.aggsize;
    s.agg.used = 1;  // offset 0 means "end of chain"
    s.agg.buckets = reinterpret_cast<uint32_t*>(p); p += agg_buckets * 4ull;
    s.agg.nbuckets = agg_buckets;
    s.scratch = p; p += opt_.scratchsize;
    s.scratch_size = opt_.scratchsize;
    p += (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
    s.ms.rand_state = 0x9e3779b97f4a7c15ull * (i + 1);
  }
  // The agg arena starts at 1 so entry offsets are never 0; keep 8-alignment.
  for (auto& s : slots_) s.agg.used = 8;
  state_.slots = slots_.data();
  state_.nslots = nslots;
  uint32_t cb = dynvar_chunk_bytes(opt_.strsize);
  uint32_t nchunks = std::max(1u, opt_.dynvarsize / cb);
  uint32_t nb = 1;
  while (nb < nchunks) nb <<= 1;
  dyn_chunks_.assign(static_cast<size_t>(nchunks) * cb, 0);
  dyn_buckets_.assign(nb, 0);
  dynvar_init(&state_.dyn, dyn_chunks_.data(), cb, nchunks, dyn_buckets_.data(), nb);
  gvals_.assign(kMaxGlobals, 0);
  gstr_.assign(static_cast<size_t>(kMaxGlobals) * opt_.strsize, 0);
  state_.gvals = gvals_.data();
  state_.gstr = gstr_.data();
  agg_copy_.resize(opt_.aggsize);
  return Error::none();
}

void Session::free_state() {
  slots_.clear();
  memory_.clear();
  state_.slots = nullptr;
  state_.nslots = 0;
}

static Error verify_difo(const DifObject* d, const ClauseDesc& c, const char* what) {
  if (!d) return Error::none();
  auto work = std::make_unique<VerifyWork>();
  VerifyError v = dif_verify(&d->prog, work.get());
  if (v.rule)
    return {"DIF verifier rejected the " + std::string(what) + " of the clause at line " +
            std::to_string(c.line) + ": " + v.rule + " at instruction " + std::to_string(v.pc)};
  return Error::none();
}

Error Session::enable(std::shared_ptr<CompiledProgram> prog) {
  if (enabled_) return {"D-VM session already enabled; create a new Session"};
  prog_ = std::move(prog);
  // Verify everything first: bad input changes nothing.
  for (auto& c : prog_->clauses) {
    if (c.predicate) c.predicate->finalize();
    Error e = verify_difo(c.predicate.get(), c, "predicate");
    if (!e.ok()) return e;
    for (auto& a : c.actions) {
      if (a.value) a.value->finalize();
      if (!(e = verify_difo(a.value.get(), c, "action")).ok()) return e;
      if (a.keys.size() > kMaxTuple) return {"aggregation with more than 8 keys at line " + std::to_string(c.line)};
      for (auto& k : a.keys) {
        k->finalize();
        if (!(e = verify_difo(k.get(), c, "aggregation key")).ok()) return e;
      }
      if (a.kind == kActAggregate &&
          agg_nvals(a.agg_kind, a.lq_base, a.lq_limit, a.lq_step) == 0)
        return {"lquantize() at line " + std::to_string(c.line) + ": need limit > base and step > 0"};
    }
  }
  for (auto& c : prog_->clauses)
    for (auto& pat : c.probes) ensure_profile_probe(pat);
  std::vector<ProbeInfo> probes = list_probes();
  Error e = alloc_state();
  if (!e.ok()) return e;

  std::map<Site*, Binding*> by_site;
  uint32_t epid = 1;
  for (auto& c : prog_->clauses) {
    // Actions are shared by every probe the clause matched.
    std::vector<Action> acts;
    std::vector<const Program*> keys;
    for (auto& a : c.actions) keys.reserve(keys.size() + a.keys.size());
    uint32_t off = sizeof(RecordHeader);
    key_store_.emplace_back();
    auto& kstore = key_store_.back();
    for (auto& a : c.actions)
      for (auto& k : a.keys) kstore.push_back(&k->prog);
    size_t kpos = 0;
    for (auto& a : c.actions) {
      Action x;
      x.kind = a.kind;
      x.agg_kind = a.agg_kind;
      x.value = a.value ? &a.value->prog : nullptr;
      x.keys = a.keys.empty() ? nullptr : &kstore[kpos];
      x.nkeys = static_cast<uint32_t>(a.keys.size());
      kpos += a.keys.size();
      x.agg_id = a.agg_id;
      x.lq_base = a.lq_base;
      x.lq_limit = a.lq_limit;
      x.lq_step = a.lq_step;
      x.format_id = a.format_id;
      x.arg_index = a.arg_index;
      uint32_t sz = 0;
      switch (a.kind) {
        case kActTrace: case kActPrintf: case kActExit:
          sz = !a.value ? 0 : a.value->returns_string ? opt_.strsize : 8;
          break;
        case kActTracemem: case kActStack: sz = a.size; break;
        default: break;
      }
      x.offset = off;
      x.size = sz;
      off += (sz + 7) & ~7u;
      acts.push_back(x);
    }
    bool records = false;
    for (auto& x : acts)
      if (x.kind != kActDifExpr && x.kind != kActAggregate) records = true;
    if (records && off > opt_.bufsize)
      return {"clause at line " + std::to_string(c.line) + " records " + std::to_string(off) +
              " bytes per firing, more than bufsize; raise bufsize"};
    action_store_.push_back(std::move(acts));
    const std::vector<Action>& stored = action_store_.back();
    size_t matched = 0;
    for (const auto& pi : probes) {
      bool m = false;
      for (auto& pat : c.probes) m = m || probe_matches(pat, pi);
      if (!m) continue;
      matched++;
      Binding*& b = by_site[pi.site];
      if (!b) {
        if (pi.site->binding.load() != nullptr)
          return {"probe " + pi.provider + ":" + pi.module + ":" + pi.function + ":" + pi.name +
                  " is already enabled by another D-VM session"};
        bindings_.push_back(std::make_unique<Binding>());
        b = bindings_.back().get();
        b->state = &state_;
        b->names = pi.provider + '\0' + pi.module + '\0' + pi.function + '\0' + pi.name + '\0';
        b->probe.id = pi.id;
        b->probe.names = b->names.data();
        b->probe.names_len = static_cast<uint32_t>(b->names.size());
        b->probe.provider = b->names.data();
        b->probe.module = b->probe.provider + pi.provider.size() + 1;
        b->probe.function = b->probe.module + pi.module.size() + 1;
        b->probe.name = b->probe.function + pi.function.size() + 1;
      }
      auto ecb = std::make_unique<Ecb>();
      ecb->epid = epid++;
      ecb->predicate = c.predicate ? &c.predicate->prog : nullptr;
      ecb->actions = stored.data();
      ecb->nactions = static_cast<uint32_t>(stored.size());
      ecb->record_size = records ? ((off + 7) & ~7u) : 0;
      b->ecbs.push_back(ecb.get());
      epids_.push_back(EcbInfo{&c, ecb.get(), b});
      ecbs_.push_back(std::move(ecb));
    }
    if (matched == 0 && !opt_.allow_zero_probes) {
      std::string pats;
      for (auto& p : c.probes) pats += (pats.empty() ? "" : ", ") + p;
      ecbs_.clear();
      bindings_.clear();
      epids_.clear();
      return {"probe description " + pats + " (line " + std::to_string(c.line) +
              ") does not match any probes; `tracebench dvm -l` lists them"};
    }
  }
  epid_records_.assign(epids_.size() + 1, 0);
  for (auto& b : bindings_) {
    b->probe.ecbs = b->ecbs.data();
    b->probe.necbs = static_cast<uint32_t>(b->ecbs.size());
  }
  enabled_ = true;
  // BEGIN fires before anything else.
  for (auto& b : bindings_) {
    if (b->probe.provider == std::string("dtrace") && std::string(b->probe.name) == "BEGIN") {
      g_begin.binding.store(b.get(), std::memory_order_release);
      site_fire_args(&g_begin, Region{});
      g_begin.binding.store(nullptr, std::memory_order_release);
    }
  }
  for (auto& [site, b] : by_site)
    if (site != &g_begin && site != &g_end) site_bindings_.push_back({site, b});
  Error ae = resume();
  if (!ae.ok()) {
    disable();
    return ae;
  }
  return Error::none();
}

Error Session::resume() {
  if (!enabled_ || armed_) return Error::none();
  for (auto& [site, b] : site_bindings_) {
    site->binding.store(b, std::memory_order_release);
    if (std::strcmp(site->provider, "profile") == 0 && !profile_timer_) {
      unsigned long hz = std::strtoul(site->name + 8, nullptr, 10);
      auto* pt = new ProfileTimer{};
      pt->site = site;
      struct sigaction sa {};
      sa.sa_sigaction = profile_handler;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGPROF, &sa, &pt->old);
      g_profile_site.store(site, std::memory_order_release);
      sigevent sev{};
      sev.sigev_notify = SIGEV_THREAD_ID;
      sev.sigev_signo = SIGPROF;
      sev._sigev_un._tid = static_cast<pid_t>(opt_.profile_target_tid ? opt_.profile_target_tid
                                                                      : syscall(SYS_gettid));
      if (timer_create(CLOCK_MONOTONIC, &sev, &pt->timer) == 0) {
        itimerspec its{};
        long ns = hz ? static_cast<long>(1000000000ul / hz) : 1000000000l;
        its.it_interval.tv_sec = ns / 1000000000l;
        its.it_interval.tv_nsec = ns % 1000000000l;
        its.it_value = its.it_interval;
        timer_settime(pt->timer, 0, &its, nullptr);
        profile_timer_ = pt;
      } else {
        int err = errno;
        sigaction(SIGPROF, &pt->old, nullptr);
        g_profile_site.store(nullptr);
        delete pt;
        armed_ = true;
        pause();
        return {std::string("profile provider: timer_create failed: ") + std::strerror(err)};
      }
    }
  }
  armed_ = true;
  return Error::none();
}

void Session::pause() {
  if (!armed_) return;
  if (profile_timer_) {
    auto* pt = static_cast<ProfileTimer*>(profile_timer_);
    timer_delete(pt->timer);
    g_profile_site.store(nullptr, std::memory_order_release);
    sigaction(SIGPROF, &pt->old, nullptr);
    delete pt;
    profile_timer_ = nullptr;
  }
  // Disarm, then wait out firings in flight: each takes its slot lock
  // before it re-reads the binding.
  for (auto& [site, b] : site_bindings_) {
    Binding* expected = b;
    site->binding.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel);
  }
  for (uint32_t i = 0; i < state_.nslots; i++) {
    lock_slot(&g_slot_locks[i]);
    g_slot_locks[i].unlock();
  }
  armed_ = false;
}


void Session::start_consumer(std::FILE* out) {
  out_ = out;
  if (consumer_.joinable() || !enabled_) return;
  stop_ = false;
  consumer_ = std::thread([this] { consumer_loop(); });
}

void Session::consumer_loop() {
  // The consumer never takes the profile signal.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPROF);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  auto period = std::chrono::duration<double>(1.0 / opt_.switchrate_hz);
  std::unique_lock<std::mutex> lk(stop_mu_);
  while (!stop_) {
    stop_cv_.wait_for(lk, std::chrono::duration_cast<std::chrono::microseconds>(period));
    if (stop_) break;
    lk.unlock();
    consume_once();
    lk.lock();
  }
}

void Session::disable() {
  if (!enabled_) return;
  pause();
  // END fires last, after every other probe is quiet.
  for (auto& b : bindings_) {
    if (std::string(b->probe.provider) == "dtrace" && std::string(b->probe.name) == "END") {
      g_end.binding.store(b.get(), std::memory_order_release);
      site_fire_args(&g_end, Region{});
      g_end.binding.store(nullptr, std::memory_order_release);
    }
  }
  {
    std::lock_guard<std::mutex> g(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (consumer_.joinable()) consumer_.join();
  consume_once();
  enabled_ = false;
}

Counters Session::counters() const {
  Counters c;
  for (uint32_t i = 0; i < state_.nslots; i++) {
    const Slot& s = state_.slots[i];
    c.fired += s.fired.load(std::memory_order_relaxed);
    c.ecb_fired += s.ecb_fired.load(std::memory_order_relaxed);
    c.drops += s.drops.load(std::memory_order_relaxed);
    c.agg_drops += s.agg_drops.load(std::memory_order_relaxed);
    c.busy_drops += s.busy_drops.load(std::memory_order_relaxed);
    c.errors += s.errors.load(std::memory_order_relaxed);
    for (uint32_t f = 0; f < kFaultCount; f++) c.faults[f] += s.faults[f].load(std::memory_order_relaxed);
  }
  return c;
}

uint64_t Session::records_for_epid(uint32_t epid) const {
  return epid < epid_records_.size() ? epid_records_[epid] : 0;
}

std::vector<std::string> Session::matched_probes() const {
  std::vector<std::string> out;
  for (auto& b : bindings_)
    out.push_back(std::string(b->probe.provider) + ":" + b->probe.module + ":" + b->probe.function +
                  ":" + b->probe.name);
  return out;
}

void Session::consume_once() {
  std::lock_guard<std::mutex> g(consume_mu_);
  if (!state_.slots) return;
  cstats_.passes++;
  uint64_t t0 = __rdtsc();
  Counters c = counters();  // status snapshot
  (void)c;
  uint64_t t1 = __rdtsc();
  cstats_.status_cycles += t1 - t0;
  for (uint32_t i = 0; i < state_.nslots; i++) {
    const uint8_t* data;
    uint32_t len;
    uint64_t a = __rdtsc();
    dvm_buffer_switch(&state_, i, &data, &len);
    uint64_t b = __rdtsc();
    cstats_.buf_switch_cycles += b - a;
    cstats_.bytes_copied += len;
    chew(data, len);
    cstats_.chew_cycles += __rdtsc() - b;
  }
  snapshot_aggs();
}

void Session::snapshot_aggs() {
  agg_merged_.clear();
  for (uint32_t i = 0; i < state_.nslots; i++) {
    Slot& s = state_.slots[i];
    uint64_t a = __rdtsc();
    lock_slot(s.lock);
    uint32_t used = s.agg.used;
    std::memcpy(agg_copy_.data(), s.agg.arena, used);
    s.lock->unlock();
    uint64_t b = __rdtsc();
    cstats_.agg_snapshot_cycles += b - a;
    cstats_.bytes_copied += used;
    cstats_.agg_bytes_copied += used;
    // Rebuild: merge this slot's entries into the consumer's view.
    for (uint32_t off = 8; off < used;) {
      auto* e = reinterpret_cast<const AggEntry*>(agg_copy_.data() + off);
      std::string key(reinterpret_cast<const char*>(e + 1), e->keylen);
      const int64_t* v = agg_values(e);
      auto it = agg_merged_.find({e->agg_id, key});
      if (it == agg_merged_.end()) {
        agg_merged_.emplace(std::make_pair(e->agg_id, key), std::vector<int64_t>(v, v + e->nvals));
      } else {
        AggKind kind = e->agg_id < prog_->aggs.size() ? prog_->aggs[e->agg_id].kind : kAggSum;
        auto& dst = it->second;
        for (uint32_t k = 0; k < e->nvals && k < dst.size(); k++) {
          if (kind == kAggMin) dst[k] = std::min(dst[k], v[k]);
          else if (kind == kAggMax) dst[k] = std::max(dst[k], v[k]);
          else dst[k] = static_cast<int64_t>(static_cast<uint64_t>(dst[k]) + static_cast<uint64_t>(v[k]));
        }
      }
      off += static_cast<uint32_t>(sizeof(AggEntry) + e->keylen + e->nvals * 8ull);
    }
    cstats_.agg_rebuild_cycles += __rdtsc() - b;
  }
}

// ---------------------------------------------------------------------------
// Record formatting.
namespace {
std::string format_printf(const std::string& fmt, const std::vector<const uint8_t*>& args,
                          const std::vector<ValueType>& types) {
  std::string out;
  size_t ai = 0;
  for (size_t i = 0; i < fmt.size(); i++) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      out += '%';
      i++;
      continue;
    }
    size_t j = i + 1;
    std::string spec = "%";
    while (j < fmt.size() && std::strchr("-+ #0", fmt[j])) spec += fmt[j++];
    while (j < fmt.size() && (std::isdigit(static_cast<unsigned char>(fmt[j])) || fmt[j] == '.')) spec += fmt[j++];
    while (j < fmt.size() && std::strchr("hlLqjzt", fmt[j])) j++;
    if (j >= fmt.size()) break;
    char conv = fmt[j];
    i = j;
    char buf[512];
    if (ai >= args.size()) break;
    const uint8_t* a = args[ai];
    ValueType t = types[ai++];
    if (conv == 's') {
      if (t == ValueType::kString) {
        std::snprintf(buf, sizeof buf, (spec + "s").c_str(), reinterpret_cast<const char*>(a));
      } else {
        int64_t v;
        std::memcpy(&v, a, 8);
        std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), static_cast<long long>(v));
      }
    } else {
      int64_t v = 0;
      if (t == ValueType::kInt) std::memcpy(&v, a, 8);
      if (conv == 'c') std::snprintf(buf, sizeof buf, (spec + "c").c_str(), static_cast<int>(v));
      else if (conv == 'p') std::snprintf(buf, sizeof buf, (spec + "llx").c_str(), static_cast<unsigned long long>(v)), out += "0x";
      else if (conv == 'x' || conv == 'X' || conv == 'o' || conv == 'u')
        std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(), static_cast<unsigned long long>(v));
      else std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), static_cast<long long>(v));
    }
    out += buf;
  }
  return out;
}
}  // namespace

void Session::chew(const uint8_t* data, uint32_t len) {
  uint32_t off = 0;
  while (off + sizeof(RecordHeader) <= len) {
    RecordHeader h;
    std::memcpy(&h, data + off, sizeof h);
    if (h.epid == 0 || h.epid > epids_.size() || h.size == 0) break;
    const EcbInfo& info = epids_[h.epid - 1];
    const uint8_t* rec = data + off;
    cstats_.records++;
    epid_records_[h.epid]++;
    const Ecb* e = info.ecb;
    if (record_hook_) record_hook_(*e, rec);
    if (!out_) {
      // Nobody reads the output: only exit() needs looking at.
      for (uint32_t k = 0; k < e->nactions; k++) {
        if (e->actions[k].kind == kActExit) {
          int64_t v;
          std::memcpy(&v, rec + e->actions[k].offset, 8);
          exited_ = true;
          exit_status_ = static_cast<int>(v);
        }
      }
      off += h.size;
      continue;
    }
    std::string line;
    for (uint32_t k = 0; k < e->nactions; k++) {
      const Action& a = e->actions[k];
      const ActionDesc& d = info.clause->actions[k];
      switch (a.kind) {
        case kActPrintf: {
          // Consecutive printf actions with one format id form one call.
          std::vector<const uint8_t*> args;
          const PrintfDesc& f = prog_->formats[a.format_id];
          uint32_t k2 = k;
          while (k2 < e->nactions && e->actions[k2].kind == kActPrintf &&
                 e->actions[k2].format_id == a.format_id &&
                 (k2 == k || e->actions[k2].arg_index > 0)) {
            if (e->actions[k2].value) args.push_back(rec + e->actions[k2].offset);
            k2++;
          }
          line += format_printf(f.format, args, f.arg_types);
          k = k2 - 1;
          break;
        }
        case kActTrace: {
          char buf[64];
          if (d.value && d.value->returns_string) {
            line += std::string(" ") + reinterpret_cast<const char*>(rec + a.offset);
          } else {
            int64_t v;
            std::memcpy(&v, rec + a.offset, 8);
            std::snprintf(buf, sizeof buf, " %lld", static_cast<long long>(v));
            line += buf;
          }
          break;
        }
        case kActTracemem: {
          char buf[8];
          line += "\n            ";
          for (uint32_t i = 0; i < a.size; i++) {
            std::snprintf(buf, sizeof buf, "%02x ", rec[a.offset + i]);
            line += buf;
            if (i % 16 == 15 && i + 1 < a.size) line += "\n            ";
          }
          break;
        }
        case kActStack: {
          char buf[64];
          for (uint32_t i = 0; i < a.size / 8; i++) {
            uint64_t pc;
            std::memcpy(&pc, rec + a.offset + i * 8, 8);
            if (!pc) break;
            std::snprintf(buf, sizeof buf, "\n              0x%llx", static_cast<unsigned long long>(pc));
            line += buf;
          }
          line += "\n";
          break;
        }
        case kActExit: {
          int64_t v;
          std::memcpy(&v, rec + a.offset, 8);
          exited_ = true;
          exit_status_ = static_cast<int>(v);
          break;
        }
        default: break;
      }
    }
    if (out_ && !line.empty()) {
      bool has_printf = false;
      for (uint32_t k = 0; k < e->nactions; k++) has_printf |= e->actions[k].kind == kActPrintf;
      if (!has_printf) {
        std::fprintf(out_, "%3u %6u %32s:%-12s%s\n", 0u, info.binding->probe.id,
                     info.binding->probe.function, info.binding->probe.name, line.c_str());
      } else {
        std::fputs(line.c_str(), out_);
      }
    }
    off += h.size;
  }
}

std::vector<AggResult> Session::aggregations() {
  std::vector<AggResult> out(prog_ ? prog_->aggs.size() : 0);
  for (size_t i = 0; i < out.size(); i++) out[i].desc = &prog_->aggs[i];
  std::lock_guard<std::mutex> g(consume_mu_);
  for (auto& [k, vals] : agg_merged_) {
    if (k.first >= out.size()) continue;
    AggRow row;
    const std::string& key = k.second;
    for (size_t off = 0; off + 8 <= key.size();) {
      uint32_t hdr;
      std::memcpy(&hdr, key.data() + off, 4);
      uint32_t n = hdr & 0x7fffffffu;
      if (hdr & 0x80000000u) {
        row.key_strings.emplace_back(key.data() + off + 8, n ? n - 1 : 0);
        row.key_ints.push_back(0);
      } else {
        int64_t v = 0;
        std::memcpy(&v, key.data() + off + 8, 8);
        row.key_ints.push_back(v);
        row.key_strings.push_back(std::to_string(v));
      }
      off += 8 + ((n + 7) & ~7u);
    }
    row.values = vals;
    out[k.first].rows.push_back(std::move(row));
  }
  for (auto& r : out) {
    AggKind kind = r.desc->kind;
    auto scalar = [kind](const AggRow& x) -> double {
      if (kind == kAggAvg) return x.values[0] ? static_cast<double>(x.values[1]) / x.values[0] : 0;
      if (kind == kAggQuantize || kind == kAggLquantize) {
        double s = 0;
        for (auto v : x.values) s += v;
        return s;
      }
      return static_cast<double>(x.values[0]);
    };
    std::stable_sort(r.rows.begin(), r.rows.end(), [&](const AggRow& a, const AggRow& b) {
      double x = scalar(a), y = scalar(b);
      if (x != y) return x < y;
      return a.key_strings < b.key_strings;
    });
  }
  return out;
}

void Session::print_aggregations(std::FILE* out) {
  auto aggs = aggregations();
  for (auto& r : aggs) {
    if (r.rows.empty()) continue;
    std::fputc('\n', out);
    if (!r.desc->name.empty() && aggs.size() > 1) std::fprintf(out, "  @%s\n", r.desc->name.c_str());
    for (auto& row : r.rows) {
      std::string keys;
      char buf[128];
      for (size_t i = 0; i < row.key_strings.size(); i++) {
        if (r.desc->key_types.size() > i && r.desc->key_types[i] == ValueType::kString)
          std::snprintf(buf, sizeof buf, "  %-40s", row.key_strings[i].c_str());
        else
          std::snprintf(buf, sizeof buf, "  %16lld", static_cast<long long>(row.key_ints[i]));
        keys += buf;
      }
      AggKind kind = r.desc->kind;
      if (kind == kAggQuantize || kind == kAggLquantize) {
        if (!keys.empty()) std::fprintf(out, "%s\n", keys.c_str());
        std::fprintf(out, "           value  ------------- Distribution ------------- count\n");
        int64_t total = 0;
        for (auto v : row.values) total += v;
        size_t first = 0, last = row.values.size() - 1;
        while (first < row.values.size() && row.values[first] == 0) first++;
        while (last > 0 && row.values[last] == 0) last--;
        if (first > 0) first--;
        if (last + 1 < row.values.size()) last++;
        for (size_t b = first; b <= last && b < row.values.size(); b++) {
          int bars = total ? static_cast<int>(row.values[b] * 40 / total) : 0;
          std::string label;
          if (kind == kAggQuantize) {
            label = std::to_string(quantize_bucket_min(static_cast<uint32_t>(b)));
          } else if (b == 0) {
            label = "< " + std::to_string(r.desc->lq_base);
          } else if (b == row.values.size() - 1) {
            label = ">= " + std::to_string(r.desc->lq_limit);
          } else {
            label = std::to_string(r.desc->lq_base + static_cast<int64_t>(b - 1) * r.desc->lq_step);
          }
          std::fprintf(out, "%16s |%-40s %lld\n", label.c_str(), std::string(bars, '@').c_str(),
                       static_cast<long long>(row.values[b]));
        }
        std::fputc('\n', out);
      } else {
        long long v = kind == kAggAvg ? (row.values[0] ? row.values[1] / row.values[0] : 0)
                                      : static_cast<long long>(row.values[0]);
        std::fprintf(out, "%s  %16lld\n", keys.c_str(), v);
      }
    }
  }
}

}  // namespace tbdvm
