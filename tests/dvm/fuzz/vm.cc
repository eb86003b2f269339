// libFuzzer target: verifier + interpreter.  Bytes become a DIF program
// (instructions, integer table, string table); whatever the verifier accepts
// must run without crashing, as a predicate and as actions of an ECB.
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/dvm/fuzz/input.h"
#include "kmod/dvm/core/vm.h"
#include "tracers/dvm/one_slot.h"

namespace {
using namespace tbdvm;

uint64_t t_now() { return 1; }
uint64_t t_cpu() { return 0; }
bool t_copyin(void* dst, uint64_t, uint64_t len) {
  std::memset(dst, 'u', len);
  return len < 4096;
}
uint32_t t_stack(uint64_t* pcs, uint32_t max) {
  for (uint32_t i = 0; i < max; i++) pcs[i] = i;
  return max;
}

// Small buffers, so that the fuzzer reaches their limits (drops, full
// arenas, no dynamic-variable chunk left) quickly.
struct World : OneSlot {
  uint8_t region[64];
  World()
      : OneSlot({.strsize = 32, .scratch = 2048, .buf_half = 4096, .agg = 16384, .agg_buckets = 16, .dyn_chunks = 16},
                std::string("p\0m\0f\0n\0", 8), "") {
    st.host.timestamp = t_now;
    st.host.vtimestamp = t_now;
    st.host.walltimestamp = t_now;
    st.host.cpu = t_cpu;
    st.host.copyin = t_copyin;
    st.host.stack = t_stack;
    for (int i = 0; i < 64; i++) region[i] = static_cast<uint8_t>(i);
    fa.region = Region{reinterpret_cast<uint64_t>(region), 64};
    fa.args[0] = reinterpret_cast<uint64_t>(region);
    fa.args[1] = 64;
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in;
  if (!fuzz::decode(data, size, &in)) return 0;
  const uint8_t kinds = in.kinds;
  Program p;
  p.insns = in.insns.data();
  p.ninsns = static_cast<uint32_t>(in.insns.size());
  p.inttab = in.ints.empty() ? nullptr : in.ints.data();
  p.nints = static_cast<uint32_t>(in.ints.size());
  p.strtab = in.strtab.empty() ? nullptr : in.strtab.data();
  p.strtab_len = static_cast<uint32_t>(in.strtab.size());
  p.returns_string = in.returns_string();
  static VerifyWork w;
  if (dif_verify(&p, &w).rule) return 0;
  static World* world = new World();
  World& W = *world;
  // Predicate + every action kind over the same program.
  Action acts[6];
  acts[0].kind = kActDifExpr;
  acts[0].value = &p;
  acts[1].kind = kActTrace;
  acts[1].value = &p;
  acts[1].offset = 8;
  acts[1].size = p.returns_string ? 32 : 8;
  acts[2].kind = kActTracemem;
  acts[2].value = &p;
  acts[2].offset = 40;
  acts[2].size = 16;
  acts[3].kind = kActStack;
  acts[3].offset = 56;
  acts[3].size = 16;
  const Program* keys[2] = {&p, &p};
  acts[4].kind = kActAggregate;
  acts[4].agg_kind = static_cast<uint16_t>(1 + (kinds >> 1) % 7);
  acts[4].value = &p;
  acts[4].keys = keys;
  acts[4].nkeys = (kinds >> 4) % 3;
  acts[4].lq_base = -10;
  acts[4].lq_limit = 50;
  acts[4].lq_step = 7;
  // One aggregation id per (function, key count), as a session assigns them.
  acts[4].agg_id = acts[4].agg_kind * 4 + acts[4].nkeys;
  acts[5].kind = kActExit;
  acts[5].value = &p;
  acts[5].offset = 72;
  acts[5].size = 8;
  Ecb e1, e2;
  e1.epid = 1;
  e1.predicate = (kinds & 0x80) ? &p : nullptr;
  e1.actions = acts;
  e1.nactions = 6;
  e1.record_size = 80;
  e2.epid = 2;
  e2.actions = acts + 4;
  e2.nactions = 1;
  Ecb* chain[2] = {&e1, &e2};
  W.probe.ecbs = chain;
  W.probe.necbs = 2;
  dvm_fire(&W.st, &W.probe, &W.fa, 0, false);
  const uint8_t* d;
  uint32_t len;
  dvm_buffer_switch(&W.st, 0, &d, &len);
  if (W.slot.agg.used > 12000) {  // keep the aggregation arena from filling for good
    W.slot.agg.used = 8;
    std::memset(W.slot.agg.nokey, 0, sizeof W.slot.agg.nokey);
    std::memset(W.aggbuckets.data(), 0, W.aggbuckets.size() * 4);
  }
  return 0;
}
