// A session (a DTrace consumer's state): enabling compiled clauses on the
// probes they match, arming and disarming them (with the profile provider's
// timer).  Its consumer (the thread, switching and snapshotting buffers) is
// consumer.cc.
#include "tracers/dvm/runtime/internal.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

namespace tbdvm {

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
  site_fire_in_signal(s, fa);
  errno = saved;
}
}  // namespace

// ---------------------------------------------------------------------------
Session::Session(Options o) : opt_(o) {}

Session::~Session() {
  disable();
  free_state();
}

namespace {
constexpr uint32_t kAggBuckets = 1024;  // per slot's aggregation arena
}  // namespace

uint32_t slot_count(const Options& o) {
  uint32_t ncpu = static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  return o.nslots ? o.nslots : std::max(1u, std::min(ncpu, kMaxSlots));
}

uint64_t slot_memory_bytes(const Options& o) {
  // Per slot: 2 principal halves + aggregation arena + its buckets + scratch.
  const uint64_t per_slot = 2ull * o.bufsize + o.aggsize + kAggBuckets * 4ull + o.scratchsize + 64;
  return per_slot * slot_count(o);
}

Error Session::alloc_state() {
  if (opt_.kernel) {
    // The module holds the slots; this side keeps room to copy one CPU's
    // buffers out.
    agg_copy_.resize(opt_.aggsize);
    buf_copy_.resize(opt_.bufsize);
    return Error::none();
  }
  uint32_t nslots = slot_count(opt_);
  state_.host = default_host();
  state_.strsize = opt_.strsize;
  std::snprintf(state_.execname, sizeof(state_.execname), "%s", program_invocation_short_name);
  uint64_t total = slot_memory_bytes(opt_);
  if (total > kMaxSlotMemory)
    return {"D-VM buffers would need " + std::to_string(total >> 20) + " MB; lower bufsize/aggsize or nslots"};
  memory_.assign(total + 64, 0);
  slots_ = std::vector<Slot>(nslots);
  uint8_t* p = memory_.data();
  p += (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
  for (uint32_t i = 0; i < nslots; i++) {
    Slot& s = slots_[i];
    s.lock = &g_slot_locks[i];
    s.buf.data[0] = p;
    p += opt_.bufsize;
    s.buf.data[1] = p;
    p += opt_.bufsize;
    s.buf.size = opt_.bufsize;
    s.agg.arena = p;
    p += opt_.aggsize;
    s.agg.size = opt_.aggsize;
    s.agg.used = 1;  // offset 0 means "end of chain"
    s.agg.buckets = reinterpret_cast<uint32_t*>(p);
    p += kAggBuckets * 4ull;
    s.agg.nbuckets = kAggBuckets;
    s.scratch = p;
    p += opt_.scratchsize;
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
    return {"DIF verifier rejected the " + std::string(what) + " of the clause at line " + std::to_string(c.line) +
            ": " + v.rule + " at instruction " + std::to_string(v.pc)};
  return Error::none();
}

// Long (~190 lines) on purpose: it checks everything (options, every DIF
// object, every probe binding) before it changes anything, then builds the
// state, so that a refused program leaves the session as it was; split, the
// steps would share that half-built state through members a refusal must
// then undo.
Error Session::enable(std::shared_ptr<CompiledProgram> prog) {
  if (enabled_) return {"D-VM session already enabled; create a new Session"};
  if (opt_.stage_trap && !opt_.stage_timing) return {"Options::stage_trap times stage 1 within stage_timing: set both"};
  if (opt_.stage_timing && !opt_.kernel)
    return {"option stagetiming times the kernel home's stages (tracebench dvm --kernel, tracer dvm_kernel)"};
  if (opt_.syscall_kprobe && !opt_.kernel)
    return {
        "option syscallprobe chooses how the kernel home attaches syscall probes (tracebench dvm --kernel, tracer "
        "dvm_kernel)"};
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
      if (a.kind == kActAggregate && agg_nvals(a.agg_kind, a.lq_base, a.lq_limit, a.lq_step) == 0)
        return {"lquantize()/llquantize() at line " + std::to_string(c.line) +
                ": parameters refused (lquantize: limit > base, step > 0; llquantize: see the compiler's rules)"};
    }
  }
  if (!opt_.kernel)
    for (auto& c : prog_->clauses)
      for (auto& pat : c.probes) ensure_profile_probe(pat);
  // User home: this process's sites.  Kernel home: the module's table and
  // the timer probes the descriptions name.
  std::vector<ProbeInfo> user_probes;
  if (!opt_.kernel) {
    user_probes = list_probes();
  } else {
    std::vector<std::string> patterns;
    for (auto& c : prog_->clauses) patterns.insert(patterns.end(), c.probes.begin(), c.probes.end());
    user_probes = kernel_timer_probes(patterns);
    const uint32_t next = static_cast<uint32_t>(list_kernel_probes().size() + user_probes.size()) + 1;
    if (Error pe = kernel_process_probes(patterns, opt_, next, &user_probes); !pe.ok()) return pe;
  }
  const std::vector<ProbeInfo>& table = opt_.kernel ? list_kernel_probes() : user_probes;
  const std::vector<ProbeInfo>* lists[2] = {&table, opt_.kernel ? &user_probes : nullptr};
  Error e = alloc_state();
  if (!e.ok()) return e;

  std::map<uint32_t, Binding*> by_probe;  // probe id
  std::map<Site*, Binding*> by_site;      // this process's sites
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
        case kActTrace:
        case kActPrintf:
        case kActExit: sz = !a.value ? 0 : a.value->returns_string ? opt_.strsize : 8; break;
        case kActTracemem:
        case kActStack: sz = a.size; break;
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
    for (const std::vector<ProbeInfo>* list : lists) {
      if (!list) continue;
      for (const auto& pi : *list) {
        bool m = false;
        for (auto& pat : c.probes) m = m || probe_matches(pat, pi);
        if (!m) continue;
        matched++;
        Binding*& b = by_probe[pi.id];
        if (!b) {
          if (pi.site && pi.site->binding.load() != nullptr)
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
          b->kernel = pi;
          if (pi.site) by_site[pi.site] = b;
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
  if (opt_.kernel) {
    // The module verifies everything again; BEGIN fires there at the first GO.
    std::vector<const Binding*> bs;
    for (auto& b : bindings_) bs.push_back(b.get());
    std::vector<const Ecb*> es;
    for (auto& x : ecbs_) es.push_back(x.get());
    std::vector<const std::vector<Action>*> as;
    for (auto& a : action_store_) as.push_back(&a);
    kernel_ = std::make_unique<KernelHome>();
    Error ke = kernel_->enable(bs, es, as, opt_);
    if (ke.ok()) ke = resume();
    if (!ke.ok()) {
      kernel_.reset();
      enabled_ = false;
      return ke;
    }
    return Error::none();
  }
  // Faults fire dtrace:::ERROR's clauses, BEGIN's included.
  for (auto& [site, b] : by_site)
    if (site == &g_error) state_.error_probe = &b->probe;
  // BEGIN fires before anything else.
  for (auto& b : bindings_) {
    if (b->probe.provider == std::string("dtrace") && std::string(b->probe.name) == "BEGIN") {
      g_begin.binding.store(b.get(), std::memory_order_release);
      site_fire_args(&g_begin, Region{});
      g_begin.binding.store(nullptr, std::memory_order_release);
    }
  }
  for (auto& [site, b] : by_site)
    if (site != &g_begin && site != &g_end && site != &g_error) site_bindings_.push_back({site, b});
  Error ae = resume();
  if (!ae.ok()) {
    disable();
    return ae;
  }
  return Error::none();
}

Error Session::resume() {
  if (!enabled_ || armed_) return Error::none();
  if (kernel_) {
    Error e = kernel_->go();
    armed_ = e.ok();
    return e;
  }
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
      sev._sigev_un._tid = static_cast<pid_t>(opt_.profile_target_tid ? opt_.profile_target_tid : syscall(SYS_gettid));
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
  if (kernel_) {
    kernel_->stop(false);  // returns once firings in flight are done
    armed_ = false;
    return;
  }
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

void Session::disable() {
  if (!enabled_) return;
  pause();
  // END fires last, after every other probe is quiet.
  if (kernel_) kernel_->stop(true);
  for (auto& b : bindings_) {
    if (kernel_) break;
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
  consumer_tid_ = 0;
  consume_once();
  if (kernel_) {
    // Everything is read: the module's session (and its memory) goes; the
    // counters stay readable.
    kernel_final_ = counters();
    kernel_ncpus_ = kernel_->ncpus();
    kernel_.reset();
  }
  enabled_ = false;
}

Counters Session::counters() const {
  Counters c;
  bool exit_requested = false;
  if (kernel_) {
    kernel_->status(&c, &exit_requested);
    return c;
  }
  if (opt_.kernel) return kernel_final_;
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

uint32_t Session::nslots() const { return kernel_ ? kernel_->ncpus() : opt_.kernel ? kernel_ncpus_ : state_.nslots; }

uint64_t Session::records_for_epid(uint32_t epid) const {
  return epid < epid_records_.size() ? epid_records_[epid] : 0;
}

std::vector<std::string> Session::matched_probes() const {
  std::vector<std::string> out;
  for (auto& b : bindings_)
    out.push_back(std::string(b->probe.provider) + ":" + b->probe.module + ":" + b->probe.function + ":" +
                  b->probe.name);
  return out;
}

}  // namespace tbdvm
