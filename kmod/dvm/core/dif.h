// D-VM intermediate format: a DIF-like register instruction set.
//
// Freestanding: this header and everything under core/ uses no allocation, no
// exceptions and no libc, so the same interpreter can be built into a kernel
// module.  Memory is always handed in by the caller.
//
// Instruction: 8 bytes {op, rd, r1, r2, imm}.  16 registers, %r0 reads as 0
// and cannot be written.  Branch targets are absolute instruction indices and
// must point forward (programs always terminate).
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace tbdvm {

enum Op : uint8_t {
  kOpNop = 0,
  // logic: rd = r1 op r2 (not: rd = ~r1)
  kOpOr,
  kOpXor,
  kOpAnd,
  kOpNot,
  kOpSll,
  kOpSrl,
  kOpSra,
  // arithmetic
  kOpAdd,
  kOpSub,
  kOpMul,
  kOpSdiv,
  kOpUdiv,
  kOpSrem,
  kOpUrem,
  // constants: setx rd = inttab[imm]; sets rd = &strtab[imm]
  kOpSetx,
  kOpSets,
  kOpMov,
  // compare: set condition codes
  kOpCmp,
  kOpTst,
  kOpScmp,
  // branches to imm
  kOpBa,
  kOpBe,
  kOpBne,
  kOpBg,
  kOpBgu,
  kOpBge,
  kOpBgeu,
  kOpBl,
  kOpBlu,
  kOpBle,
  kOpBleu,
  kOpRet,  // return rd
  // memory loads rd = *(r1), checked against readable ranges
  kOpLdsb,
  kOpLdsh,
  kOpLdsw,
  kOpLdx,
  kOpLdub,
  kOpLduh,
  kOpLduw,
  // memory stores *(rd) = r1, scratch only
  kOpStb,
  kOpSth,
  kOpStw,
  kOpStx,
  // variables: ld* rd = var[imm]; st* var[imm] = r1.  imm bit 31 = by reference
  kOpLdgs,
  kOpStgs,  // global scalars (ids < 0x100 are built-ins, read-only)
  kOpLdts,
  kOpStts,  // thread-local (self->)
  kOpLdls,
  kOpStls,  // clause-local (this->)
  kOpLdga,
  kOpStga,  // global associative arrays, keys on the tuple stack
  kOpLdta,
  kOpStta,  // thread-local associative arrays
  // tuple (argument) stack: pushtv r1 (by value); pushtr r1, size r2 (by ref,
  // r2 == %r0 means NUL-terminated string); flushts
  kOpPushtv,
  kOpPushtr,
  kOpFlushts,
  kOpCall,  // rd = subr[imm](tuple stack)
  kOpCount
};

struct Insn {
  uint8_t op;
  uint8_t rd;
  uint8_t r1;
  uint8_t r2;
  uint32_t imm;
};
static_assert(sizeof(Insn) == 8, "instruction is 8 bytes");

constexpr uint32_t kNumRegs = 16;
constexpr uint32_t kMaxInsns = 8192;
constexpr uint32_t kMaxTuple = 8;          // tuple stack depth
constexpr uint32_t kVarRef = 0x80000000u;  // imm flag: variable is by reference
constexpr uint32_t kVarIdMask = 0xffffu;
constexpr uint32_t kVarFirstUser = 0x100;  // global ids below this are built-ins
constexpr uint32_t kMaxGlobals = 256;      // user globals 0x100 .. 0x1ff
constexpr uint32_t kMaxLocals = 64;        // clause-local ids 0 .. 63
constexpr uint32_t kMaxTls = 256;          // thread-local ids 0 .. 255
constexpr uint32_t kMaxAssoc = 256;        // associative array ids 0 .. 255
constexpr uint32_t kMaxArgs = 10;

// Built-in variables (loaded with ldgs).
enum BuiltinVar : uint32_t {
  kVarArg0 = 0x00,  // .. kVarArg9 = 0x09
  kVarTimestamp = 0x10,
  kVarVtimestamp,
  kVarWalltimestamp,
  kVarPid,
  kVarTid,
  kVarCpu,
  kVarId,  // probe id
  kVarEpid,
  kVarProbeprov,
  kVarProbemod,
  kVarProbefunc,
  kVarProbename,
  kVarExecname,
  kVarCurthread,
  kVarPpid,
  kVarUid,
  kVarErrno,  // the syscall's error on a return probe (0 when it succeeded)
  kVarBuiltinEnd
};

enum Subr : uint32_t {
  kSubrStrlen = 0,  // strlen(s)
  kSubrStrjoin,     // strjoin(a, b) -> scratch string
  kSubrAlloca,      // alloca(n) -> scratch pointer
  kSubrBcopy,       // bcopy(src, dst, n), dst must be scratch
  kSubrCopyin,      // copyin(addr, n) -> scratch copy of user memory
  kSubrCopyinstr,   // copyinstr(addr) -> scratch string
  kSubrRand,        // rand()
  kSubrCount
};

// Number of tuple-stack arguments each subroutine consumes.
constexpr uint8_t kSubrArgs[kSubrCount] = {1, 2, 1, 3, 2, 1, 0};

// Condition codes set by cmp/tst/scmp.
struct CondCodes {
  bool n, z, v, c;
};

// A DIF object: one predicate, one action expression or one aggregation key.
struct Program {
  const Insn* insns = nullptr;
  uint32_t ninsns = 0;
  const uint64_t* inttab = nullptr;
  uint32_t nints = 0;
  const char* strtab = nullptr;
  uint32_t strtab_len = 0;
  // Result type: false = integer, true = string (by reference).
  bool returns_string = false;
};

enum Fault : uint32_t {
  kFaultNone = 0,
  kFaultDivZero,
  kFaultBadAddr,
  kFaultBadAlign,
  kFaultNoScratch,
  kFaultDynvarFull,
  kFaultTupleOverflow,
  kFaultKeyTooBig,
  kFaultBadCopy,
  kFaultIllegalOp,
  kFaultCount
};

const char* op_name(uint8_t op);
const char* builtin_name(uint32_t id);  // nullptr if not a built-in
const char* subr_name(uint32_t id);
const char* fault_name(uint32_t fault);

}  // namespace tbdvm
