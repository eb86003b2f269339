// A D-VM State built by hand (no runtime), for interpreter/verifier tests.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kmod/dvm/core/vm.h"
#include "tracers/dvm/one_slot.h"

namespace tbdvm::test {

inline Insn I(uint8_t op, uint8_t rd = 0, uint8_t r1 = 0, uint8_t r2 = 0, uint32_t imm = 0) {
  return Insn{op, rd, r1, r2, imm};
}

inline uint64_t fake_time() { return 123456789; }
inline uint64_t fake_vtime() { return 42; }
inline uint64_t fake_wall() { return 1700000000000000000ull; }
inline uint64_t fake_cpu() { return 1; }
// copyin from a test-owned window only; anything else "faults".
inline const uint8_t* g_user_mem = nullptr;
inline size_t g_user_len = 0;
inline bool fake_copyin(void* dst, uint64_t src, uint64_t len) {
  uint64_t base = reinterpret_cast<uint64_t>(g_user_mem);
  if (src < base || len > g_user_len || src - base > g_user_len - len) return false;
  std::memcpy(dst, reinterpret_cast<const void*>(src), len);
  return true;
}
inline uint32_t fake_stack(uint64_t* pcs, uint32_t max) {
  for (uint32_t i = 0; i < max && i < 3; i++) pcs[i] = 0x1000 + i;
  return max < 3 ? max : 3;
}

// The interpreter tests' State: one slot of small buffers, fake host
// functions (fixed clocks, copyin from g_user_mem only), probe 9.
struct VmFixture : OneSlot {
  std::vector<Program> progs;  // keep programs alive
  std::vector<std::vector<Insn>> code;
  std::vector<std::vector<uint64_t>> ints;
  std::vector<std::string> strs;

  explicit VmFixture(uint32_t nchunks = 64)
      : OneSlot({.strsize = 64,
                 .scratch = 4096,
                 .buf_half = 4096,
                 .agg = 1 << 16,
                 .agg_buckets = 64,
                 .dyn_chunks = nchunks},
                std::string("prov\0mod\0func\0name\0", 19), "vmtest") {
    st.host.timestamp = fake_time;
    st.host.vtimestamp = fake_vtime;
    st.host.walltimestamp = fake_wall;
    st.host.cpu = fake_cpu;
    st.host.copyin = fake_copyin;
    st.host.stack = fake_stack;
    st.host.pid = 777;
    probe.id = 9;
    fa.tid = 1001;
    fa.thread = 0xabc;
    for (uint32_t i = 0; i < kMaxArgs; i++) fa.args[i] = 100 + i;
    reset_ms();
    progs.reserve(256);
    code.reserve(256);
    ints.reserve(256);
    strs.reserve(256);
  }

  void reset_ms() { begin_firing(5); }

  const Program* make(std::vector<Insn> c, std::vector<uint64_t> in = {}, std::string s = {},
                      bool returns_string = false) {
    code.push_back(std::move(c));
    ints.push_back(std::move(in));
    strs.push_back(std::move(s));
    Program p;
    p.insns = code.back().data();
    p.ninsns = static_cast<uint32_t>(code.back().size());
    p.inttab = ints.back().empty() ? nullptr : ints.back().data();
    p.nints = static_cast<uint32_t>(ints.back().size());
    p.strtab = strs.back().empty() ? nullptr : strs.back().data();
    p.strtab_len = static_cast<uint32_t>(strs.back().size());
    p.returns_string = returns_string;
    progs.push_back(p);
    return &progs.back();
  }

  const char* verify(const Program* p) {
    static VerifyWork w;
    return dif_verify(p, &w).rule;
  }

  // Verifies (must pass) and runs with fresh per-firing state.
  uint64_t run(std::vector<Insn> c, std::vector<uint64_t> in = {}, std::string s = {}) {
    const Program* p = make(std::move(c), std::move(in), std::move(s));
    const char* rule = verify(p);
    EXPECT_EQ(rule, nullptr) << rule;
    reset_ms();
    return dif_exec(p, &slot.ms);
  }
  // Runs keeping clause-local/scratch state (several programs, one firing).
  uint64_t run_more(std::vector<Insn> c, std::vector<uint64_t> in = {}, std::string s = {}) {
    const Program* p = make(std::move(c), std::move(in), std::move(s));
    const char* rule = verify(p);
    EXPECT_EQ(rule, nullptr) << rule;
    slot.ms.fault = kFaultNone;
    slot.ms.ntuple = 0;
    return dif_exec(p, &slot.ms);
  }
  uint32_t fault() const { return slot.ms.fault; }
};

}  // namespace tbdvm::test
