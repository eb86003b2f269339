// The D-VM interpreter, dynamic variables, aggregations and the probe path.
// Freestanding: no allocation, no exceptions, no libc calls.
// One file, longer than the suite's ~600-line guide, on purpose: every call a
// firing makes (dvm_fire -> dif_exec -> the subroutines, dynamic-variable and
// aggregation lookups, the buffer's record writes) stays in one translation
// unit, where the compiler can inline it; neither Kbuild nor the suite's
// CMake builds with LTO, so a split by topic would turn them into calls on
// every firing.  Its parts, in order: byte helpers, dynamic variables,
// strings and subroutines, the interpreter, aggregations, the probe path.
#include "vm.h"

namespace tbdvm {

namespace {

inline void copy_bytes(void* dst, const void* src, uint64_t n) {
  auto* d = static_cast<uint8_t*>(dst);
  auto* s = static_cast<const uint8_t*>(src);
  for (uint64_t i = 0; i < n; i++) d[i] = s[i];
}
inline void zero_bytes(void* dst, uint64_t n) {
  auto* d = static_cast<uint8_t*>(dst);
  for (uint64_t i = 0; i < n; i++) d[i] = 0;
}
inline bool equal_bytes(const void* a, const void* b, uint64_t n) {
  auto* x = static_cast<const uint8_t*>(a);
  auto* y = static_cast<const uint8_t*>(b);
  for (uint64_t i = 0; i < n; i++)
    if (x[i] != y[i]) return false;
  return true;
}
// Relaxed increment by the lock holder (no lock prefix on the probe path).
inline void bump(std::atomic<uint64_t>& c, uint64_t by = 1) {
  c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

inline bool in_range(uint64_t addr, uint64_t len, uint64_t base, uint64_t blen) {
  return addr >= base && len <= blen && addr - base <= blen - len;
}

inline uint32_t hash_words(uint32_t seed, const uint8_t* p, uint32_t len) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ seed;
  for (uint32_t i = 0; i + 8 <= len; i += 8) {
    uint64_t w;
    copy_bytes(&w, p + i, 8);
    h ^= w;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  return static_cast<uint32_t>(h ^ (h >> 29)) | 1u;  // never 0
}

inline void set_fault(MState* ms, uint32_t f, uint64_t addr = 0) {
  if (ms->fault == kFaultNone) {
    ms->fault = f;
    ms->fault_pc = kFaultNoPc;  // dif_exec puts its pc here on the way out
    ms->fault_addr = addr;
  }
}

inline uint8_t* scratch_alloc(MState* ms, uint64_t n) {
  Slot* s = ms->slot;
  uint64_t top = (s->scratch_top + 7u) & ~7ull;
  if (n > s->scratch_size || top > s->scratch_size - n) {
    set_fault(ms, kFaultNoScratch, n);
    return nullptr;
  }
  s->scratch_top = static_cast<uint32_t>(top + n);
  return s->scratch + top;
}

}  // namespace

// ---------------------------------------------------------------------------
const char* op_name(uint8_t op) {
  static const char* const kNames[kOpCount] = {
      "nop",  "or",   "xor",  "and",  "not",  "sll",  "srl",    "sra",    "add",     "sub",  "mul",  "sdiv",
      "udiv", "srem", "urem", "setx", "sets", "mov",  "cmp",    "tst",    "scmp",    "ba",   "be",   "bne",
      "bg",   "bgu",  "bge",  "bgeu", "bl",   "blu",  "ble",    "bleu",   "ret",     "ldsb", "ldsh", "ldsw",
      "ldx",  "ldub", "lduh", "lduw", "stb",  "sth",  "stw",    "stx",    "ldgs",    "stgs", "ldts", "stts",
      "ldls", "stls", "ldga", "stga", "ldta", "stta", "pushtv", "pushtr", "flushts", "call"};
  return op < kOpCount ? kNames[op] : "???";
}

const char* builtin_name(uint32_t id) {
  static const char* const kArgs[kMaxArgs] = {"arg0", "arg1", "arg2", "arg3", "arg4",
                                              "arg5", "arg6", "arg7", "arg8", "arg9"};
  static const char* const kNames[] = {"timestamp", "vtimestamp", "walltimestamp", "pid",      "tid",       "cpu",
                                       "id",        "epid",       "probeprov",     "probemod", "probefunc", "probename",
                                       "execname",  "curthread",  "ppid",          "uid",      "errno"};
  static_assert(sizeof kNames / sizeof kNames[0] == kVarBuiltinEnd - kVarTimestamp, "a name per built-in");
  if (id < kMaxArgs) return kArgs[id];
  if (id >= kVarTimestamp && id < kVarBuiltinEnd) return kNames[id - kVarTimestamp];
  return nullptr;
}

const char* subr_name(uint32_t id) {
  static const char* const kNames[kSubrCount] = {"strlen", "strjoin", "alloca", "bcopy", "copyin", "copyinstr", "rand"};
  return id < kSubrCount ? kNames[id] : nullptr;
}

const char* fault_name(uint32_t f) {
  static const char* const kNames[kFaultCount] = {"none",
                                                  "division by zero",
                                                  "invalid address",
                                                  "misaligned address",
                                                  "out of scratch space",
                                                  "out of dynamic variable space",
                                                  "tuple stack overflow",
                                                  "key too large",
                                                  "copyin failed",
                                                  "illegal operation"};
  return f < kFaultCount ? kNames[f] : "unknown fault";
}

// ---------------------------------------------------------------------------
bool dvm_can_load(const MState* ms, uint64_t a, uint64_t len) {
  const Slot* s = ms->slot;
  const State* st = ms->state;
  if (in_range(a, len, reinterpret_cast<uint64_t>(s->scratch), s->scratch_top)) return true;
  if (ms->fa && ms->fa->region.len && in_range(a, len, ms->fa->region.base, ms->fa->region.len)) return true;
  if (ms->prog && in_range(a, len, reinterpret_cast<uint64_t>(ms->prog->strtab), ms->prog->strtab_len)) return true;
  if (st->gstr &&
      in_range(a, len, reinterpret_cast<uint64_t>(st->gstr), static_cast<uint64_t>(kMaxGlobals) * st->strsize))
    return true;
  if (st->dyn.chunks && in_range(a, len, reinterpret_cast<uint64_t>(st->dyn.chunks),
                                 static_cast<uint64_t>(st->dyn.nchunks) * st->dyn.chunk_bytes))
    return true;
  if (ms->probe && ms->probe->names &&
      in_range(a, len, reinterpret_cast<uint64_t>(ms->probe->names), ms->probe->names_len))
    return true;
  if (in_range(a, len, reinterpret_cast<uint64_t>(st->execname), sizeof(st->execname))) return true;
  if (ms->fa && ms->fa->who && in_range(a, len, reinterpret_cast<uint64_t>(ms->fa->who->execname), kFireExecnameLen))
    return true;
  return false;
}

namespace {
inline uint64_t extent_in(uint64_t a, uint64_t base, uint64_t len) {
  return (a >= base && a - base < len) ? len - (a - base) : 0;
}
}  // namespace

// Bytes readable from `a` to the end of the range that holds it (0: none).
uint64_t dvm_readable_extent(const MState* ms, uint64_t a) {
  const Slot* s = ms->slot;
  const State* st = ms->state;
  uint64_t e;
  if ((e = extent_in(a, reinterpret_cast<uint64_t>(s->scratch), s->scratch_top))) return e;
  if (ms->fa && (e = extent_in(a, ms->fa->region.base, ms->fa->region.len))) return e;
  if (ms->prog && (e = extent_in(a, reinterpret_cast<uint64_t>(ms->prog->strtab), ms->prog->strtab_len))) return e;
  if (st->gstr &&
      (e = extent_in(a, reinterpret_cast<uint64_t>(st->gstr), static_cast<uint64_t>(kMaxGlobals) * st->strsize)))
    return e;
  if (st->dyn.chunks && (e = extent_in(a, reinterpret_cast<uint64_t>(st->dyn.chunks),
                                       static_cast<uint64_t>(st->dyn.nchunks) * st->dyn.chunk_bytes)))
    return e;
  if (ms->probe && ms->probe->names &&
      (e = extent_in(a, reinterpret_cast<uint64_t>(ms->probe->names), ms->probe->names_len)))
    return e;
  if ((e = extent_in(a, reinterpret_cast<uint64_t>(st->execname), sizeof(st->execname)))) return e;
  if (ms->fa && ms->fa->who) return extent_in(a, reinterpret_cast<uint64_t>(ms->fa->who->execname), kFireExecnameLen);
  return 0;
}

uint64_t dvm_strlen(MState* ms, uint64_t addr) {
  const uint64_t max = ms->state->strsize;
  // One range lookup, then a plain scan inside that range.
  uint64_t ext = dvm_readable_extent(ms, addr);
  if (ext == 0) {
    set_fault(ms, kFaultBadAddr, addr);
    return 0;
  }
  uint64_t lim = ext < max ? ext : max;
  const char* str = reinterpret_cast<const char*>(addr);
  for (uint64_t i = 0; i < lim; i++)
    if (str[i] == 0) return i;
  if (lim == max) return max - 1;  // strings are bounded by strsize (NUL included)
  set_fault(ms, kFaultBadAddr, addr + lim);
  return 0;
}

// Copies a bounded string into dst (dst has strsize bytes); returns length.
static uint64_t copy_string(MState* ms, uint8_t* dst, uint64_t src) {
  uint64_t n = dvm_strlen(ms, src);
  if (ms->fault) return 0;
  copy_bytes(dst, reinterpret_cast<const void*>(src), n);
  dst[n] = 0;
  return n;
}

// ---------------------------------------------------------------------------
// Dynamic variables.
uint32_t dynvar_chunk_bytes(uint32_t strsize) { return static_cast<uint32_t>((sizeof(DynChunk) + strsize + 7u) & ~7u); }

void dynvar_init(DynvarSpace* d, uint8_t* chunks, uint32_t chunk_bytes, uint32_t nchunks, uint32_t* buckets,
                 uint32_t nbuckets) {
  d->chunks = chunks;
  d->chunk_bytes = chunk_bytes;
  d->nchunks = nchunks;
  d->buckets = buckets;
  d->nbuckets = nbuckets;
  for (uint32_t i = 0; i < nbuckets; i++) buckets[i] = 0;
  d->free_head = 0;
  for (uint32_t i = nchunks; i > 0; i--) {
    auto* c = reinterpret_cast<DynChunk*>(chunks + static_cast<uint64_t>(i - 1) * chunk_bytes);
    c->next = d->free_head;
    d->free_head = i;
  }
  d->in_use = 0;
}

namespace {

enum DynOp { kDynLookup, kDynCreate, kDynDelete };

inline DynChunk* chunk_at(DynvarSpace* d, uint32_t idx1) {
  return reinterpret_cast<DynChunk*>(d->chunks + static_cast<uint64_t>(idx1 - 1) * d->chunk_bytes);
}
inline uint8_t* chunk_value(DynChunk* c) { return reinterpret_cast<uint8_t*>(c + 1); }

// Key: 16-byte prefix {kind|var, tid} then the encoded tuple.
uint8_t* dynvar_op(MState* ms, const uint8_t* key, uint32_t keylen, DynOp op) {
  DynvarSpace* d = &ms->state->dyn;
  if (d->nchunks == 0) {
    if (op == kDynCreate) set_fault(ms, kFaultDynvarFull);
    return nullptr;
  }
  uint32_t h = hash_words(keylen, key, keylen);
  uint32_t b = h & (d->nbuckets - 1);
  d->lock.lock();
  uint32_t prev = 0;
  for (uint32_t i = d->buckets[b]; i != 0;) {
    DynChunk* c = chunk_at(d, i);
    if (c->hash == h && c->keylen == keylen && equal_bytes(c->key, key, keylen)) {
      if (op == kDynDelete) {
        if (prev)
          chunk_at(d, prev)->next = c->next;
        else
          d->buckets[b] = c->next;
        c->next = d->free_head;
        d->free_head = i;
        d->in_use--;
        d->lock.unlock();
        return nullptr;
      }
      d->lock.unlock();
      return chunk_value(c);
    }
    prev = i;
    i = c->next;
  }
  if (op != kDynCreate) {
    d->lock.unlock();
    return nullptr;
  }
  uint32_t i = d->free_head;
  if (i == 0) {
    d->lock.unlock();
    set_fault(ms, kFaultDynvarFull);
    return nullptr;
  }
  DynChunk* c = chunk_at(d, i);
  d->free_head = c->next;
  c->hash = h;
  c->keylen = keylen;
  copy_bytes(c->key, key, keylen);
  zero_bytes(chunk_value(c), d->chunk_bytes - sizeof(DynChunk));
  c->next = d->buckets[b];
  d->buckets[b] = i;
  d->in_use++;
  d->lock.unlock();
  return chunk_value(c);
}

// Encodes the tuple stack after `prefix_len` bytes already in `out`.
// Element: u32 len | (string ? 1<<31 : 0), u32 0, bytes padded to 8.
uint32_t encode_tuple(MState* ms, uint8_t* out, uint32_t pos, uint32_t max, uint32_t first, uint32_t count) {
  for (uint32_t k = first; k < first + count; k++) {
    const TupleEntry& t = ms->tuple[k];
    uint64_t n;
    uint32_t tag = 0;
    const void* src;
    if (t.size == 0) {
      n = 8;
      src = &t.value;
    } else {
      if (t.size == kTupleString) {
        n = dvm_strlen(ms, t.value) + 1;
        tag = 0x80000000u;
      } else {
        n = t.size;
        if (!dvm_can_load(ms, t.value, n)) {
          set_fault(ms, kFaultBadAddr, t.value);
          return 0;
        }
      }
      if (ms->fault) return 0;
      src = reinterpret_cast<const void*>(t.value);
    }
    uint64_t padded = (n + 7) & ~7ull;
    if (pos + 8 + padded > max) {
      set_fault(ms, kFaultKeyTooBig);
      return 0;
    }
    uint32_t hdr[2] = {static_cast<uint32_t>(n) | tag, 0};
    copy_bytes(out + pos, hdr, 8);
    pos += 8;
    if (tag && t.size == kTupleString) {
      copy_bytes(out + pos, src, n - 1);
      out[pos + n - 1] = 0;
    } else {
      copy_bytes(out + pos, src, n);
    }
    zero_bytes(out + pos + n, padded - n);
    pos += static_cast<uint32_t>(padded);
  }
  return pos;
}

enum DynKind : uint32_t { kDynTls = 1, kDynGlobalAssoc = 2, kDynThreadAssoc = 3 };

uint8_t* dynvar_for(MState* ms, DynKind kind, uint32_t var, bool with_tuple, DynOp op) {
  alignas(8) uint8_t key[kDynKeyMax];
  uint32_t hdr[2] = {kind, var};
  copy_bytes(key, hdr, 8);
  uint64_t tid = (kind == kDynGlobalAssoc) ? 0 : ms->fa->tid;
  copy_bytes(key + 8, &tid, 8);
  uint32_t len = 16;
  if (with_tuple) {
    len = encode_tuple(ms, key, 16, kDynKeyMax, 0, ms->ntuple);
    if (ms->fault) return nullptr;
  }
  return dynvar_op(ms, key, len, op);
}

uint64_t dyn_load(MState* ms, DynKind kind, uint32_t imm, bool tuple) {
  uint8_t* v = dynvar_for(ms, kind, imm & kVarIdMask, tuple, kDynLookup);
  if (!v) return 0;
  if (imm & kVarRef) return reinterpret_cast<uint64_t>(v);
  uint64_t x;
  copy_bytes(&x, v, 8);
  return x;
}

void dyn_store(MState* ms, DynKind kind, uint32_t imm, bool tuple, uint64_t val) {
  if (!(imm & kVarRef) && val == 0) {
    dynvar_for(ms, kind, imm & kVarIdMask, tuple, kDynDelete);
    return;
  }
  if (imm & kVarRef) {
    // Validate the source before taking a chunk.
    dvm_strlen(ms, val);
    if (ms->fault) return;
  }
  uint8_t* v = dynvar_for(ms, kind, imm & kVarIdMask, tuple, kDynCreate);
  if (!v) return;
  if (imm & kVarRef)
    copy_string(ms, v, val);
  else
    copy_bytes(v, &val, 8);
}

uint64_t load_builtin(MState* ms, uint32_t id) {
  const FireArgs* fa = ms->fa;
  State* st = ms->state;
  if (id < kMaxArgs) return fa->args[id];
  switch (id) {
    case kVarTimestamp:
      if (!ms->have_timestamp) {
        ms->timestamp = st->host.timestamp();
        ms->have_timestamp = true;
      }
      return ms->timestamp;
    case kVarVtimestamp: return st->host.vtimestamp();
    case kVarWalltimestamp: return st->host.walltimestamp();
    case kVarPid: return fa->who ? fa->who->pid : st->host.pid;
    case kVarTid: return fa->tid;
    case kVarCpu: return st->host.cpu();
    case kVarId: return ms->probe->id;
    case kVarEpid: return ms->epid;
    case kVarProbeprov: return reinterpret_cast<uint64_t>(ms->probe->provider);
    case kVarProbemod: return reinterpret_cast<uint64_t>(ms->probe->module);
    case kVarProbefunc: return reinterpret_cast<uint64_t>(ms->probe->function);
    case kVarProbename: return reinterpret_cast<uint64_t>(ms->probe->name);
    case kVarExecname: return reinterpret_cast<uint64_t>(fa->who ? fa->who->execname : st->execname);
    case kVarCurthread: return fa->thread;
    case kVarPpid: return fa->who ? fa->who->ppid : st->host.ppid;
    case kVarUid: return fa->who ? fa->who->uid : st->host.uid;
    case kVarErrno: return fa->who ? fa->who->errno_value : 0;
    default: set_fault(ms, kFaultIllegalOp); return 0;
  }
}

// One switch over the subroutines, each case a few lines: what every
// subroutine does reads as one table.
uint64_t call_subr(MState* ms, uint32_t subr) {
  uint32_t n = kSubrArgs[subr];
  const TupleEntry* a = &ms->tuple[ms->ntuple - n];
  uint32_t strsize = ms->state->strsize;
  switch (subr) {
    case kSubrStrlen: return dvm_strlen(ms, a[0].value);
    case kSubrStrjoin: {
      uint64_t la = dvm_strlen(ms, a[0].value);
      uint64_t lb = dvm_strlen(ms, a[1].value);
      if (ms->fault) return 0;
      if (la > strsize - 1) la = strsize - 1;
      if (lb > strsize - 1 - la) lb = strsize - 1 - la;
      uint8_t* d = scratch_alloc(ms, la + lb + 1);
      if (!d) return 0;
      copy_bytes(d, reinterpret_cast<const void*>(a[0].value), la);
      copy_bytes(d + la, reinterpret_cast<const void*>(a[1].value), lb);
      d[la + lb] = 0;
      return reinterpret_cast<uint64_t>(d);
    }
    case kSubrAlloca: {
      uint8_t* d = scratch_alloc(ms, a[0].value);
      if (!d) return 0;
      zero_bytes(d, a[0].value);
      return reinterpret_cast<uint64_t>(d);
    }
    case kSubrBcopy: {
      uint64_t src = a[0].value, dst = a[1].value, len = a[2].value;
      if (!dvm_can_load(ms, src, len)) {
        set_fault(ms, kFaultBadAddr, src);
        return 0;
      }
      Slot* s = ms->slot;
      if (!in_range(dst, len, reinterpret_cast<uint64_t>(s->scratch), s->scratch_top)) {
        set_fault(ms, kFaultBadAddr, dst);
        return 0;
      }
      copy_bytes(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), len);
      return 0;
    }
    case kSubrCopyin: {
      uint8_t* d = scratch_alloc(ms, a[1].value);
      if (!d) return 0;
      if (!ms->state->host.copyin(d, a[0].value, a[1].value)) {
        set_fault(ms, kFaultBadCopy, a[0].value);
        return 0;
      }
      return reinterpret_cast<uint64_t>(d);
    }
    case kSubrCopyinstr: {
      uint8_t* d = scratch_alloc(ms, strsize);
      if (!d) return 0;
      uint64_t src = a[0].value;
      uint64_t got = 0;
      // Copy up to page boundaries so an unmapped page after the NUL is fine.
      while (got < strsize - 1) {
        uint64_t page_left = 4096 - ((src + got) & 4095);
        uint64_t want = strsize - 1 - got;
        if (want > page_left) want = page_left;
        if (!ms->state->host.copyin(d + got, src + got, want)) {
          set_fault(ms, kFaultBadCopy, src + got);
          return 0;
        }
        bool nul = false;
        for (uint64_t i = 0; i < want; i++)
          if (d[got + i] == 0) {
            nul = true;
            break;
          }
        got += want;
        if (nul) break;
      }
      d[strsize - 1] = 0;
      return reinterpret_cast<uint64_t>(d);
    }
    case kSubrRand: {
      uint64_t x = ms->rand_state ? ms->rand_state : 0x2545f4914f6cdd1dull;
      x ^= x >> 12;
      x ^= x << 25;
      x ^= x >> 27;
      ms->rand_state = x;
      return (x * 0x2545f4914f6cdd1dull) >> 33;
    }
    default: set_fault(ms, kFaultIllegalOp); return 0;
  }
}

template <typename T>
inline bool load_mem(MState* ms, uint64_t addr, uint64_t* out) {
  if (addr & (sizeof(T) - 1)) {
    set_fault(ms, kFaultBadAlign, addr);
    return false;
  }
  if (!dvm_can_load(ms, addr, sizeof(T))) {
    set_fault(ms, kFaultBadAddr, addr);
    return false;
  }
  T v;
  __builtin_memcpy(&v, reinterpret_cast<const void*>(addr), sizeof(T));  // one mov
  *out = static_cast<uint64_t>(v);
  return true;
}

template <typename T>
inline bool store_mem(MState* ms, uint64_t addr, uint64_t val) {
  if (addr & (sizeof(T) - 1)) {
    set_fault(ms, kFaultBadAlign, addr);
    return false;
  }
  Slot* s = ms->slot;
  if (!in_range(addr, sizeof(T), reinterpret_cast<uint64_t>(s->scratch), s->scratch_top)) {
    set_fault(ms, kFaultBadAddr, addr);
    return false;
  }
  T v = static_cast<T>(val);
  __builtin_memcpy(reinterpret_cast<void*>(addr), &v, sizeof(T));
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------
// The threaded interpreter's dispatch table.  Built into the kernel module,
// objtool follows the indirect jumps through it only when it sits in the
// section the kernel's __annotate_jump_table names (kmod/Kbuild passes it).
#ifdef TBDVM_JUMP_TABLE_SECTION
#define TBDVM_JUMP_TABLE __attribute__((section(TBDVM_JUMP_TABLE_SECTION)))
#else
#define TBDVM_JUMP_TABLE
#endif

// One function on purpose (~220 lines): the dispatch over every opcode,
// with the registers in locals the compiler keeps in machine registers; a
// handler per function would make each instruction a call and the registers
// memory.
uint64_t dif_exec(const Program* p, MState* ms) {
  // Registers start at zero so no stale stack data can reach a record.
  // (CMake sets -mmemset-strategy so this is not `rep stos`, ~30 cycles.)
  typedef uint64_t V2 __attribute__((vector_size(16)));
  union {
    uint64_t r[kNumRegs];
    V2 v[kNumRegs / 2];
  } regs;
  for (uint32_t i = 0; i < kNumRegs / 2; i++) regs.v[i] = V2{0, 0};
  uint64_t* const r = regs.r;
  CondCodes cc = {false, false, false, false};
  const Insn* code = p->insns;
  const Insn* in = code;
  // ms->prog stays set after return: a string the program returns may point
  // into its string table, and the caller (trace, printf, keys) reads it.
  ms->prog = p;
  uint64_t result = 0;

  static void* const kDispatch[kOpCount] TBDVM_JUMP_TABLE = {
      &&op_nop,    &&op_or,     &&op_xor,     &&op_and,  &&op_not,  &&op_sll,  &&op_srl,  &&op_sra,  &&op_add,
      &&op_sub,    &&op_mul,    &&op_sdiv,    &&op_udiv, &&op_srem, &&op_urem, &&op_setx, &&op_sets, &&op_mov,
      &&op_cmp,    &&op_tst,    &&op_scmp,    &&op_ba,   &&op_be,   &&op_bne,  &&op_bg,   &&op_bgu,  &&op_bge,
      &&op_bgeu,   &&op_bl,     &&op_blu,     &&op_ble,  &&op_bleu, &&op_ret,  &&op_ldsb, &&op_ldsh, &&op_ldsw,
      &&op_ldx,    &&op_ldub,   &&op_lduh,    &&op_lduw, &&op_stb,  &&op_sth,  &&op_stw,  &&op_stx,  &&op_ldgs,
      &&op_stgs,   &&op_ldts,   &&op_stts,    &&op_ldls, &&op_stls, &&op_ldga, &&op_stga, &&op_ldta, &&op_stta,
      &&op_pushtv, &&op_pushtr, &&op_flushts, &&op_call};
#define NEXT()               \
  do {                       \
    in++;                    \
    goto* kDispatch[in->op]; \
  } while (0)
#define FAULTED()                \
  do {                           \
    if (ms->fault) goto faulted; \
  } while (0)
#define BRANCH(cond)           \
  do {                         \
    if (cond) {                \
      in = code + in->imm;     \
      goto* kDispatch[in->op]; \
    }                          \
    NEXT();                    \
  } while (0)

  goto* kDispatch[in->op];

op_nop:
  NEXT();
op_or:
  r[in->rd] = r[in->r1] | r[in->r2];
  NEXT();
op_xor:
  r[in->rd] = r[in->r1] ^ r[in->r2];
  NEXT();
op_and:
  r[in->rd] = r[in->r1] & r[in->r2];
  NEXT();
op_not:
  r[in->rd] = ~r[in->r1];
  NEXT();
op_sll:
  r[in->rd] = r[in->r1] << (r[in->r2] & 63);
  NEXT();
op_srl:
  r[in->rd] = r[in->r1] >> (r[in->r2] & 63);
  NEXT();
op_sra:
  r[in->rd] = static_cast<uint64_t>(static_cast<int64_t>(r[in->r1]) >> (r[in->r2] & 63));
  NEXT();
op_add:
  r[in->rd] = r[in->r1] + r[in->r2];
  NEXT();
op_sub:
  r[in->rd] = r[in->r1] - r[in->r2];
  NEXT();
op_mul:
  r[in->rd] = r[in->r1] * r[in->r2];
  NEXT();
op_sdiv : {
  int64_t a = static_cast<int64_t>(r[in->r1]), b = static_cast<int64_t>(r[in->r2]);
  if (b == 0) {
    set_fault(ms, kFaultDivZero);
    goto faulted;
  }
  r[in->rd] = (b == -1) ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a / b);
  NEXT();
}
op_udiv:
  if (r[in->r2] == 0) {
    set_fault(ms, kFaultDivZero);
    goto faulted;
  }
  r[in->rd] = r[in->r1] / r[in->r2];
  NEXT();
op_srem : {
  int64_t a = static_cast<int64_t>(r[in->r1]), b = static_cast<int64_t>(r[in->r2]);
  if (b == 0) {
    set_fault(ms, kFaultDivZero);
    goto faulted;
  }
  r[in->rd] = (b == -1) ? 0 : static_cast<uint64_t>(a % b);
  NEXT();
}
op_urem:
  if (r[in->r2] == 0) {
    set_fault(ms, kFaultDivZero);
    goto faulted;
  }
  r[in->rd] = r[in->r1] % r[in->r2];
  NEXT();
op_setx:
  r[in->rd] = p->inttab[in->imm];
  NEXT();
op_sets:
  r[in->rd] = reinterpret_cast<uint64_t>(p->strtab + in->imm);
  NEXT();
op_mov:
  r[in->rd] = r[in->r1];
  NEXT();
op_cmp : {
  uint64_t a = r[in->r1], b = r[in->r2], d = a - b;
  cc.n = static_cast<int64_t>(d) < 0;
  cc.z = d == 0;
  cc.v = (((a ^ b) & (d ^ a)) >> 63) != 0;
  cc.c = a < b;
  NEXT();
}
op_tst:
  cc.n = static_cast<int64_t>(r[in->r1]) < 0;
  cc.z = r[in->r1] == 0;
  cc.v = cc.c = false;
  NEXT();
op_scmp : {
  uint64_t a = r[in->r1], b = r[in->r2];
  uint64_t la = dvm_strlen(ms, a), lb = dvm_strlen(ms, b);
  FAULTED();
  const auto* x = reinterpret_cast<const uint8_t*>(a);
  const auto* y = reinterpret_cast<const uint8_t*>(b);
  int c = 0;
  uint64_t n = (la < lb ? la : lb) + 1;
  for (uint64_t i = 0; i < n; i++) {
    uint8_t cx = i < la ? x[i] : 0, cy = i < lb ? y[i] : 0;
    if (cx != cy) {
      c = cx < cy ? -1 : 1;
      break;
    }
  }
  cc.n = c < 0;
  cc.z = c == 0;
  cc.v = false;
  cc.c = c < 0;
  NEXT();
}
op_ba:
  in = code + in->imm;
  goto* kDispatch[in->op];
op_be:
  BRANCH(cc.z);
op_bne:
  BRANCH(!cc.z);
op_bg:
  BRANCH(!(cc.z || (cc.n != cc.v)));
op_bgu:
  BRANCH(!(cc.c || cc.z));
op_bge:
  BRANCH(cc.n == cc.v);
op_bgeu:
  BRANCH(!cc.c);
op_bl:
  BRANCH(cc.n != cc.v);
op_blu:
  BRANCH(cc.c);
op_ble:
  BRANCH(cc.z || (cc.n != cc.v));
op_bleu:
  BRANCH(cc.c || cc.z);
op_ret:
  result = r[in->rd];
  return result;
op_ldsb : {
  uint64_t v;
  if (!load_mem<int8_t>(ms, r[in->r1], &v)) goto faulted;
  r[in->rd] = v;
  NEXT();
}
op_ldsh : {
  uint64_t v;
  if (!load_mem<int16_t>(ms, r[in->r1], &v)) goto faulted;
  r[in->rd] = v;
  NEXT();
}
op_ldsw : {
  uint64_t v;
  if (!load_mem<int32_t>(ms, r[in->r1], &v)) goto faulted;
  r[in->rd] = v;
  NEXT();
}
op_ldx : {
  uint64_t v;
  if (!load_mem<uint64_t>(ms, r[in->r1], &v)) goto faulted;
  r[in->rd] = v;
  NEXT();
}
op_ldub : {
  uint64_t v;
  if (!load_mem<uint8_t>(ms, r[in->r1], &v)) goto faulted;
  r[in->rd] = v;
  NEXT();
}
op_lduh : {
  uint64_t v;
  if (!load_mem<uint16_t>(ms, r[in->r1], &v)) goto faulted;
  r[in->rd] = v;
  NEXT();
}
op_lduw : {
  uint64_t v;
  if (!load_mem<uint32_t>(ms, r[in->r1], &v)) goto faulted;
  r[in->rd] = v;
  NEXT();
}
op_stb:
  if (!store_mem<uint8_t>(ms, r[in->rd], r[in->r1])) goto faulted;
  NEXT();
op_sth:
  if (!store_mem<uint16_t>(ms, r[in->rd], r[in->r1])) goto faulted;
  NEXT();
op_stw:
  if (!store_mem<uint32_t>(ms, r[in->rd], r[in->r1])) goto faulted;
  NEXT();
op_stx:
  if (!store_mem<uint64_t>(ms, r[in->rd], r[in->r1])) goto faulted;
  NEXT();
op_ldgs : {
  uint32_t id = in->imm & kVarIdMask;
  if (id < kVarFirstUser) {
    r[in->rd] = load_builtin(ms, id);
    FAULTED();
  } else if (in->imm & kVarRef) {
    r[in->rd] =
        reinterpret_cast<uint64_t>(ms->state->gstr + static_cast<uint64_t>(id - kVarFirstUser) * ms->state->strsize);
  } else {
    r[in->rd] = ms->state->gvals[id - kVarFirstUser];
  }
  NEXT();
}
op_stgs : {
  uint32_t id = (in->imm & kVarIdMask) - kVarFirstUser;
  if (in->imm & kVarRef) {
    State* st = ms->state;
    // Copy through scratch-free path: validate then copy in place.
    uint64_t n = dvm_strlen(ms, r[in->r1]);
    FAULTED();
    uint8_t* d = st->gstr + static_cast<uint64_t>(id) * st->strsize;
    const auto* s = reinterpret_cast<const uint8_t*>(r[in->r1]);
    if (s != d) {
      for (uint64_t i = 0; i < n; i++) d[i] = s[i];
      d[n] = 0;
    }
  } else {
    ms->state->gvals[id] = r[in->r1];
  }
  NEXT();
}
op_ldts:
  r[in->rd] = dyn_load(ms, kDynTls, in->imm, false);
  FAULTED();
  NEXT();
op_stts:
  dyn_store(ms, kDynTls, in->imm, false, r[in->r1]);
  FAULTED();
  NEXT();
op_ldls : {
  uint32_t id = in->imm & kVarIdMask;
  r[in->rd] = (ms->locals_valid >> id) & 1 ? ms->locals[id] : 0;
  NEXT();
}
op_stls : {
  uint32_t id = in->imm & kVarIdMask;
  if (in->imm & kVarRef) {
    uint64_t n = dvm_strlen(ms, r[in->r1]);
    FAULTED();
    uint8_t* d = scratch_alloc(ms, n + 1);
    if (!d) goto faulted;
    copy_bytes(d, reinterpret_cast<const void*>(r[in->r1]), n);
    d[n] = 0;
    ms->locals[id] = reinterpret_cast<uint64_t>(d);
  } else {
    ms->locals[id] = r[in->r1];
  }
  ms->locals_valid |= 1ull << id;
  NEXT();
}
op_ldga:
  r[in->rd] = dyn_load(ms, kDynGlobalAssoc, in->imm, true);
  FAULTED();
  NEXT();
op_stga:
  dyn_store(ms, kDynGlobalAssoc, in->imm, true, r[in->r1]);
  FAULTED();
  NEXT();
op_ldta:
  r[in->rd] = dyn_load(ms, kDynThreadAssoc, in->imm, true);
  FAULTED();
  NEXT();
op_stta:
  dyn_store(ms, kDynThreadAssoc, in->imm, true, r[in->r1]);
  FAULTED();
  NEXT();
op_pushtv:
  if (ms->ntuple >= kMaxTuple) {
    set_fault(ms, kFaultTupleOverflow);
    goto faulted;
  }
  ms->tuple[ms->ntuple].value = r[in->r1];
  ms->tuple[ms->ntuple].size = 0;
  ms->ntuple++;
  NEXT();
op_pushtr:
  if (ms->ntuple >= kMaxTuple) {
    set_fault(ms, kFaultTupleOverflow);
    goto faulted;
  }
  ms->tuple[ms->ntuple].value = r[in->r1];
  ms->tuple[ms->ntuple].size = in->r2 ? r[in->r2] : kTupleString;
  if (ms->tuple[ms->ntuple].size == 0) ms->tuple[ms->ntuple].size = kTupleString;
  ms->ntuple++;
  NEXT();
op_flushts:
  ms->ntuple = 0;
  NEXT();
op_call:
  if (ms->ntuple < kSubrArgs[in->imm]) {
    set_fault(ms, kFaultIllegalOp);
    goto faulted;
  }
  r[in->rd] = call_subr(ms, in->imm);
  FAULTED();
  NEXT();

faulted:
  ms->fault_pc = static_cast<uint32_t>(in - code);
  return 0;
#undef NEXT
#undef FAULTED
#undef BRANCH
}

// ---------------------------------------------------------------------------
// Aggregations.
uint32_t agg_nvals(uint16_t kind, int64_t base, int64_t limit, int64_t step) {
  switch (kind) {
    case kAggAvg: return 2;
    case kAggStddev: return 4;
    case kAggQuantize: return kQuantizeBuckets;
    case kAggLquantize:
      if (step <= 0 || limit <= base) return 0;
      return static_cast<uint32_t>((limit - base) / step) + 2;
    case kAggLlquantize: {
      // The bucket of the largest value, plus one; more than lquantize's
      // 4096 + 2 is refused (an entry's value count is 16 bits).
      const uint32_t top = llquantize_bucket(base, limit, step, INT64_MAX);
      return top == 0 || top + 1 > kAggMaxBuckets ? 0 : top + 1;
    }
    default: return 1;
  }
}

namespace {
// The orders of magnitude of an llquantize: false when dtrace would refuse
// the parameters.  *first = factor^low.
bool llq_params(int64_t factor, int64_t low_high, int64_t nsteps, uint32_t* low, uint32_t* high, int64_t* first) {
  *low = static_cast<uint32_t>(static_cast<uint64_t>(low_high));
  *high = static_cast<uint32_t>(static_cast<uint64_t>(low_high) >> 32);
  if (factor < 2 || factor > 0xffff || nsteps < factor || nsteps > 0xffff || nsteps % factor != 0 || *high < *low)
    return false;
  // dtrace's rule: the steps evenly divide a power of the factor (the first
  // one at least as large), so every order's steps are whole and alike.
  int64_t v = factor;
  while (v < nsteps) v *= factor;
  if (v % nsteps != 0) return false;
  // factor^(high+1) must fit: every bound below is then exact.
  int64_t p = 1;
  for (uint32_t k = 0; k <= *high; k++) {
    if (p > INT64_MAX / factor) return false;
    p *= factor;
    if (k + 1 == *low) *first = p;
  }
  if (*low == 0) *first = 1;
  return true;
}

// The layout of parameters already checked: each order of magnitude k in
// low..high is [lo, lo * factor) in steps of `width`, its buckets numbered
// from `first`; `at(lo, width, count, first)` is asked per order until it
// answers true.  Returns the bucket after the last order (the overflow).
template <typename F>
uint32_t llq_orders(int64_t factor, uint32_t low, uint32_t high, int64_t nsteps, int64_t lo, F&& at) {
  uint32_t b = 1;
  for (uint32_t k = low; k <= high; k++) {
    const int64_t hi = lo * factor;
    const int64_t width = hi / (nsteps < hi ? nsteps : hi);  // min(nsteps, hi) steps over [0, hi), exactly
    const uint32_t count = static_cast<uint32_t>((hi - lo) / width);
    if (at(lo, width, count, b)) return b;
    b += count;
    lo = hi;
  }
  return b;
}

// The bucket of v, the parameters trusted: the probe path's, checked when
// the session was enabled (agg_nvals() != 0), so not checked per firing.
uint32_t llq_bucket_trusted(const Action* act, int64_t v) {
  const uint32_t low = static_cast<uint32_t>(static_cast<uint64_t>(act->lq_limit));
  const uint32_t high = static_cast<uint32_t>(static_cast<uint64_t>(act->lq_limit) >> 32);
  int64_t lo = 1;
  for (uint32_t k = 0; k < low; k++) lo *= act->lq_base;
  if (v < lo) return 0;
  uint32_t bucket = 0;
  const uint32_t over = llq_orders(act->lq_base, low, high, act->lq_step, lo,
                                   [&](int64_t from, int64_t width, uint32_t count, uint32_t first) {
                                     if (v >= from * act->lq_base) return false;  // past this order
                                     bucket = first + static_cast<uint32_t>((v - from) / width);
                                     (void)count;  // the steps divide the order (llq_params)
                                     return true;
                                   });
  return bucket ? bucket : over;
}
}  // namespace

uint32_t llquantize_bucket(int64_t factor, int64_t low_high, int64_t nsteps, int64_t v) {
  uint32_t low, high;
  int64_t lo;
  if (!llq_params(factor, low_high, nsteps, &low, &high, &lo)) return 0;
  Action a;
  a.lq_base = factor;
  a.lq_limit = low_high;
  a.lq_step = nsteps;
  return llq_bucket_trusted(&a, v);
}

int64_t llquantize_bucket_min(int64_t factor, int64_t low_high, int64_t nsteps, uint32_t bucket) {
  uint32_t low, high;
  int64_t lo;
  if (!llq_params(factor, low_high, nsteps, &low, &high, &lo) || bucket == 0) return INT64_MIN;
  int64_t min = 0;
  llq_orders(factor, low, high, nsteps, lo, [&](int64_t from, int64_t width, uint32_t count, uint32_t first) {
    min = from * factor;  // the next order's start, if the bucket is past this one
    if (bucket >= first + count) return false;
    min = from + static_cast<int64_t>(bucket - first) * width;
    return true;
  });
  return min;
}

int64_t* agg_values(AggEntry* e) { return reinterpret_cast<int64_t*>(reinterpret_cast<uint8_t*>(e + 1) + e->keylen); }
const int64_t* agg_values(const AggEntry* e) {
  return reinterpret_cast<const int64_t*>(reinterpret_cast<const uint8_t*>(e + 1) + e->keylen);
}

uint32_t quantize_bucket(int64_t v) {
  if (v == 0) return kQuantizeZero;
  uint64_t m = v > 0 ? static_cast<uint64_t>(v) : 0 - static_cast<uint64_t>(v);
  uint32_t log2 = 63 - static_cast<uint32_t>(__builtin_clzll(m));
  if (log2 > 62) log2 = 62;
  return v > 0 ? kQuantizeZero + 1 + log2 : kQuantizeZero - 1 - log2;
}

int64_t quantize_bucket_min(uint32_t b) {
  if (b == kQuantizeZero) return 0;
  if (b > kQuantizeZero) return static_cast<int64_t>(1ull << (b - kQuantizeZero - 1));
  return -static_cast<int64_t>(1ull << (kQuantizeZero - 1 - b));
}

namespace {

// Sums wrap (two's complement) like DTrace's; signed overflow is not UB here.
inline void wrap_add(int64_t* v, int64_t x) {
  *v = static_cast<int64_t>(static_cast<uint64_t>(*v) + static_cast<uint64_t>(x));
}

void agg_apply(const Action* act, int64_t* v, int64_t x) {
  switch (act->agg_kind) {
    case kAggCount: wrap_add(&v[0], 1); break;
    case kAggSum: wrap_add(&v[0], x); break;
    case kAggMin:
      if (x < v[0]) v[0] = x;
      break;
    case kAggMax:
      if (x > v[0]) v[0] = x;
      break;
    case kAggAvg:
      wrap_add(&v[0], 1);
      wrap_add(&v[1], x);
      break;
    case kAggStddev: {
      wrap_add(&v[0], 1);
      wrap_add(&v[1], x);
      // x^2 into the 128-bit sum (DTrace keeps it in 128 bits too).
      const unsigned __int128 sq = static_cast<unsigned __int128>(static_cast<__int128>(x) * x);
      unsigned __int128 acc =
          (static_cast<unsigned __int128>(static_cast<uint64_t>(v[3])) << 64) | static_cast<uint64_t>(v[2]);
      acc += sq;
      v[2] = static_cast<int64_t>(static_cast<uint64_t>(acc));
      v[3] = static_cast<int64_t>(static_cast<uint64_t>(acc >> 64));
      break;
    }
    case kAggQuantize: wrap_add(&v[quantize_bucket(x)], 1); break;
    case kAggLlquantize: wrap_add(&v[llq_bucket_trusted(act, x)], 1); break;
    case kAggLquantize: {
      uint32_t n = agg_nvals(kAggLquantize, act->lq_base, act->lq_limit, act->lq_step);
      uint32_t b;
      if (x < act->lq_base)
        b = 0;
      else if (x >= act->lq_limit)
        b = n - 1;
      else
        b = 1 + static_cast<uint32_t>((x - act->lq_base) / act->lq_step);
      if (b > n - 1) b = n - 1;
      wrap_add(&v[b], 1);
      break;
    }
    default: break;
  }
}

// Returns false when the aggregation buffer is full (counted as a drop).
bool agg_update(MState* ms, const Action* act, const uint8_t* key, uint32_t keylen, int64_t x) {
  AggBuffer* a = &ms->slot->agg;
  const bool cacheable = keylen == 0 && act->agg_id < kAggNoKeyCache;
  if (cacheable && a->nokey[act->agg_id]) {
    auto* e = reinterpret_cast<AggEntry*>(a->arena + a->nokey[act->agg_id] - 1);
    agg_apply(act, agg_values(e), x);
    return true;
  }
  uint32_t h = hash_words(act->agg_id, key, keylen);
  uint32_t b = h & (a->nbuckets - 1);
  for (uint32_t off = a->buckets[b]; off != 0;) {
    auto* e = reinterpret_cast<AggEntry*>(a->arena + off - 1);
    if (e->hash == h && e->agg_id == act->agg_id && e->keylen == keylen && equal_bytes(e + 1, key, keylen)) {
      agg_apply(act, agg_values(e), x);
      return true;
    }
    off = e->next;
  }
  uint32_t nvals = agg_nvals(act->agg_kind, act->lq_base, act->lq_limit, act->lq_step);
  uint64_t need = sizeof(AggEntry) + keylen + static_cast<uint64_t>(nvals) * 8;
  if (nvals == 0 || a->used + need > a->size) return false;
  auto* e = reinterpret_cast<AggEntry*>(a->arena + a->used);
  e->hash = h;
  e->agg_id = act->agg_id;
  e->keylen = static_cast<uint16_t>(keylen);
  e->nvals = static_cast<uint16_t>(nvals);
  copy_bytes(e + 1, key, keylen);
  int64_t* v = agg_values(e);
  int64_t init = act->agg_kind == kAggMin ? INT64_MAX : act->agg_kind == kAggMax ? INT64_MIN : 0;
  for (uint32_t i = 0; i < nvals; i++) v[i] = init;
  agg_apply(act, v, x);
  e->next = a->buckets[b];
  // Publish after the entry is complete (the consumer copies under the lock).
  a->buckets[b] = a->used + 1;
  if (cacheable) a->nokey[act->agg_id] = a->used + 1;
  a->used += static_cast<uint32_t>(need);
  a->nentries++;
  return true;
}

}  // namespace

uint32_t dvm_agg_reset(AggBuffer* a, uint32_t agg_id, uint16_t agg_kind, const uint8_t* key, uint32_t keylen,
                       bool unlink) {
  if (!a->arena || !a->nbuckets || agg_id == kAggDead) return 0;
  const int64_t init = agg_kind == kAggMin ? INT64_MAX : agg_kind == kAggMax ? INT64_MIN : 0;
  const uint32_t h = key ? hash_words(agg_id, key, keylen) : 0;
  uint32_t changed = 0;
  for (uint32_t b = key ? (h & (a->nbuckets - 1)) : 0; b < a->nbuckets; b++) {
    uint32_t* link = &a->buckets[b];
    while (*link) {
      auto* e = reinterpret_cast<AggEntry*>(a->arena + *link - 1);
      const bool hit =
          e->agg_id == agg_id && (!key || (e->hash == h && e->keylen == keylen && equal_bytes(e + 1, key, keylen)));
      if (!hit) {
        link = &e->next;
        continue;
      }
      changed++;
      if (!unlink) {
        int64_t* v = agg_values(e);
        for (uint32_t i = 0; i < e->nvals; i++) v[i] = init;
        link = &e->next;
        continue;
      }
      if (e->keylen == 0 && agg_id < kAggNoKeyCache) a->nokey[agg_id] = 0;
      *link = e->next;
      e->agg_id = kAggDead;
      a->nentries--;
    }
    if (key) break;
  }
  return changed;
}

namespace {

// Runs one action; returns false on a fault (the ECB is abandoned).
bool run_action(MState* ms, const Action* act, uint8_t* rec) {
  State* st = ms->state;
  switch (act->kind) {
    case kActDifExpr: dif_exec(act->value, ms); return ms->fault == kFaultNone;
    case kActTrace:
    case kActPrintf:
    case kActExit: {
      if (act->kind == kActExit) st->exit_requested.store(true, std::memory_order_relaxed);
      if (!act->value) return true;
      uint64_t v = dif_exec(act->value, ms);
      if (ms->fault) return false;
      uint8_t* d = rec + act->offset;
      if (act->value->returns_string) {
        uint64_t n = dvm_strlen(ms, v);
        if (ms->fault) return false;
        if (n > act->size - 1) n = act->size - 1;
        copy_bytes(d, reinterpret_cast<const void*>(v), n);
        zero_bytes(d + n, act->size - n);
      } else {
        copy_bytes(d, &v, 8);
      }
      return true;
    }
    case kActTracemem: {
      uint64_t addr = dif_exec(act->value, ms);
      if (ms->fault) return false;
      if (!dvm_can_load(ms, addr, act->size)) {
        set_fault(ms, kFaultBadAddr, addr);
        return false;
      }
      copy_bytes(rec + act->offset, reinterpret_cast<const void*>(addr), act->size);
      return true;
    }
    case kActStack: {
      auto* pcs = reinterpret_cast<uint64_t*>(rec + act->offset);
      uint32_t max = act->size / 8;
      uint32_t n = st->host.stack ? st->host.stack(pcs, max) : 0;
      for (uint32_t i = n; i < max; i++) pcs[i] = 0;
      return true;
    }
    case kActAggregate: {
      alignas(8) uint8_t key[kAggKeyMax];
      uint32_t keylen = 0;
      if (act->nkeys) {
        // Evaluate and encode one key at a time, while its program's string
        // table is still the readable one.
        uint32_t nk = act->nkeys < kMaxTuple ? act->nkeys : kMaxTuple;
        for (uint32_t k = 0; k < nk; k++) {
          ms->ntuple = 0;
          uint64_t v = dif_exec(act->keys[k], ms);
          if (ms->fault) return false;
          ms->tuple[0].value = v;
          ms->tuple[0].size = act->keys[k]->returns_string ? kTupleString : 0;
          keylen = encode_tuple(ms, key, keylen, kAggKeyMax, 0, 1);
          if (ms->fault) return false;
        }
        ms->ntuple = 0;
      }
      int64_t x = 0;
      if (act->value) {
        x = static_cast<int64_t>(dif_exec(act->value, ms));
        if (ms->fault) return false;
      }
      if (!agg_update(ms, act, key, keylen, x)) bump(ms->slot->agg_drops);
      return true;
    }
    default: set_fault(ms, kFaultIllegalOp); return false;
  }
}

}  // namespace

// ---------------------------------------------------------------------------
void dvm_fire(State* st, const Probe* probe, const FireArgs* fa, uint32_t slot_index, bool in_signal) {
  Slot* s = &st->slots[slot_index];
  if (!s->lock->try_lock()) {
    if (in_signal) {
      // The interrupted code holds this slot; DTrace would have had
      // interrupts off.  Count it instead of deadlocking.
      s->busy_drops.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    s->lock->lock();
  }
  dvm_fire_locked(st, probe, fa, slot_index);
  s->lock->unlock();
}

namespace {
void run_ecbs(State* st, Slot* s, const Probe* probe, bool in_error);

// A fault: counted, an error record for the consumer, then dtrace:::ERROR's
// clauses (not for a fault of theirs).  Off the probe path's fast lane.
__attribute__((noinline)) void report_fault(State* st, Slot* s, uint32_t epid, uint32_t where, bool in_error) {
  MState* ms = &s->ms;
  const uint32_t fault = ms->fault < kFaultCount ? ms->fault : kFaultIllegalOp;
  bump(s->errors);
  bump(s->faults[fault]);
  PrincipalBuffer* b = &s->buf;
  const uint32_t off = b->offset[b->active];
  if (sizeof(ErrorRecord) <= b->size - off) {
    ErrorRecord r;
    r.h.epid = kEpidError;
    r.h.size = sizeof(ErrorRecord);
    r.epid = epid;
    r.where = where;
    r.pc = ms->fault_pc;
    r.fault = fault;
    r.addr = ms->fault_addr;
    copy_bytes(b->data[b->active] + off, &r, sizeof r);
    b->offset[b->active] = off + static_cast<uint32_t>(sizeof r);
  } else {
    bump(s->drops);
  }
  if (in_error || !st->error_probe) return;
  // The firing's context is the faulting probe's: keep it for the ECBs after.
  const Probe* probe = ms->probe;
  const FireArgs* fa = ms->fa;
  const uint64_t valid = ms->locals_valid;
  FireArgs efa;
  efa.args[1] = epid;
  efa.args[2] = where;
  efa.args[3] = ms->fault_pc == kFaultNoPc ? ~0ull : ms->fault_pc;
  efa.args[4] = fault;
  efa.args[5] = ms->fault_addr;
  efa.tid = fa->tid;
  efa.thread = fa->thread;
  efa.who = fa->who;
  dvm_prepare_firing(ms, st, s, st->error_probe, &efa);
  run_ecbs(st, s, st->error_probe, true);
  dvm_prepare_firing(ms, st, s, probe, fa);
  ms->locals_valid = valid;
}

void run_ecbs(State* st, Slot* s, const Probe* probe, bool in_error) {
  MState* ms = &s->ms;
  PrincipalBuffer* b = &s->buf;
  Ecb* const* ecbs = probe->ecbs;
  const uint32_t n = probe->necbs;
  for (uint32_t i = 0; i < n; i++) {
    const Ecb* e = ecbs[i];
    uint32_t where = 0;
    // Per-ECB prepare.
    dvm_prepare_ecb(ms, s, e->epid);
    if (e->predicate) {
      uint64_t ok = dif_exec(e->predicate, ms);
      if (ms->fault) goto fault;
      if (!ok) continue;
    }
    {
      uint8_t* rec = nullptr;
      uint32_t off = 0;
      if (e->record_size) {
        off = b->offset[b->active];
        if (e->record_size > b->size - off) {
          bump(s->drops);
          continue;
        }
        rec = b->data[b->active] + off;
        auto* h = reinterpret_cast<RecordHeader*>(rec);
        h->epid = e->epid;
        h->size = e->record_size;
      }
      const Action* acts = e->actions;
      for (uint32_t k = 0; k < e->nactions; k++) {
        if (!run_action(ms, &acts[k], rec)) {
          where = k + 1;
          goto fault;
        }
      }
      if (e->record_size) b->offset[b->active] = off + e->record_size;
      bump(s->ecb_fired);
      continue;
    }
  fault:
    report_fault(st, s, e->epid, where, in_error);
  }
}
}  // namespace

void dvm_fire_locked(State* st, const Probe* probe, const FireArgs* fa, uint32_t slot_index) {
  Slot* s = &st->slots[slot_index];
  // VM prepare.
  dvm_prepare_firing(&s->ms, st, s, probe, fa);
  bump(s->fired);
  run_ecbs(st, s, probe, false);
}

void dvm_buffer_switch_locked(State* st, uint32_t slot_index, const uint8_t** data, uint32_t* len) {
  PrincipalBuffer* b = &st->slots[slot_index].buf;
  uint32_t old = b->active;
  b->active = old ^ 1u;
  b->offset[b->active] = 0;
  *data = b->data[old];
  *len = b->offset[old];
}

void dvm_buffer_switch(State* st, uint32_t slot_index, const uint8_t** data, uint32_t* len) {
  Slot* s = &st->slots[slot_index];
  s->lock->lock();
  dvm_buffer_switch_locked(st, slot_index, data, len);
  s->lock->unlock();
}

}  // namespace tbdvm
