// DIF verifier: runs before a program is enabled.  Freestanding.
//
// Rules (each has its own message and test):
//   empty program / too many instructions / last instruction is not ret /
//   unknown opcode / register out of range / write to %r0 / reserved field
//   not zero / branch target outside the program / backward branch /
//   integer-table index out of range / string-table offset out of range or
//   unterminated / variable id out of range / store to a built-in /
//   unknown built-in / unknown subroutine / tuple stack too deep /
//   too few tuple entries for a subroutine or associative access.
#include "vm.h"

namespace tbdvm {

namespace {

// Operand formats.
enum Fmt : uint8_t {
  kFNone,    // nop, flushts
  kFAlu3,    // rd <- r1, r2
  kFAlu2,    // rd <- r1
  kFSetx,    // rd <- inttab[imm]
  kFSets,    // rd <- strtab+imm
  kFCmp,     // r1, r2
  kFTst,     // r1
  kFBranch,  // imm
  kFRet,     // rd (read)
  kFLoad,    // rd <- [r1]
  kFStore,   // [rd] <- r1 (rd read)
  kFLdVar,   // rd <- var imm
  kFStVar,   // var imm <- r1
  kFPushv,   // r1
  kFPushr,   // r1, r2
  kFCall,    // rd <- subr imm
};

Fmt fmt_of(uint8_t op) {
  switch (op) {
    case kOpNop:
    case kOpFlushts: return kFNone;
    case kOpOr:
    case kOpXor:
    case kOpAnd:
    case kOpSll:
    case kOpSrl:
    case kOpSra:
    case kOpAdd:
    case kOpSub:
    case kOpMul:
    case kOpSdiv:
    case kOpUdiv:
    case kOpSrem:
    case kOpUrem: return kFAlu3;
    case kOpNot:
    case kOpMov: return kFAlu2;
    case kOpSetx: return kFSetx;
    case kOpSets: return kFSets;
    case kOpCmp:
    case kOpScmp: return kFCmp;
    case kOpTst: return kFTst;
    case kOpRet: return kFRet;
    case kOpLdsb:
    case kOpLdsh:
    case kOpLdsw:
    case kOpLdx:
    case kOpLdub:
    case kOpLduh:
    case kOpLduw: return kFLoad;
    case kOpStb:
    case kOpSth:
    case kOpStw:
    case kOpStx: return kFStore;
    case kOpLdgs:
    case kOpLdts:
    case kOpLdls:
    case kOpLdga:
    case kOpLdta: return kFLdVar;
    case kOpStgs:
    case kOpStts:
    case kOpStls:
    case kOpStga:
    case kOpStta: return kFStVar;
    case kOpPushtv: return kFPushv;
    case kOpPushtr: return kFPushr;
    case kOpCall: return kFCall;
    default: return kFBranch;  // kOpBa .. kOpBleu
  }
}

bool is_branch(uint8_t op) { return op >= kOpBa && op <= kOpBleu; }

}  // namespace

// One pass over the instructions with a case per opcode class (~130
// lines): the rules stay side by side, as DTrace's dtrace_difo_validate()
// keeps them, so that a reader checks each opcode's against the
// interpreter's case for it.
VerifyError dif_verify(const Program* p, VerifyWork* w) {
  auto fail = [](uint32_t pc, const char* rule) { return VerifyError{pc, rule}; };
  if (!p || !p->insns || p->ninsns == 0) return fail(0, "empty program");
  const uint32_t n = p->ninsns;
  if (n > kMaxInsns) return fail(kMaxInsns, "program too long");
  if (p->insns[n - 1].op != kOpRet) return fail(n - 1, "last instruction is not ret");

  // Pass 1: encoding of every instruction.
  for (uint32_t pc = 0; pc < n; pc++) {
    const Insn& in = p->insns[pc];
    if (in.op >= kOpCount) return fail(pc, "unknown opcode");
    Fmt f = fmt_of(in.op);
    bool use_rd = false, write_rd = false, use_r1 = false, use_r2 = false, use_imm = false;
    switch (f) {
      case kFNone: break;
      case kFAlu3: write_rd = use_r1 = use_r2 = true; break;
      case kFAlu2: write_rd = use_r1 = true; break;
      case kFSetx:
      case kFSets: write_rd = use_imm = true; break;
      case kFCmp: use_r1 = use_r2 = true; break;
      case kFTst: use_r1 = true; break;
      case kFBranch: use_imm = true; break;
      case kFRet: use_rd = true; break;
      case kFLoad: write_rd = use_r1 = true; break;
      case kFStore: use_rd = use_r1 = true; break;
      case kFLdVar: write_rd = use_imm = true; break;
      case kFStVar: use_r1 = use_imm = true; break;
      case kFPushv: use_r1 = true; break;
      case kFPushr: use_r1 = use_r2 = true; break;
      case kFCall: write_rd = use_imm = true; break;
    }
    if (in.rd >= kNumRegs || in.r1 >= kNumRegs || in.r2 >= kNumRegs) return fail(pc, "register out of range");
    if ((!use_rd && !write_rd && in.rd) || (!use_r1 && in.r1) || (!use_r2 && in.r2) || (!use_imm && in.imm))
      return fail(pc, "reserved field not zero");
    if (write_rd && in.rd == 0) return fail(pc, "write to %r0");
    switch (f) {
      case kFBranch:
        if (in.imm >= n) return fail(pc, "branch target outside the program");
        if (in.imm <= pc) return fail(pc, "backward branch");
        break;
      case kFSetx:
        if (in.imm >= p->nints || !p->inttab) return fail(pc, "integer table index out of range");
        break;
      case kFSets: {
        if (!p->strtab || in.imm >= p->strtab_len) return fail(pc, "string table offset out of range");
        bool nul = false;
        for (uint32_t i = in.imm; i < p->strtab_len; i++)
          if (p->strtab[i] == 0) {
            nul = true;
            break;
          }
        if (!nul) return fail(pc, "unterminated string in string table");
        break;
      }
      case kFLdVar:
      case kFStVar: {
        if (in.imm & ~(kVarIdMask | kVarRef)) return fail(pc, "reserved field not zero");
        uint32_t id = in.imm & kVarIdMask;
        bool store = f == kFStVar;
        switch (in.op) {
          case kOpLdgs:
          case kOpStgs:
            if (id < kVarFirstUser) {
              if (store) return fail(pc, "store to a built-in variable");
              if (!builtin_name(id)) return fail(pc, "unknown built-in variable");
              if (in.imm & kVarRef) return fail(pc, "reserved field not zero");
            } else if (id >= kVarFirstUser + kMaxGlobals) {
              return fail(pc, "variable id out of range");
            }
            break;
          case kOpLdls:
          case kOpStls:
            if (id >= kMaxLocals) return fail(pc, "variable id out of range");
            break;
          case kOpLdts:
          case kOpStts:
            if (id >= kMaxTls) return fail(pc, "variable id out of range");
            break;
          default:
            if (id >= kMaxAssoc) return fail(pc, "variable id out of range");
            break;
        }
        break;
      }
      case kFCall:
        if (in.imm >= kSubrCount) return fail(pc, "unknown subroutine");
        break;
      default: break;
    }
  }

  // Pass 2: tuple stack depth along every path (branches only go forward, so
  // one pass in order sees every predecessor first).
  for (uint32_t pc = 0; pc < n; pc++) {
    w->reach[pc] = 0;
    w->min_depth[pc] = 0xff;
    w->max_depth[pc] = 0;
  }
  w->reach[0] = 1;
  w->min_depth[0] = 0;
  w->max_depth[0] = 0;
  for (uint32_t pc = 0; pc < n; pc++) {
    if (!w->reach[pc]) continue;
    const Insn& in = p->insns[pc];
    uint32_t lo = w->min_depth[pc], hi = w->max_depth[pc];
    switch (in.op) {
      case kOpPushtv:
      case kOpPushtr:
        lo++;
        hi++;
        if (hi > kMaxTuple) return fail(pc, "tuple stack too deep");
        break;
      case kOpFlushts: lo = hi = 0; break;
      case kOpCall:
        if (lo < kSubrArgs[in.imm]) return fail(pc, "too few tuple entries for subroutine");
        break;
      case kOpLdga:
      case kOpStga:
      case kOpLdta:
      case kOpStta:
        if (lo < 1) return fail(pc, "associative access without keys");
        break;
      default: break;
    }
    auto flow = [&](uint32_t to) {
      if (!w->reach[to]) {
        w->reach[to] = 1;
        w->min_depth[to] = static_cast<uint8_t>(lo);
        w->max_depth[to] = static_cast<uint8_t>(hi);
      } else {
        if (lo < w->min_depth[to]) w->min_depth[to] = static_cast<uint8_t>(lo);
        if (hi > w->max_depth[to]) w->max_depth[to] = static_cast<uint8_t>(hi);
      }
    };
    if (in.op == kOpRet) continue;
    if (is_branch(in.op)) flow(in.imm);
    if (in.op != kOpBa && pc + 1 < n) flow(pc + 1);
  }
  return VerifyError{0, nullptr};
}

}  // namespace tbdvm
