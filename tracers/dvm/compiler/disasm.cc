// `-S`: DIF listings in the spirit of `dtrace -S`.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "tracers/dvm/program.h"

namespace tbdvm {

namespace {

std::string var_name(const std::vector<VarInfo>& vars, const char* scope, uint32_t id) {
  for (auto& v : vars)
    if (v.scope == scope && v.id == id) return v.name;
  return "";
}

std::string reg(uint8_t r) { return "%r" + std::to_string(r); }

const char* scope_of(uint8_t op) {
  switch (op) {
    case kOpLdgs:
    case kOpStgs: return "global";
    case kOpLdts:
    case kOpStts: return "self";
    case kOpLdls:
    case kOpStls: return "this";
    case kOpLdga:
    case kOpStga: return "assoc";
    default: return "self-assoc";
  }
}

std::string escape(const char* s) {
  std::string o;
  for (; *s; s++) {
    if (*s == '\n')
      o += "\\n";
    else if (*s == '\t')
      o += "\\t";
    else if (*s == '"')
      o += "\\\"";
    else
      o += *s;
  }
  return o;
}

}  // namespace

// One switch over the opcodes (~95 lines), a case per operand format: how
// every instruction is printed reads as one table, beside the opcode list.
std::string disassemble(const DifObject& d, const std::vector<VarInfo>& vars) {
  std::string out = "    OFF OPCODE            INSTRUCTION\n";
  char line[256];
  for (size_t pc = 0; pc < d.insns.size(); pc++) {
    const Insn& in = d.insns[pc];
    std::string text = op_name(in.op);
    text.resize(8, ' ');
    std::string comment;
    switch (in.op) {
      case kOpNot:
      case kOpMov:
      case kOpLdsb:
      case kOpLdsh:
      case kOpLdsw:
      case kOpLdx:
      case kOpLdub:
      case kOpLduh:
      case kOpLduw:
        if (in.op >= kOpLdsb)
          text += "[" + reg(in.r1) + "], " + reg(in.rd);
        else
          text += reg(in.r1) + ", " + reg(in.rd);
        break;
      case kOpStb:
      case kOpSth:
      case kOpStw:
      case kOpStx: text += reg(in.r1) + ", [" + reg(in.rd) + "]"; break;
      case kOpSetx:
        text += "DT_INTEGER[" + std::to_string(in.imm) + "], " + reg(in.rd);
        if (in.imm < d.ints.size()) {
          std::snprintf(line, sizeof line, "! 0x%" PRIx64, d.ints[in.imm]);
          comment = line;
        }
        break;
      case kOpSets:
        text += "DT_STRING[" + std::to_string(in.imm) + "], " + reg(in.rd);
        if (in.imm < d.strtab.size()) comment = "! \"" + escape(d.strtab.c_str() + in.imm) + "\"";
        break;
      case kOpCmp:
      case kOpScmp: text += reg(in.r1) + ", " + reg(in.r2); break;
      case kOpTst:
      case kOpPushtv: text += reg(in.r1); break;
      case kOpPushtr: text += reg(in.r1) + ", " + (in.r2 ? reg(in.r2) : std::string("DT_STRING")); break;
      case kOpRet: text += reg(in.rd); break;
      case kOpLdgs:
      case kOpLdts:
      case kOpLdls:
      case kOpLdga:
      case kOpLdta: {
        uint32_t id = in.imm & kVarIdMask;
        std::snprintf(line, sizeof line, "DT_VAR(%u), ", id);
        text += line + reg(in.rd);
        const char* b = in.op == kOpLdgs ? builtin_name(id) : nullptr;
        std::string nm = b ? b : var_name(vars, scope_of(in.op), id);
        comment = "! " +
                  std::string(in.op == kOpLdts || in.op == kOpLdta ? "self->"
                              : in.op == kOpLdls                   ? "this->"
                                                                   : "") +
                  nm + ((in.imm & kVarRef) ? " (by ref)" : "");
        break;
      }
      case kOpStgs:
      case kOpStts:
      case kOpStls:
      case kOpStga:
      case kOpStta: {
        uint32_t id = in.imm & kVarIdMask;
        std::snprintf(line, sizeof line, ", DT_VAR(%u)", id);
        text += reg(in.r1) + line;
        comment = "! " +
                  std::string(in.op == kOpStts || in.op == kOpStta ? "self->"
                              : in.op == kOpStls                   ? "this->"
                                                                   : "") +
                  var_name(vars, scope_of(in.op), id) + ((in.imm & kVarRef) ? " (by ref)" : "");
        break;
      }
      case kOpCall: text += std::string(subr_name(in.imm) ? subr_name(in.imm) : "?") + ", " + reg(in.rd); break;
      case kOpFlushts:
      case kOpNop: break;
      default:
        if (in.op >= kOpBa && in.op <= kOpBleu) {
          std::snprintf(line, sizeof line, "%02u", in.imm);
          text += line;
        } else {
          text += reg(in.r1) + ", " + reg(in.r2) + ", " + reg(in.rd);
        }
    }
    std::snprintf(line, sizeof line, "    %02zu: %02x%02x%02x%02x %08x    %-32s %s\n", pc, in.op, in.rd, in.r1, in.r2,
                  in.imm, text.c_str(), comment.c_str());
    out += line;
  }
  if (!d.strtab.empty()) out += "    (string table " + std::to_string(d.strtab.size()) + " bytes)\n";
  out +=
      std::string("    returns ") + (d.returns_string ? "D type (string) by ref" : "D type (integer) (size 8)") + "\n";
  return out;
}

std::string disassemble(const CompiledProgram& p) {
  static const char* const kActs[] = {"", "difexpr", "trace", "tracemem", "printf", "stack", "aggregate", "exit"};
  static const char* const kAggs[] = {"",    "count",    "sum",       "min",    "max",
                                      "avg", "quantize", "lquantize", "stddev", "llquantize"};
  static const char* const kAggOps[] = {"", "printa", "clear", "trunc", "normalize", "denormalize"};
  std::string out;
  for (size_t i = 0; i < p.clauses.size(); i++) {
    const ClauseDesc& c = p.clauses[i];
    std::string probes;
    for (auto& s : c.probes) probes += (probes.empty() ? "" : ", ") + s;
    out += "clause " + std::to_string(i) + " (line " + std::to_string(c.line) + "): " + probes + "\n";
    if (c.predicate) out += "  predicate:\n" + disassemble(*c.predicate, p.vars);
    for (size_t k = 0; k < c.actions.size(); k++) {
      const ActionDesc& a = c.actions[k];
      out += "  action #" + std::to_string(k + 1) + ": " + kActs[a.kind];
      if (a.kind == kActAggregate) {
        out += " @" + p.aggs[a.agg_id].name + " " + kAggs[a.agg_kind] + "()";
        if (!a.keys.empty()) out += " keys=" + std::to_string(a.keys.size());
      }
      if (a.agg_op != AggOp::kNone) {
        out += std::string(" (") + kAggOps[static_cast<int>(a.agg_op)] + " @" + p.aggs[a.agg_id].name;
        if (a.agg_format >= 0) out += " format " + std::to_string(a.agg_format);
        out += ")";
      }
      if (a.kind == kActPrintf) out += " format " + std::to_string(a.format_id) + " arg " + std::to_string(a.arg_index);
      if (a.kind == kActTracemem || a.kind == kActStack) out += " size " + std::to_string(a.size);
      out += "\n";
      for (size_t kk = 0; kk < a.keys.size(); kk++) {
        out += "   key " + std::to_string(kk) + ":\n" + disassemble(*a.keys[kk], p.vars);
      }
      if (a.value) out += disassemble(*a.value, p.vars);
    }
  }
  return out;
}

}  // namespace tbdvm
