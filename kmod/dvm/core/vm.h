// D-VM machine state, ECBs, buffers and the interpreter (freestanding).
//
// Ownership: the runtime (user space) allocates every array below and hands
// pointers in; nothing here allocates.  A "slot" plays the role of a CPU in
// DTrace: a firing takes its slot's lock for its whole duration (DTrace turns
// interrupts off instead), owns the slot's scratch space, principal buffer and
// aggregation buffer, and the consumer switches buffers under the same lock.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <atomic>

#include "dif.h"  // beside it: the module and user space build it from here

namespace tbdvm {

// Services the host provides; every field must be set (the runtime has
// defaults).  Called only from built-in variables and subroutines.
struct Host {
  uint64_t (*timestamp)() = nullptr;      // monotonic ns
  uint64_t (*vtimestamp)() = nullptr;     // this thread's on-CPU ns
  uint64_t (*walltimestamp)() = nullptr;  // ns since the epoch
  uint64_t (*cpu)() = nullptr;
  // Copies user memory; returns false on a bad address (never faults).
  bool (*copyin)(void* dst, uint64_t src, uint64_t len) = nullptr;
  // Fills up to `max` return addresses of the calling thread; returns count.
  uint32_t (*stack)(uint64_t* pcs, uint32_t max) = nullptr;
  uint64_t pid = 0, ppid = 0, uid = 0;  // this process's (a user-space session)
};

// Ticket spinlock: FIFO, so the consumer's buffer switch is not starved by
// a producer that re-takes the lock in a tight loop.  try_lock (signal
// handlers) succeeds only when nobody holds or waits for it.
struct SpinLock {
  std::atomic<uint32_t> next{0};
  std::atomic<uint32_t> owner{0};
  bool try_lock() {
    uint32_t o = owner.load(std::memory_order_acquire);
    uint32_t n = o;
    return next.compare_exchange_strong(n, o + 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void lock() {
    uint32_t t = next.fetch_add(1, std::memory_order_relaxed);
    while (owner.load(std::memory_order_acquire) != t) __builtin_ia32_pause();
  }
  void unlock() { owner.store(owner.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
};

// ---- dynamic variable space (thread-locals and associative arrays) --------
constexpr uint32_t kDynKeyMax = 128;  // encoded key bytes per chunk

struct DynChunk {
  uint32_t next;  // chunk index + 1, 0 = end
  uint32_t hash;
  uint32_t keylen;
  uint32_t pad;
  uint8_t key[kDynKeyMax];
  // followed by strsize value bytes (chunk_size() bytes in all)
};

struct DynvarSpace {
  uint8_t* chunks = nullptr;  // nchunks * chunk_bytes
  uint32_t chunk_bytes = 0;
  uint32_t nchunks = 0;
  uint32_t* buckets = nullptr;  // nbuckets (power of two), chunk index + 1
  uint32_t nbuckets = 0;
  uint32_t free_head = 0;  // chunk index + 1
  uint32_t in_use = 0;
  SpinLock lock;
};
uint32_t dynvar_chunk_bytes(uint32_t strsize);
// chunks/buckets are caller memory; nbuckets must be a power of two.
void dynvar_init(DynvarSpace* d, uint8_t* chunks, uint32_t chunk_bytes, uint32_t nchunks, uint32_t* buckets,
                 uint32_t nbuckets);

// ---- principal buffers ------------------------------------------------------
// Record: u32 epid, u32 size (bytes incl. header), then action data (8-aligned).
struct RecordHeader {
  uint32_t epid;
  uint32_t size;
};
// A fault leaves an error record (what DTrace's ERROR ECB of the consumer
// records): the consumer reports it as dtrace(1) does.
constexpr uint32_t kEpidError = 0xffffffffu;
constexpr uint32_t kFaultNoPc = 0xffffffffu;
struct ErrorRecord {
  RecordHeader h;  // epid kEpidError, size sizeof(ErrorRecord)
  uint32_t epid;   // the ECB that faulted
  uint32_t where;  // 0: its predicate, k: its action #k
  uint32_t pc;     // DIF offset (instruction index), kFaultNoPc: not in DIF
  uint32_t fault;  // Fault
  uint64_t addr;   // the illegal address or value
};
static_assert(sizeof(ErrorRecord) == 32, "error record is 32 bytes");

struct PrincipalBuffer {
  uint8_t* data[2] = {nullptr, nullptr};
  uint32_t size = 0;  // bytes per half
  uint32_t offset[2] = {0, 0};
  uint32_t active = 0;
};

// ---- aggregation buffers ----------------------------------------------------
enum AggKind : uint16_t {
  kAggCount = 1,
  kAggSum,
  kAggMin,
  kAggMax,
  kAggAvg,
  kAggQuantize,
  kAggLquantize,
  kAggStddev,  // values: count, sum, sum of squares (128 bits: low, high word)
  // llquantize(x, factor, low, high, nsteps): lq_base = factor, lq_limit =
  // low | high << 32 (llquantize_limit() packs them), lq_step = nsteps.
  kAggLlquantize,
  kAggKindEnd
};
constexpr uint32_t kAggMaxBuckets = 4098;   // lquantize/llquantize, under- and overflow included
constexpr uint32_t kQuantizeBuckets = 127;  // 63 negative, zero, 63 positive
constexpr uint32_t kQuantizeZero = 63;

struct AggEntry {
  uint32_t next;  // offset + 1 of next entry in chain
  uint32_t hash;
  uint32_t agg_id;
  uint16_t keylen;  // encoded key bytes (multiple of 8)
  uint16_t nvals;   // int64 values after the key
  // key bytes, then nvals int64
};

constexpr uint32_t kAggNoKeyCache = 64;

struct AggBuffer {
  // Entry offset + 1 of key-less aggregations (agg_id < 64): @x = count()
  // skips the hash lookup.
  uint32_t nokey[kAggNoKeyCache] = {};
  uint8_t* arena = nullptr;
  uint32_t size = 0;
  uint32_t used = 0;
  uint32_t* buckets = nullptr;
  uint32_t nbuckets = 0;  // power of two
  uint32_t nentries = 0;
};
uint32_t agg_nvals(uint16_t kind, int64_t lq_base, int64_t lq_limit, int64_t lq_step);
constexpr uint32_t kAggKeyMax = 512;        // encoded key bytes of one entry
constexpr uint32_t kAggDead = 0xffffffffu;  // agg_id of an entry trunc() unlinked
// Consumer side (clear, trunc), with the slot's firings excluded (its lock
// held, or interrupts off on its CPU).  Aggregation agg_id's entries (with
// `key`, only the entry of that encoded key): clear sets their values back
// to where a new entry starts (min INT64_MAX, max INT64_MIN, else 0);
// unlink (trunc) takes them out of the table instead, so a firing makes a
// new one (the arena bytes are not reused; the entry's agg_id becomes
// kAggDead).  Returns the entries changed.
uint32_t dvm_agg_reset(AggBuffer* a, uint32_t agg_id, uint16_t agg_kind, const uint8_t* key, uint32_t keylen,
                       bool unlink);
int64_t* agg_values(AggEntry* e);
const int64_t* agg_values(const AggEntry* e);
uint32_t quantize_bucket(int64_t v);
int64_t quantize_bucket_min(uint32_t bucket);
// llquantize: log-linear buckets.  Bucket 0 holds values below factor^low;
// each order of magnitude k in low..high spans [factor^k, factor^(k+1)) in
// steps of factor^(k+1) / min(nsteps, factor^(k+1)); the last bucket holds
// values from factor^(high+1).  agg_nvals() is 0 for parameters dtrace
// refuses (factor < 2, high < low, nsteps not a multiple of factor or below
// it, nsteps not dividing a power of factor, factor^(high+1) beyond 63 bits).
inline int64_t llquantize_limit(int64_t low, int64_t high) {
  return static_cast<int64_t>(static_cast<uint64_t>(low) | static_cast<uint64_t>(high) << 32);
}
uint32_t llquantize_bucket(int64_t factor, int64_t low_high, int64_t nsteps, int64_t v);
int64_t llquantize_bucket_min(int64_t factor, int64_t low_high, int64_t nsteps, uint32_t bucket);

// ---- ECBs -------------------------------------------------------------------
enum ActionKind : uint16_t {
  kActDifExpr = 1,  // evaluate for side effects (assignments)
  kActTrace,        // record value (8 bytes) or string (strsize bytes)
  kActTracemem,     // record `size` bytes from the address the value gives
  kActPrintf,       // one record per argument; format kept by the consumer
  kActStack,        // record `size / 8` return addresses of the firing thread
  kActAggregate,    // aggregation `agg_kind` keyed by `keys`
  kActExit,         // record the exit status; the consumer stops
};

struct Action {
  uint16_t kind = 0;
  uint16_t agg_kind = 0;
  const Program* value = nullptr;        // may be null (count, stack)
  const Program* const* keys = nullptr;  // aggregation keys
  uint32_t nkeys = 0;
  uint32_t agg_id = 0;
  uint32_t offset = 0;  // data offset in the record
  uint32_t size = 0;    // data bytes in the record
  int64_t lq_base = 0, lq_limit = 0, lq_step = 0;
  uint32_t format_id = 0;  // printf: consumer's format table index
  uint32_t arg_index = 0;  // printf: argument number
};

struct Ecb {
  uint32_t epid = 0;
  const Program* predicate = nullptr;
  const Action* actions = nullptr;
  uint32_t nactions = 0;
  uint32_t record_size = 0;  // 0: nothing goes to the principal buffer
};

struct Probe {
  uint32_t id = 0;
  const char* provider = "";
  const char* module = "";
  const char* function = "";
  const char* name = "";
  // The four strings above live in this one block so D can read them.
  const char* names = nullptr;
  uint32_t names_len = 0;
  Ecb* const* ecbs = nullptr;
  uint32_t necbs = 0;
};

// Extra memory a firing may read (payload handed over by the probe site).
struct Region {
  uint64_t base = 0;
  uint64_t len = 0;
};

// Who fired, where that varies per firing (a probe in the kernel fires in
// any process).  Without one (a user-space session traces its own process)
// pid, ppid, uid and execname are the State's and errno is 0.
constexpr uint32_t kFireExecnameLen = 16;  // the kernel's TASK_COMM_LEN
struct Who {
  uint64_t pid = 0, ppid = 0, uid = 0;
  const char* execname = nullptr;  // kFireExecnameLen readable bytes, NUL-terminated
  uint64_t errno_value = 0;        // errno: a syscall return probe's error, else 0
};

// Per-firing context.
struct FireArgs {
  uint64_t args[kMaxArgs] = {};
  Region region;
  uint64_t tid = 0;
  uint64_t thread = 0;       // curthread: the runtime's per-thread block
  const Who* who = nullptr;  // one pointer on the user-space probe path
};

struct TupleEntry {
  uint64_t value;
  uint64_t size;  // 0: by value; kTupleString: NUL-terminated string; else bytes
};
constexpr uint64_t kTupleString = ~0ull;

struct Slot;
struct State;

// Machine state of one firing; lives in the slot (the slot lock is held).
struct MState {
  State* state;
  const Program* prog;  // program running now (its strtab is readable)
  Slot* slot;
  const Probe* probe;
  const FireArgs* fa;
  uint32_t epid;
  bool have_timestamp;
  uint64_t timestamp;
  uint64_t locals[kMaxLocals];
  uint64_t locals_valid;  // bit per clause-local assigned this firing
  TupleEntry tuple[kMaxTuple];
  uint32_t ntuple;
  uint32_t fault;
  uint32_t fault_pc;  // the faulting instruction's index, kFaultNoPc outside DIF
  uint64_t fault_addr;
  uint64_t rand_state;
};

struct Slot {
  // Held for a whole firing and by the consumer's buffer switch.  Points at
  // memory that outlives the State (the runtime keeps process-wide locks so a
  // site can take the lock before it looks at its binding).
  SpinLock* lock = nullptr;
  PrincipalBuffer buf;
  AggBuffer agg;
  uint8_t* scratch = nullptr;
  uint32_t scratch_size = 0;
  uint32_t scratch_top = 0;
  MState ms;
  // Counters read by the consumer (relaxed loads).
  std::atomic<uint64_t> fired{0};       // probe firings handled in this slot
  std::atomic<uint64_t> ecb_fired{0};   // ECBs whose actions all completed
  std::atomic<uint64_t> drops{0};       // principal buffer full
  std::atomic<uint64_t> agg_drops{0};   // aggregation buffer full
  std::atomic<uint64_t> busy_drops{0};  // slot busy (re-entered from a signal)
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> faults[kFaultCount] = {};
} __attribute__((aligned(64)));

struct State {
  Host host;
  uint32_t strsize = 256;
  Slot* slots = nullptr;
  uint32_t nslots = 0;
  DynvarSpace dyn;
  uint64_t* gvals = nullptr;  // kMaxGlobals scalars
  uint8_t* gstr = nullptr;    // kMaxGlobals * strsize by-ref storage
  char execname[64] = {};
  // Set by the exit() action on the probe path, so a driver can stop firing
  // before the consumer has read the record.
  std::atomic<bool> exit_requested{false};
  // dtrace:::ERROR, when a clause enabled it: fires (on the faulting slot,
  // arg1 = epid, arg2 = where, arg3 = DIF offset or -1, arg4 = fault,
  // arg5 = address) after a fault's error record; a fault in its own clauses
  // is only counted.
  const Probe* error_probe = nullptr;
  // Read-only tables the ECBs need (probe name strings live in the probes).
};

// ---- entry points -----------------------------------------------------------
// Runs `p`; returns its result.  On a fault ms->fault is set and 0 returned.
// The two prepare stages of a firing (the model's C_vm_prepare and
// C_ecb_prepare), shared by the probe path, the cost benchmarks and tests.
inline void dvm_prepare_firing(MState* ms, State* st, Slot* slot, const Probe* probe, const FireArgs* fa) {
  ms->state = st;
  ms->slot = slot;
  ms->probe = probe;
  ms->fa = fa;
  ms->prog = nullptr;
  ms->have_timestamp = false;
  ms->locals_valid = 0;
}
inline void dvm_prepare_ecb(MState* ms, Slot* slot, uint32_t epid) {
  ms->epid = epid;
  ms->fault = kFaultNone;
  ms->ntuple = 0;
  slot->scratch_top = 0;
}

uint64_t dif_exec(const Program* p, MState* ms);

// Readable range check used by loads, string reads and tracemem.
bool dvm_can_load(const MState* ms, uint64_t addr, uint64_t len);
// Bytes readable from addr to the end of its range (0 = not readable).
uint64_t dvm_readable_extent(const MState* ms, uint64_t addr);
// Bounded strlen over readable memory; sets a fault on a bad address.
uint64_t dvm_strlen(MState* ms, uint64_t addr);

// The probe path: runs every ECB of `probe` in slot `slot_index`.
// `in_signal`: do not spin on a busy slot (count a busy drop instead).
void dvm_fire(State* st, const Probe* probe, const FireArgs* fa, uint32_t slot_index, bool in_signal);
// Same, with the slot's lock already held by the caller.
void dvm_fire_locked(State* st, const Probe* probe, const FireArgs* fa, uint32_t slot_index);

// Consumer side (not on the probe path).
// Switches slot's principal buffer; returns the bytes of the now-inactive half
// through *data / *len (valid until the next switch).
// It spins on the slot's lock: where the consumer can share a CPU with a
// firing thread (user space), take the lock with a wait that yields and call
// dvm_buffer_switch_locked, or a consumer that preempted the lock's holder
// spins out its whole time slice.
void dvm_buffer_switch(State* st, uint32_t slot_index, const uint8_t** data, uint32_t* len);
// Same, with the slot's lock already held by the caller.
void dvm_buffer_switch_locked(State* st, uint32_t slot_index, const uint8_t** data, uint32_t* len);

// Verification result.
struct VerifyError {
  uint32_t pc = 0;
  const char* rule = nullptr;  // nullptr = program accepted
};
struct VerifyWork {
  uint8_t reach[kMaxInsns];
  uint8_t min_depth[kMaxInsns];
  uint8_t max_depth[kMaxInsns];
};
// `work` is caller memory (about 24 KB) so the verifier allocates nothing.
VerifyError dif_verify(const Program* p, VerifyWork* work);

}  // namespace tbdvm
