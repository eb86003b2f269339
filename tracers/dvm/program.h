// A compiled D program: what the compiler produces and a Session enables.
// Owns the DIF objects; the core's Program/Action structs point into it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kmod/dvm/core/vm.h"

namespace tbdvm {

struct DifObject {
  std::vector<Insn> insns;
  std::vector<uint64_t> ints;
  std::string strtab;  // NUL-separated strings
  bool returns_string = false;
  Program prog;
  // Points prog at the vectors; call after the last change.
  const Program* finalize();
};

// Argument type for printf/trace/keys as the consumer decodes it.
enum class ValueType : uint8_t { kInt, kString };

// Actions the consumer carries out when it reads their record (dtrace's
// printa, clear, trunc, normalize, denormalize): on the probe path each is a
// kActTrace of one integer (trunc's count, normalize's factor, else 0), as in
// DTrace, where the kernel only records the directive.
enum class AggOp : uint8_t { kNone, kPrinta, kClear, kTrunc, kNormalize, kDenormalize };

struct ActionDesc {
  ActionKind kind = kActDifExpr;
  AggOp agg_op = AggOp::kNone;  // with agg_id; kind is then kActTrace
  int32_t agg_format = -1;      // printa's format (formats index), -1 = the default output
  bool agg_has_count = false;   // trunc(@a, n): n given (else every key goes)
  AggKind agg_kind = kAggCount;
  std::unique_ptr<DifObject> value;
  std::vector<std::unique_ptr<DifObject>> keys;
  uint32_t agg_id = 0;
  uint32_t size = 0;  // tracemem bytes, stack frames * 8
  int64_t lq_base = 0, lq_limit = 0, lq_step = 0;
  uint32_t format_id = 0;  // printf
  uint32_t arg_index = 0;
};

struct ClauseDesc {
  std::vector<std::string> probes;  // "provider:module:function:name" patterns
  std::unique_ptr<DifObject> predicate;
  std::vector<ActionDesc> actions;
  int line = 0;  // where the clause starts in the script
};

struct AggDesc {
  std::string name;  // without '@' ("" = anonymous)
  AggKind kind = kAggCount;
  std::vector<ValueType> key_types;
  int64_t lq_base = 0, lq_limit = 0, lq_step = 0;
  bool kind_set = false;
};

// A format as the compiler split it, once: the consumer walks the pieces.
struct FormatPiece {
  std::string text;    // literal text before the conversion ("%%" already "%")
  std::string spec;    // "%" with flags, width and precision (length modifiers dropped); "" = text only
  char conv = 0;       // d i o u x X c s p
  bool value = false;  // printa's %@: the aggregation's value, not a key
};

struct PrintfDesc {
  std::string format;
  std::vector<FormatPiece> pieces;
  std::vector<ValueType> arg_types;  // printa: the aggregation's key types
};

struct VarInfo {
  std::string name;
  std::string scope;  // "global", "self", "this", "assoc", "self-assoc"
  uint32_t id = 0;
  ValueType type = ValueType::kInt;
};

struct CompiledProgram {
  std::vector<ClauseDesc> clauses;
  std::vector<AggDesc> aggs;
  std::vector<PrintfDesc> formats;
  std::vector<VarInfo> vars;
};

// Renders DIF like `dtrace -S`.
std::string disassemble(const DifObject& d, const std::vector<VarInfo>& vars);
std::string disassemble(const CompiledProgram& p);

}  // namespace tbdvm
