// Semantics of every D-VM opcode and every runtime fault.
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <functional>
#include <map>

#include "tests/dvm/vm_fixture.h"

namespace tbdvm::test {
namespace {

const uint64_t kVals[] = {0,
                          1,
                          2,
                          7,
                          63,
                          64,
                          0x7fffffffffffffffull,
                          0x8000000000000000ull,
                          0xffffffffffffffffull,
                          0xfffffffffffffff9ull /* -7 */,
                          12345678901ull};

// rd = a OP b through setx/setx/op/ret.
uint64_t alu(VmFixture& f, uint8_t op, uint64_t a, uint64_t b) {
  return f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpSetx, 2, 0, 0, 1), I(op, 3, 1, 2), I(kOpRet, 3)}, {a, b});
}

TEST(DvmOpcodes, LogicAndArithmetic) {
  VmFixture f;
  for (uint64_t a : kVals) {
    for (uint64_t b : kVals) {
      SCOPED_TRACE(testing::Message() << a << " op " << b);
      EXPECT_EQ(alu(f, kOpOr, a, b), a | b);
      EXPECT_EQ(alu(f, kOpXor, a, b), a ^ b);
      EXPECT_EQ(alu(f, kOpAnd, a, b), a & b);
      EXPECT_EQ(alu(f, kOpSll, a, b), a << (b & 63));
      EXPECT_EQ(alu(f, kOpSrl, a, b), a >> (b & 63));
      EXPECT_EQ(alu(f, kOpSra, a, b), static_cast<uint64_t>(static_cast<int64_t>(a) >> (b & 63)));
      EXPECT_EQ(alu(f, kOpAdd, a, b), a + b);
      EXPECT_EQ(alu(f, kOpSub, a, b), a - b);
      EXPECT_EQ(alu(f, kOpMul, a, b), a * b);
      if (b != 0) {
        EXPECT_EQ(alu(f, kOpUdiv, a, b), a / b);
        EXPECT_EQ(alu(f, kOpUrem, a, b), a % b);
        int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
        if (!(sa == LLONG_MIN && sb == -1)) {
          EXPECT_EQ(alu(f, kOpSdiv, a, b), static_cast<uint64_t>(sa / sb));
          EXPECT_EQ(alu(f, kOpSrem, a, b), static_cast<uint64_t>(sa % sb));
        } else {
          // Overflow wraps instead of trapping.
          EXPECT_EQ(alu(f, kOpSdiv, a, b), a);
          EXPECT_EQ(alu(f, kOpSrem, a, b), 0u);
        }
      }
      EXPECT_EQ(f.fault(), kFaultNone);
    }
    EXPECT_EQ(f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpNot, 2, 1), I(kOpRet, 2)}, {a}), ~a);
    EXPECT_EQ(f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpMov, 5, 1), I(kOpRet, 5)}, {a}), a);
  }
}

TEST(DvmOpcodes, SetxSetsNopRet) {
  VmFixture f;
  EXPECT_EQ(f.run({I(kOpNop), I(kOpSetx, 4, 0, 0, 2), I(kOpRet, 4)}, {1, 2, 0xdeadbeefcafeull}), 0xdeadbeefcafeull);
  std::string tab("ab\0hello\0", 9);
  uint64_t p = f.run({I(kOpSets, 1, 0, 0, 3), I(kOpRet, 1)}, {}, tab);
  EXPECT_STREQ(reinterpret_cast<const char*>(p), "hello");
  EXPECT_EQ(reinterpret_cast<const char*>(p), f.progs.back().strtab + 3);
  EXPECT_EQ(f.run({I(kOpRet, 0)}), 0u);  // %r0 reads 0
}

// cmp a,b ; bXX taken -> 1 else 0.
uint64_t branch(VmFixture& f, uint8_t cmp_op, uint8_t br, uint64_t a, uint64_t b) {
  return f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpSetx, 2, 0, 0, 1), I(cmp_op, 0, 1, cmp_op == kOpTst ? 0 : 2),
                I(br, 0, 0, 0, 6), I(kOpMov, 3, 0), I(kOpRet, 3), I(kOpSetx, 3, 0, 0, 2), I(kOpRet, 3)},
               {a, b, 1});
}

TEST(DvmOpcodes, CompareAndBranches) {
  VmFixture f;
  for (uint64_t a : kVals) {
    for (uint64_t b : kVals) {
      int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
      SCOPED_TRACE(testing::Message() << a << " vs " << b);
      EXPECT_EQ(branch(f, kOpCmp, kOpBe, a, b), a == b);
      EXPECT_EQ(branch(f, kOpCmp, kOpBne, a, b), a != b);
      EXPECT_EQ(branch(f, kOpCmp, kOpBg, a, b), sa > sb);
      EXPECT_EQ(branch(f, kOpCmp, kOpBgu, a, b), a > b);
      EXPECT_EQ(branch(f, kOpCmp, kOpBge, a, b), sa >= sb);
      EXPECT_EQ(branch(f, kOpCmp, kOpBgeu, a, b), a >= b);
      EXPECT_EQ(branch(f, kOpCmp, kOpBl, a, b), sa < sb);
      EXPECT_EQ(branch(f, kOpCmp, kOpBlu, a, b), a < b);
      EXPECT_EQ(branch(f, kOpCmp, kOpBle, a, b), sa <= sb);
      EXPECT_EQ(branch(f, kOpCmp, kOpBleu, a, b), a <= b);
      EXPECT_EQ(branch(f, kOpCmp, kOpBa, a, b), 1u);
    }
    int64_t sa = static_cast<int64_t>(a);
    EXPECT_EQ(branch(f, kOpTst, kOpBe, a, 0), a == 0);
    EXPECT_EQ(branch(f, kOpTst, kOpBne, a, 0), a != 0);
    EXPECT_EQ(branch(f, kOpTst, kOpBl, a, 0), sa < 0);
    EXPECT_EQ(branch(f, kOpTst, kOpBge, a, 0), sa >= 0);
  }
}

TEST(DvmOpcodes, StringCompare) {
  VmFixture f;
  std::string tab("abc\0abd\0ab\0abc\0", 15);
  struct Case {
    uint32_t a, b;
    int expect;
  } cases[] = {{0, 4, -1}, {4, 0, 1}, {0, 11, 0}, {8, 0, -1}, {0, 8, 1}, {8, 8, 0}};
  for (auto c : cases) {
    auto run = [&](uint8_t br) {
      return f.run({I(kOpSets, 1, 0, 0, c.a), I(kOpSets, 2, 0, 0, c.b), I(kOpScmp, 0, 1, 2), I(br, 0, 0, 0, 6),
                    I(kOpMov, 3, 0), I(kOpRet, 3), I(kOpSetx, 3, 0, 0, 0), I(kOpRet, 3)},
                   {1}, tab);
    };
    EXPECT_EQ(run(kOpBe), c.expect == 0);
    EXPECT_EQ(run(kOpBl), c.expect < 0);
    EXPECT_EQ(run(kOpBg), c.expect > 0);
    EXPECT_EQ(run(kOpBlu), c.expect < 0);
  }
}

TEST(DvmOpcodes, MemoryLoadsFromRegion) {
  VmFixture f;
  alignas(8) uint8_t buf[16] = {0x80, 0xff, 0x01, 0x02, 0xfe, 0xff, 0xff, 0xff,
                                0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  f.fa.region = Region{reinterpret_cast<uint64_t>(buf), sizeof buf};
  auto ld = [&](uint8_t op, uint64_t off) {
    return f.run({I(kOpSetx, 1, 0, 0, 0), I(op, 2, 1), I(kOpRet, 2)}, {reinterpret_cast<uint64_t>(buf) + off});
  };
  int8_t s8;
  int16_t s16;
  int32_t s32;
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  std::memcpy(&s8, buf, 1);
  std::memcpy(&s16, buf, 2);
  std::memcpy(&s32, buf + 4, 4);
  std::memcpy(&u8, buf, 1);
  std::memcpy(&u16, buf, 2);
  std::memcpy(&u32, buf + 4, 4);
  std::memcpy(&u64, buf + 8, 8);
  EXPECT_EQ(ld(kOpLdsb, 0), static_cast<uint64_t>(static_cast<int64_t>(s8)));
  EXPECT_EQ(ld(kOpLdsh, 0), static_cast<uint64_t>(static_cast<int64_t>(s16)));
  EXPECT_EQ(ld(kOpLdsw, 4), static_cast<uint64_t>(static_cast<int64_t>(s32)));
  EXPECT_EQ(ld(kOpLdub, 0), u8);
  EXPECT_EQ(ld(kOpLduh, 0), u16);
  EXPECT_EQ(ld(kOpLduw, 4), u32);
  EXPECT_EQ(ld(kOpLdx, 8), u64);
  EXPECT_EQ(f.fault(), kFaultNone);
}

TEST(DvmOpcodes, StoresIntoScratch) {
  VmFixture f;
  // p = alloca(16); stx; ldx back; stb/sth/stw overwrite bytes.
  const std::vector<Insn> prologue = {I(kOpSetx, 1, 0, 0, 0), I(kOpFlushts), I(kOpPushtv, 0, 1),
                                      I(kOpCall, 2, 0, 0, kSubrAlloca), I(kOpSetx, 3, 0, 0, 1)};
  auto with = [&](std::vector<Insn> body) {
    std::vector<Insn> c = prologue;
    c.insert(c.end(), body.begin(), body.end());
    return f.run(c, {16, 0x1122334455667788ull});
  };
  EXPECT_EQ(with({I(kOpStx, 2, 3), I(kOpLdx, 4, 2), I(kOpRet, 4)}), 0x1122334455667788ull);
  EXPECT_EQ(with({I(kOpStw, 2, 3), I(kOpLduw, 4, 2), I(kOpRet, 4)}), 0x55667788u);
  EXPECT_EQ(with({I(kOpSth, 2, 3), I(kOpLduh, 4, 2), I(kOpRet, 4)}), 0x7788u);
  EXPECT_EQ(with({I(kOpStb, 2, 3), I(kOpLdub, 4, 2), I(kOpRet, 4)}), 0x88u);
  EXPECT_EQ(f.fault(), kFaultNone);
}

TEST(DvmOpcodes, BuiltinVariables) {
  VmFixture f;
  auto bi = [&](uint32_t id) { return f.run({I(kOpLdgs, 1, 0, 0, id), I(kOpRet, 1)}); };
  for (uint32_t i = 0; i < kMaxArgs; i++) EXPECT_EQ(bi(kVarArg0 + i), 100u + i);
  EXPECT_EQ(bi(kVarTimestamp), fake_time());
  EXPECT_EQ(bi(kVarVtimestamp), fake_vtime());
  EXPECT_EQ(bi(kVarWalltimestamp), fake_wall());
  EXPECT_EQ(bi(kVarPid), 777u);
  EXPECT_EQ(bi(kVarTid), 1001u);
  EXPECT_EQ(bi(kVarCpu), 1u);
  EXPECT_EQ(bi(kVarId), 9u);
  EXPECT_EQ(bi(kVarEpid), 5u);
  EXPECT_EQ(bi(kVarCurthread), 0xabcu);
  EXPECT_STREQ(reinterpret_cast<const char*>(bi(kVarProbeprov)), "prov");
  EXPECT_STREQ(reinterpret_cast<const char*>(bi(kVarProbemod)), "mod");
  EXPECT_STREQ(reinterpret_cast<const char*>(bi(kVarProbefunc)), "func");
  EXPECT_STREQ(reinterpret_cast<const char*>(bi(kVarProbename)), "name");
  EXPECT_STREQ(reinterpret_cast<const char*>(bi(kVarExecname)), "vmtest");
  // Built-in strings are readable by D (strlen goes through the load checks).
  EXPECT_EQ(f.run({I(kOpLdgs, 1, 0, 0, kVarProbefunc), I(kOpFlushts), I(kOpPushtv, 0, 1),
                   I(kOpCall, 2, 0, 0, kSubrStrlen), I(kOpRet, 2)}),
            4u);
  EXPECT_EQ(f.fault(), kFaultNone);
}

TEST(DvmOpcodes, GlobalVariables) {
  VmFixture f;
  f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpStgs, 0, 1, 0, 0x105), I(kOpRet, 0)}, {99});
  EXPECT_EQ(f.run({I(kOpLdgs, 2, 0, 0, 0x105), I(kOpRet, 2)}), 99u);
  EXPECT_EQ(f.gvals[5], 99u);
  // By reference: the string is copied into the variable's storage.
  std::string tab("hello\0", 6);
  f.run({I(kOpSets, 1, 0, 0, 0), I(kOpStgs, 0, 1, 0, 0x106 | kVarRef), I(kOpRet, 0)}, {}, tab);
  uint64_t p = f.run({I(kOpLdgs, 2, 0, 0, 0x106 | kVarRef), I(kOpRet, 2)});
  EXPECT_STREQ(reinterpret_cast<const char*>(p), "hello");
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(p), f.gstr.data() + 6 * f.st.strsize);
}

TEST(DvmOpcodes, ThreadLocalVariables) {
  VmFixture f;
  f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpStts, 0, 1, 0, 3), I(kOpRet, 0)}, {55});
  EXPECT_EQ(f.st.dyn.in_use, 1u);
  EXPECT_EQ(f.run({I(kOpLdts, 2, 0, 0, 3), I(kOpRet, 2)}), 55u);
  f.fa.tid = 2002;  // another thread sees nothing
  EXPECT_EQ(f.run({I(kOpLdts, 2, 0, 0, 3), I(kOpRet, 2)}), 0u);
  f.fa.tid = 1001;
  // Storing 0 frees the variable.
  f.run({I(kOpStts, 0, 0, 0, 3), I(kOpRet, 0)});
  EXPECT_EQ(f.st.dyn.in_use, 0u);
  EXPECT_EQ(f.run({I(kOpLdts, 2, 0, 0, 3), I(kOpRet, 2)}), 0u);
  // By reference.
  std::string tab("tls-string\0", 11);
  f.run({I(kOpSets, 1, 0, 0, 0), I(kOpStts, 0, 1, 0, 4 | kVarRef), I(kOpRet, 0)}, {}, tab);
  uint64_t p = f.run({I(kOpLdts, 2, 0, 0, 4 | kVarRef), I(kOpRet, 2)});
  EXPECT_STREQ(reinterpret_cast<const char*>(p), "tls-string");
}

TEST(DvmOpcodes, ClauseLocalVariables) {
  VmFixture f;
  EXPECT_EQ(f.run({I(kOpLdls, 1, 0, 0, 7), I(kOpRet, 1)}), 0u);  // unset reads 0
  f.reset_ms();
  f.run_more({I(kOpSetx, 1, 0, 0, 0), I(kOpStls, 0, 1, 0, 7), I(kOpRet, 0)}, {31});
  // Visible to the next program of the same firing.
  EXPECT_EQ(f.run_more({I(kOpLdls, 1, 0, 0, 7), I(kOpRet, 1)}), 31u);
  std::string tab("local\0", 6);
  f.run_more({I(kOpSets, 1, 0, 0, 0), I(kOpStls, 0, 1, 0, 8 | kVarRef), I(kOpRet, 0)}, {}, tab);
  uint64_t p = f.run_more({I(kOpLdls, 1, 0, 0, 8 | kVarRef), I(kOpRet, 1)});
  EXPECT_STREQ(reinterpret_cast<const char*>(p), "local");
  f.reset_ms();  // a new firing starts with nothing
  EXPECT_EQ(f.run_more({I(kOpLdls, 1, 0, 0, 7), I(kOpRet, 1)}), 0u);
}

TEST(DvmOpcodes, AssociativeArraysAndTupleStack) {
  VmFixture f;
  std::string tab("key\0other\0", 10);
  // g[5, "key"] = 77
  f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpSets, 2, 0, 0, 0), I(kOpSetx, 3, 0, 0, 1), I(kOpFlushts), I(kOpPushtv, 0, 1),
         I(kOpPushtr, 0, 2), I(kOpStga, 0, 3, 0, 2), I(kOpRet, 0)},
        {5, 77}, tab);
  auto get = [&](uint64_t k, uint32_t soff, uint8_t op, uint32_t id) {
    return f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpSets, 2, 0, 0, soff), I(kOpFlushts), I(kOpPushtv, 0, 1),
                  I(kOpPushtr, 0, 2), I(op, 3, 0, 0, id), I(kOpRet, 3)},
                 {k}, tab);
  };
  EXPECT_EQ(get(5, 0, kOpLdga, 2), 77u);
  EXPECT_EQ(get(6, 0, kOpLdga, 2), 0u);
  EXPECT_EQ(get(5, 4, kOpLdga, 2), 0u);
  EXPECT_EQ(get(5, 0, kOpLdga, 3), 0u);  // other array
  f.fa.tid = 3003;
  EXPECT_EQ(get(5, 0, kOpLdga, 2), 77u);  // global: any thread
  // Thread-local array: only this thread.
  f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpSets, 2, 0, 0, 0), I(kOpSetx, 3, 0, 0, 1), I(kOpFlushts), I(kOpPushtv, 0, 1),
         I(kOpPushtr, 0, 2), I(kOpStta, 0, 3, 0, 2), I(kOpRet, 0)},
        {5, 88}, tab);
  EXPECT_EQ(get(5, 0, kOpLdta, 2), 88u);
  f.fa.tid = 1001;
  EXPECT_EQ(get(5, 0, kOpLdta, 2), 0u);
  // pushtr with an explicit size keys on the bytes.
  alignas(8) uint8_t blob[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  f.fa.region = Region{reinterpret_cast<uint64_t>(blob), sizeof blob};
  f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpSetx, 2, 0, 0, 1), I(kOpSetx, 3, 0, 0, 2), I(kOpFlushts), I(kOpPushtr, 0, 1, 2),
         I(kOpStga, 0, 3, 0, 9), I(kOpRet, 0)},
        {reinterpret_cast<uint64_t>(blob), 12, 4242});
  EXPECT_EQ(f.run({I(kOpSetx, 1, 0, 0, 0), I(kOpSetx, 2, 0, 0, 1), I(kOpFlushts), I(kOpPushtr, 0, 1, 2),
                   I(kOpLdga, 3, 0, 0, 9), I(kOpRet, 3)},
                  {reinterpret_cast<uint64_t>(blob), 12}),
            4242u);
  EXPECT_EQ(f.fault(), kFaultNone);
}

TEST(DvmOpcodes, Subroutines) {
  VmFixture f;
  std::string tab("hello\0, world\0", 14);
  EXPECT_EQ(f.run({I(kOpSets, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpCall, 2, 0, 0, kSubrStrlen), I(kOpRet, 2)},
                  {}, tab),
            5u);
  uint64_t j = f.run({I(kOpSets, 1), I(kOpSets, 2, 0, 0, 6), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpPushtv, 0, 2),
                      I(kOpCall, 3, 0, 0, kSubrStrjoin), I(kOpRet, 3)},
                     {}, tab);
  EXPECT_STREQ(reinterpret_cast<const char*>(j), "hello, world");
  // alloca returns zeroed, 8-aligned scratch.
  uint64_t a =
      f.run({I(kOpSetx, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpCall, 2, 0, 0, kSubrAlloca), I(kOpRet, 2)}, {24});
  EXPECT_EQ(a % 8, 0u);
  EXPECT_GE(a, reinterpret_cast<uint64_t>(f.scratch.data()));
  // bcopy(src, alloca(6), 6)
  uint64_t b = f.run(
      {I(kOpSetx, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpCall, 2, 0, 0, kSubrAlloca), I(kOpSets, 3), I(kOpFlushts),
       I(kOpPushtv, 0, 3), I(kOpPushtv, 0, 2), I(kOpPushtv, 0, 1), I(kOpCall, 4, 0, 0, kSubrBcopy), I(kOpRet, 2)},
      {6}, tab);
  EXPECT_STREQ(reinterpret_cast<const char*>(b), "hello");
  // copyin / copyinstr from "user" memory.
  static const char user[64] = "user-string";  // copyinstr reads up to strsize
  g_user_mem = reinterpret_cast<const uint8_t*>(user);
  g_user_len = sizeof user;
  uint64_t c = f.run({I(kOpSetx, 1), I(kOpSetx, 2, 0, 0, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpPushtv, 0, 2),
                      I(kOpCall, 3, 0, 0, kSubrCopyin), I(kOpRet, 3)},
                     {reinterpret_cast<uint64_t>(user), 4});
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(c), "user", 4), 0);
  uint64_t s =
      f.run({I(kOpSetx, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpCall, 3, 0, 0, kSubrCopyinstr), I(kOpRet, 3)},
            {reinterpret_cast<uint64_t>(user)});
  EXPECT_EQ(f.fault(), kFaultNone);
  EXPECT_STREQ(reinterpret_cast<const char*>(s), "user-string");
  // rand: varies.
  uint64_t r1 = f.run({I(kOpCall, 1, 0, 0, kSubrRand), I(kOpRet, 1)});
  uint64_t r2 = f.run({I(kOpCall, 1, 0, 0, kSubrRand), I(kOpRet, 1)});
  EXPECT_NE(r1, r2);
  EXPECT_EQ(f.fault(), kFaultNone);
}

// ---- runtime faults ---------------------------------------------------------
TEST(DvmFaults, DivisionByZero) {
  for (uint8_t op : {kOpSdiv, kOpUdiv, kOpSrem, kOpUrem}) {
    VmFixture f;
    EXPECT_EQ(alu(f, op, 10, 0), 0u);
    EXPECT_EQ(f.fault(), kFaultDivZero) << op_name(op);
  }
}

TEST(DvmFaults, BadLoadAddress) {
  VmFixture f;
  uint64_t outside = 0;  // a stack variable: valid memory, but not D's to read
  for (uint64_t addr : {uint64_t{0}, uint64_t{8}, reinterpret_cast<uint64_t>(&outside)}) {
    EXPECT_EQ(f.run({I(kOpSetx, 1), I(kOpLdx, 2, 1), I(kOpRet, 2)}, {addr}), 0u);
    EXPECT_EQ(f.fault(), kFaultBadAddr);
  }
  // Reading one byte past the region.
  alignas(8) uint8_t buf[8] = {};
  f.fa.region = Region{reinterpret_cast<uint64_t>(buf), 7};
  f.run({I(kOpSetx, 1), I(kOpLdx, 2, 1), I(kOpRet, 2)}, {reinterpret_cast<uint64_t>(buf)});
  EXPECT_EQ(f.fault(), kFaultBadAddr);
  // strlen of a pointer to nowhere.
  f.run({I(kOpSetx, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpCall, 2, 0, 0, kSubrStrlen), I(kOpRet, 2)}, {16});
  EXPECT_EQ(f.fault(), kFaultBadAddr);
}

TEST(DvmFaults, MisalignedLoadAndStoreOutsideScratch) {
  VmFixture f;
  alignas(8) uint8_t buf[16] = {};
  f.fa.region = Region{reinterpret_cast<uint64_t>(buf), 16};
  f.run({I(kOpSetx, 1), I(kOpLdx, 2, 1), I(kOpRet, 2)}, {reinterpret_cast<uint64_t>(buf) + 1});
  EXPECT_EQ(f.fault(), kFaultBadAlign);
  // Stores only go to allocated scratch, never to the region or elsewhere.
  f.run({I(kOpSetx, 1), I(kOpStx, 1, 1), I(kOpRet, 0)}, {reinterpret_cast<uint64_t>(buf)});
  EXPECT_EQ(f.fault(), kFaultBadAddr);
  EXPECT_EQ(buf[0], 0);
}

TEST(DvmFaults, ScratchExhausted) {
  VmFixture f;
  f.run({I(kOpSetx, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpCall, 2, 0, 0, kSubrAlloca), I(kOpRet, 2)}, {1u << 20});
  EXPECT_EQ(f.fault(), kFaultNoScratch);
}

TEST(DvmFaults, DynamicVariableSpaceFull) {
  VmFixture f(/*nchunks=*/2);
  auto store = [&](uint64_t key) {
    return f.run({I(kOpSetx, 1), I(kOpSetx, 2, 0, 0, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpStga, 0, 2, 0, 1),
                  I(kOpRet, 0)},
                 {key, 1});
  };
  store(1);
  EXPECT_EQ(f.fault(), kFaultNone);
  store(2);
  EXPECT_EQ(f.fault(), kFaultNone);
  store(3);
  EXPECT_EQ(f.fault(), kFaultDynvarFull);
}

TEST(DvmFaults, KeyTooLargeAndTupleOverflow) {
  VmFixture f;
  std::string big(60, 'x');
  std::string tab = big + '\0';
  // Three 60-byte string keys exceed the 128-byte dynamic key.
  f.run({I(kOpSets, 1), I(kOpSetx, 2), I(kOpFlushts), I(kOpPushtr, 0, 1), I(kOpPushtr, 0, 1), I(kOpPushtr, 0, 1),
         I(kOpStga, 0, 2, 0, 1), I(kOpRet, 0)},
        {1}, tab);
  EXPECT_EQ(f.fault(), kFaultKeyTooBig);
  // The verifier refuses 9 pushes; an unverified program faults at run time.
  std::vector<Insn> c;
  for (int i = 0; i < 9; i++) c.push_back(I(kOpPushtv, 0, 0));
  c.push_back(I(kOpRet));
  const Program* p = f.make(c);
  EXPECT_STREQ(f.verify(p), "tuple stack too deep");
  f.reset_ms();
  dif_exec(p, &f.slot.ms);
  EXPECT_EQ(f.fault(), kFaultTupleOverflow);
}

TEST(DvmFaults, CopyinFailure) {
  VmFixture f;
  g_user_mem = nullptr;
  g_user_len = 0;
  f.run({I(kOpSetx, 1), I(kOpSetx, 2, 0, 0, 1), I(kOpFlushts), I(kOpPushtv, 0, 1), I(kOpPushtv, 0, 2),
         I(kOpCall, 3, 0, 0, kSubrCopyin), I(kOpRet, 3)},
        {0x1000, 8});
  EXPECT_EQ(f.fault(), kFaultBadCopy);
}

// ---- the probe path: ECBs, faults abort one ECB, buffers, aggregations -----
struct EcbFixture : VmFixture {
  std::vector<Action> acts;
  Ecb ecbs[3];
  Ecb* chain[3];
};

TEST(DvmProbePath, FaultAbortsOnlyItsEcbAndCountsAnError) {
  VmFixture f;
  const Program* divzero = f.make({I(kOpSetx, 1), I(kOpUdiv, 2, 1, 0), I(kOpRet, 2)}, {1});
  const Program* val = f.make({I(kOpLdgs, 1, 0, 0, kVarArg0), I(kOpRet, 1)});
  Action bad[2];
  bad[0].kind = kActTrace;
  bad[0].value = val;
  bad[0].offset = 8;
  bad[0].size = 8;
  bad[1].kind = kActTrace;
  bad[1].value = divzero;
  bad[1].offset = 16;
  bad[1].size = 8;
  Action good[1];
  good[0].kind = kActTrace;
  good[0].value = val;
  good[0].offset = 8;
  good[0].size = 8;
  Ecb e1, e2;
  e1.epid = 1;
  e1.actions = bad;
  e1.nactions = 2;
  e1.record_size = 24;
  e2.epid = 2;
  e2.actions = good;
  e2.nactions = 1;
  e2.record_size = 16;
  Ecb* chain[2] = {&e1, &e2};
  f.probe.ecbs = chain;
  f.probe.necbs = 2;
  f.fa.args[0] = 4242;
  dvm_fire(&f.st, &f.probe, &f.fa, 0, false);
  EXPECT_EQ(f.slot.errors.load(), 1u);
  EXPECT_EQ(f.slot.faults[kFaultDivZero].load(), 1u);
  EXPECT_EQ(f.slot.ecb_fired.load(), 1u);
  // The fault's error record (where the bad ECB's record would have gone:
  // which ECB, action #2, DIF offset 1, the fault), then the good ECB's record.
  const uint8_t* data;
  uint32_t len;
  dvm_buffer_switch(&f.st, 0, &data, &len);
  ASSERT_EQ(len, sizeof(ErrorRecord) + 16u);
  ErrorRecord er;
  std::memcpy(&er, data, sizeof er);
  EXPECT_EQ(er.h.epid, kEpidError);
  EXPECT_EQ(er.h.size, sizeof(ErrorRecord));
  EXPECT_EQ(er.epid, 1u);
  EXPECT_EQ(er.where, 2u);
  EXPECT_EQ(er.pc, 1u);
  EXPECT_EQ(er.fault, static_cast<uint32_t>(kFaultDivZero));
  data += sizeof er;
  RecordHeader h;
  std::memcpy(&h, data, 8);
  EXPECT_EQ(h.epid, 2u);
  uint64_t v;
  std::memcpy(&v, data + 8, 8);
  EXPECT_EQ(v, 4242u);
}

TEST(DvmProbePath, PredicatesBufferFullDropsAndSwitching) {
  VmFixture f;
  const Program* is_even =
      f.make({I(kOpLdgs, 1, 0, 0, kVarArg0), I(kOpSetx, 2), I(kOpAnd, 3, 1, 2), I(kOpTst, 0, 3), I(kOpBe, 0, 0, 0, 7),
              I(kOpMov, 4, 0), I(kOpRet, 4), I(kOpSetx, 4, 0, 0, 0), I(kOpRet, 4)},
             {1});
  ASSERT_EQ(f.verify(is_even), nullptr);
  const Program* val = f.make({I(kOpLdgs, 1, 0, 0, kVarArg0), I(kOpRet, 1)});
  Action a;
  a.kind = kActTrace;
  a.value = val;
  a.offset = 8;
  a.size = 8;
  Ecb e;
  e.epid = 1;
  e.predicate = is_even;
  e.actions = &a;
  e.nactions = 1;
  e.record_size = 16;
  Ecb* chain[1] = {&e};
  f.probe.ecbs = chain;
  f.probe.necbs = 1;
  // 4096-byte halves hold 256 records; fire 1000 with 500 passing the predicate.
  for (uint64_t i = 0; i < 1000; i++) {
    f.fa.args[0] = i;
    dvm_fire(&f.st, &f.probe, &f.fa, 0, false);
  }
  EXPECT_EQ(f.slot.fired.load(), 1000u);
  EXPECT_EQ(f.slot.ecb_fired.load(), 256u);
  EXPECT_EQ(f.slot.drops.load(), 500u - 256u);
  const uint8_t* data;
  uint32_t len;
  dvm_buffer_switch(&f.st, 0, &data, &len);
  EXPECT_EQ(len, 4096u);
  for (uint32_t i = 0; i < 256; i++) {
    uint64_t v;
    std::memcpy(&v, data + i * 16 + 8, 8);
    EXPECT_EQ(v, 2u * i);
  }
  // After the switch the other half takes records.
  f.fa.args[0] = 2000;
  dvm_fire(&f.st, &f.probe, &f.fa, 0, false);
  dvm_buffer_switch(&f.st, 0, &data, &len);
  EXPECT_EQ(len, 16u);
}

TEST(DvmProbePath, AggregationsExactAgainstReference) {
  VmFixture f;
  const Program* arg0 = f.make({I(kOpLdgs, 1, 0, 0, kVarArg0), I(kOpRet, 1)});
  const Program* key = f.make({I(kOpLdgs, 1, 0, 0, kVarArg0 + 1), I(kOpRet, 1)});
  const Program* const keys[1] = {key};
  AggKind kinds[] = {kAggCount, kAggSum, kAggMin, kAggMax, kAggAvg, kAggQuantize, kAggLquantize};
  std::vector<Action> acts;
  for (uint32_t i = 0; i < 7; i++) {
    Action a;
    a.kind = kActAggregate;
    a.agg_kind = kinds[i];
    a.value = kinds[i] == kAggCount ? nullptr : arg0;
    a.keys = keys;
    a.nkeys = 1;
    a.agg_id = i;
    a.lq_base = 0;
    a.lq_limit = 100;
    a.lq_step = 10;
    acts.push_back(a);
  }
  Ecb e;
  e.epid = 1;
  e.actions = acts.data();
  e.nactions = 7;
  Ecb* chain[1] = {&e};
  f.probe.ecbs = chain;
  f.probe.necbs = 1;
  struct Ref {
    int64_t count = 0, sum = 0, min = INT64_MAX, max = INT64_MIN;
    int64_t q[kQuantizeBuckets] = {};
    int64_t lq[12] = {};
  };
  std::map<int64_t, Ref> ref;
  uint64_t x = 12345;
  for (int i = 0; i < 5000; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    int64_t v = static_cast<int64_t>(x >> 40) - (1 << 23);
    int64_t k = static_cast<int64_t>((x >> 20) % 5);
    f.fa.args[0] = static_cast<uint64_t>(v);
    f.fa.args[1] = static_cast<uint64_t>(k);
    dvm_fire(&f.st, &f.probe, &f.fa, 0, false);
    Ref& r = ref[k];
    r.count++;
    r.sum += v;
    r.min = std::min(r.min, v);
    r.max = std::max(r.max, v);
    // Reference quantize: power-of-two buckets computed independently.
    int b = 63;
    if (v > 0) {
      int l = 0;
      while ((v >> (l + 1)) > 0) l++;
      b = 64 + l;
    }
    if (v < 0) {
      int l = 0;
      while (((-v) >> (l + 1)) > 0) l++;
      b = 62 - l;
    }
    r.q[b]++;
    int lb = v < 0 ? 0 : v >= 100 ? 11 : 1 + static_cast<int>(v / 10);
    r.lq[lb]++;
  }
  EXPECT_EQ(f.slot.errors.load(), 0u);
  EXPECT_EQ(f.slot.agg_drops.load(), 0u);
  // Walk the buffer and compare every entry.
  size_t seen = 0;
  for (uint32_t off = 8; off < f.slot.agg.used;) {
    auto* ent = reinterpret_cast<const AggEntry*>(f.slot.agg.arena + off);
    int64_t k;
    std::memcpy(&k, reinterpret_cast<const uint8_t*>(ent + 1) + 8, 8);
    const int64_t* v = agg_values(ent);
    const Ref& r = ref.at(k);
    switch (kinds[ent->agg_id]) {
      case kAggCount: EXPECT_EQ(v[0], r.count); break;
      case kAggSum: EXPECT_EQ(v[0], r.sum); break;
      case kAggMin: EXPECT_EQ(v[0], r.min); break;
      case kAggMax: EXPECT_EQ(v[0], r.max); break;
      case kAggAvg:
        EXPECT_EQ(v[0], r.count);
        EXPECT_EQ(v[1], r.sum);
        break;
      case kAggQuantize:
        for (uint32_t b = 0; b < kQuantizeBuckets; b++) EXPECT_EQ(v[b], r.q[b]) << "bucket " << b;
        break;
      case kAggLquantize:
        ASSERT_EQ(ent->nvals, 12u);
        for (uint32_t b = 0; b < 12; b++) EXPECT_EQ(v[b], r.lq[b]) << "bucket " << b;
        break;
      default: ADD_FAILURE();
    }
    seen++;
    off += static_cast<uint32_t>(sizeof(AggEntry) + ent->keylen + ent->nvals * 8);
  }
  EXPECT_EQ(seen, 7u * ref.size());
}

TEST(DvmProbePath, AggregationBufferFullIsADrop) {
  VmFixture f;
  f.slot.agg.size = 8 + 3 * (sizeof(AggEntry) + 16 + 8);  // three keyed counts fit
  const Program* key = f.make({I(kOpLdgs, 1, 0, 0, kVarArg0), I(kOpRet, 1)});
  const Program* const keys[1] = {key};
  Action a;
  a.kind = kActAggregate;
  a.agg_kind = kAggCount;
  a.keys = keys;
  a.nkeys = 1;
  Ecb e;
  e.epid = 1;
  e.actions = &a;
  e.nactions = 1;
  Ecb* chain[1] = {&e};
  f.probe.ecbs = chain;
  f.probe.necbs = 1;
  for (uint64_t i = 0; i < 5; i++) {
    f.fa.args[0] = i;
    dvm_fire(&f.st, &f.probe, &f.fa, 0, false);
  }
  EXPECT_EQ(f.slot.agg.nentries, 3u);
  EXPECT_EQ(f.slot.agg_drops.load(), 2u);
}

TEST(DvmProbePath, BusySlotFromSignalIsCountedNotDeadlocked) {
  VmFixture f;
  Ecb e;
  e.epid = 1;
  Ecb* chain[1] = {&e};
  f.probe.ecbs = chain;
  f.probe.necbs = 1;
  f.lock.lock();
  dvm_fire(&f.st, &f.probe, &f.fa, 0, /*in_signal=*/true);
  f.lock.unlock();
  EXPECT_EQ(f.slot.busy_drops.load(), 1u);
  EXPECT_EQ(f.slot.fired.load(), 0u);
}

TEST(DvmProbePath, StackAndTracememAndStringTrace) {
  VmFixture f;
  alignas(8) uint8_t payload[32];
  for (int i = 0; i < 32; i++) payload[i] = static_cast<uint8_t>(i * 3);
  f.fa.region = Region{reinterpret_cast<uint64_t>(payload), 32};
  f.fa.args[0] = reinterpret_cast<uint64_t>(payload);
  const Program* addr = f.make({I(kOpLdgs, 1, 0, 0, kVarArg0), I(kOpRet, 1)});
  const Program* str = f.make({I(kOpLdgs, 1, 0, 0, kVarProbename), I(kOpRet, 1)}, {}, {}, true);
  Action a[3];
  a[0].kind = kActTracemem;
  a[0].value = addr;
  a[0].offset = 8;
  a[0].size = 32;
  a[1].kind = kActStack;
  a[1].offset = 40;
  a[1].size = 32;
  a[2].kind = kActTrace;
  a[2].value = str;
  a[2].offset = 72;
  a[2].size = 64;
  Ecb e;
  e.epid = 3;
  e.actions = a;
  e.nactions = 3;
  e.record_size = 136;
  Ecb* chain[1] = {&e};
  f.probe.ecbs = chain;
  f.probe.necbs = 1;
  dvm_fire(&f.st, &f.probe, &f.fa, 0, false);
  EXPECT_EQ(f.slot.errors.load(), 0u);
  const uint8_t* data;
  uint32_t len;
  dvm_buffer_switch(&f.st, 0, &data, &len);
  ASSERT_EQ(len, 136u);
  EXPECT_EQ(std::memcmp(data + 8, payload, 32), 0);
  uint64_t pcs[4];
  std::memcpy(pcs, data + 40, 32);
  EXPECT_EQ(pcs[0], 0x1000u);
  EXPECT_EQ(pcs[2], 0x1002u);
  EXPECT_EQ(pcs[3], 0u);
  EXPECT_STREQ(reinterpret_cast<const char*>(data + 72), "name");
  // tracemem past the region faults.
  a[0].size = 33;
  dvm_fire(&f.st, &f.probe, &f.fa, 0, false);
  EXPECT_EQ(f.slot.faults[kFaultBadAddr].load(), 1u);
}

}  // namespace
}  // namespace tbdvm::test
