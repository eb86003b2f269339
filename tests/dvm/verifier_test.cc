// One test per verifier rule, plus acceptance of well-formed programs.
#include <gtest/gtest.h>

#include "tests/dvm/vm_fixture.h"

namespace tbdvm::test {
namespace {

const char* check(std::vector<Insn> c, std::vector<uint64_t> ints = {}, std::string strs = {}) {
  static VmFixture f;
  return f.verify(f.make(std::move(c), std::move(ints), std::move(strs)));
}

TEST(DvmVerifier, AcceptsWellFormedPrograms) {
  EXPECT_EQ(check({I(kOpRet)}), nullptr);
  EXPECT_EQ(check({I(kOpSetx, 1), I(kOpCmp, 0, 1, 1), I(kOpBe, 0, 0, 0, 4), I(kOpMov, 2, 1), I(kOpRet, 2)}, {3}),
            nullptr);
  EXPECT_EQ(check({I(kOpLdgs, 1, 0, 0, kVarProbefunc), I(kOpLdgs, 2, 0, 0, 0x1ff | kVarRef), I(kOpRet, 1)}), nullptr);
}

TEST(DvmVerifier, RejectsEmptyProgram) {
  static VmFixture f;
  Program p;
  EXPECT_STREQ(f.verify(&p), "empty program");
}

TEST(DvmVerifier, RejectsTooLongProgram) {
  std::vector<Insn> c(kMaxInsns + 1, I(kOpNop));
  c.back() = I(kOpRet);
  EXPECT_STREQ(check(c), "program too long");
}

TEST(DvmVerifier, RejectsMissingFinalRet) {
  EXPECT_STREQ(check({I(kOpRet), I(kOpNop)}), "last instruction is not ret");
}

TEST(DvmVerifier, RejectsUnknownOpcode) {
  EXPECT_STREQ(check({I(kOpCount), I(kOpRet)}), "unknown opcode");
  EXPECT_STREQ(check({I(0xff), I(kOpRet)}), "unknown opcode");
}

TEST(DvmVerifier, RejectsRegisterOutOfRange) {
  EXPECT_STREQ(check({I(kOpAdd, 1, 16, 2), I(kOpRet)}), "register out of range");
  EXPECT_STREQ(check({I(kOpAdd, 200, 1, 2), I(kOpRet)}), "register out of range");
}

TEST(DvmVerifier, RejectsWriteToR0) {
  EXPECT_STREQ(check({I(kOpAdd, 0, 1, 2), I(kOpRet)}), "write to %r0");
  EXPECT_STREQ(check({I(kOpSetx, 0, 0, 0, 0), I(kOpRet)}, {1}), "write to %r0");
}

TEST(DvmVerifier, RejectsReservedFields) {
  EXPECT_STREQ(check({I(kOpNot, 1, 2, 3), I(kOpRet)}), "reserved field not zero");
  EXPECT_STREQ(check({I(kOpFlushts, 0, 0, 0, 1), I(kOpRet)}), "reserved field not zero");
  EXPECT_STREQ(check({I(kOpLdgs, 1, 0, 0, 0x10000 | 0x100), I(kOpRet)}), "reserved field not zero");
}

TEST(DvmVerifier, RejectsBranchOutsideProgram) {
  EXPECT_STREQ(check({I(kOpBa, 0, 0, 0, 5), I(kOpRet)}), "branch target outside the program");
}

TEST(DvmVerifier, RejectsBackwardBranch) {
  EXPECT_STREQ(check({I(kOpNop), I(kOpBa, 0, 0, 0, 0), I(kOpRet)}), "backward branch");
  EXPECT_STREQ(check({I(kOpBe, 0, 0, 0, 0), I(kOpRet)}), "backward branch");  // to itself
}

TEST(DvmVerifier, RejectsIntegerTableIndex) {
  EXPECT_STREQ(check({I(kOpSetx, 1, 0, 0, 1), I(kOpRet)}, {5}), "integer table index out of range");
}

TEST(DvmVerifier, RejectsStringTableOffset) {
  EXPECT_STREQ(check({I(kOpSets, 1, 0, 0, 10), I(kOpRet)}, {}, std::string("ab\0", 3)),
               "string table offset out of range");
}

TEST(DvmVerifier, RejectsUnterminatedString) {
  EXPECT_STREQ(check({I(kOpSets, 1, 0, 0, 0), I(kOpRet)}, {}, "abc"), "unterminated string in string table");
}

TEST(DvmVerifier, RejectsVariableIdOutOfRange) {
  EXPECT_STREQ(check({I(kOpLdgs, 1, 0, 0, kVarFirstUser + kMaxGlobals), I(kOpRet)}), "variable id out of range");
  EXPECT_STREQ(check({I(kOpLdls, 1, 0, 0, kMaxLocals), I(kOpRet)}), "variable id out of range");
  EXPECT_STREQ(check({I(kOpStts, 0, 1, 0, kMaxTls), I(kOpRet)}), "variable id out of range");
  EXPECT_STREQ(check({I(kOpPushtv, 0, 1), I(kOpLdga, 1, 0, 0, kMaxAssoc), I(kOpRet)}), "variable id out of range");
}

TEST(DvmVerifier, RejectsStoreToBuiltin) {
  EXPECT_STREQ(check({I(kOpStgs, 0, 1, 0, kVarPid), I(kOpRet)}), "store to a built-in variable");
}

TEST(DvmVerifier, RejectsUnknownBuiltin) {
  EXPECT_STREQ(check({I(kOpLdgs, 1, 0, 0, 0x0c), I(kOpRet)}), "unknown built-in variable");
  EXPECT_STREQ(check({I(kOpLdgs, 1, 0, 0, 0xff), I(kOpRet)}), "unknown built-in variable");
}

TEST(DvmVerifier, RejectsUnknownSubroutine) {
  EXPECT_STREQ(check({I(kOpCall, 1, 0, 0, kSubrCount), I(kOpRet)}), "unknown subroutine");
}

TEST(DvmVerifier, RejectsUnboundedTupleStack) {
  std::vector<Insn> c(kMaxTuple + 1, I(kOpPushtv, 0, 1));
  c.push_back(I(kOpRet));
  EXPECT_STREQ(check(c), "tuple stack too deep");
  // Depth is tracked along branches: a skipped flush does not reset it.
  std::vector<Insn> d;
  for (uint32_t i = 0; i < 5; i++) d.push_back(I(kOpPushtv, 0, 1));
  d.push_back(I(kOpBe, 0, 0, 0, 7));
  d.push_back(I(kOpFlushts));
  for (uint32_t i = 0; i < 4; i++) d.push_back(I(kOpPushtv, 0, 1));
  d.push_back(I(kOpRet));
  EXPECT_STREQ(check(d), "tuple stack too deep");
}

TEST(DvmVerifier, RejectsSubroutineWithTooFewArguments) {
  EXPECT_STREQ(check({I(kOpPushtv, 0, 1), I(kOpCall, 2, 0, 0, kSubrStrjoin), I(kOpRet)}),
               "too few tuple entries for subroutine");
  // On one path only.
  EXPECT_STREQ(check({I(kOpBe, 0, 0, 0, 2), I(kOpPushtv, 0, 1), I(kOpCall, 2, 0, 0, kSubrStrlen), I(kOpRet)}),
               "too few tuple entries for subroutine");
}

TEST(DvmVerifier, RejectsAssociativeAccessWithoutKeys) {
  EXPECT_STREQ(check({I(kOpLdga, 1, 0, 0, 1), I(kOpRet)}), "associative access without keys");
  EXPECT_STREQ(check({I(kOpStta, 0, 1, 0, 1), I(kOpRet)}), "associative access without keys");
}

}  // namespace
}  // namespace tbdvm::test
