// D compiler, part 3: DIF code generation for expressions and statements,
// with register allocation and the compile-time checks (types, constant
// zero divisors) (internal to the compiler).
#pragma once

#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracers/dvm/compiler/parser.h"
#include "tracers/dvm/program.h"

namespace tbdvm::compiler_detail {

// ---------------------------------------------------------------------------
// Code generation.
enum class Ty { kInt, kString, kVoid };

struct VarSym {
  uint32_t id;
  Ty type;
};

class Codegen {
 public:
  explicit Codegen(CompiledProgram* p) : prog_(p) {}

  [[noreturn]] static void fail(const Node* n, const std::string& m) { throw CompileError{n->line, n->col, m}; }

  // The value of an integer constant expression (literals and operators on
  // them), as the VM computes it: 64-bit two's complement.  False if `n` is
  // not constant.
  static bool constant_value(const Node* n, uint64_t* v) {
    uint64_t a = 0, b = 0;
    switch (n->kind) {
      case NK::kInt: *v = n->ival; return true;
      case NK::kUnary:
        if (!constant_value(n->kids[0].get(), &a)) return false;
        if (n->op == "-")
          *v = 0 - a;
        else if (n->op == "~")
          *v = ~a;
        else if (n->op == "!")
          *v = a == 0;
        else if (n->op == "+")
          *v = a;
        else
          return false;
        return true;
      case NK::kBinary: {
        if (!constant_value(n->kids[0].get(), &a) || !constant_value(n->kids[1].get(), &b)) return false;
        const std::string& o = n->op;
        if (o == "+")
          *v = a + b;
        else if (o == "-")
          *v = a - b;
        else if (o == "*")
          *v = a * b;
        else if (o == "&")
          *v = a & b;
        else if (o == "|")
          *v = a | b;
        else if (o == "^")
          *v = a ^ b;
        else if (o == "^^")
          *v = (a != 0) ^ (b != 0);
        else if (o == "<<")
          *v = a << (b & 63);  // the VM masks shift counts the same way
        else if (o == ">>")
          *v = static_cast<uint64_t>(static_cast<int64_t>(a) >> (b & 63));
        else if (o == "/" || o == "%") {
          int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
          if (y == 0 || (y == -1 && x == INT64_MIN)) return false;  // refused or trapped on its own
          *v = static_cast<uint64_t>(o == "/" ? x / y : x % y);
        } else
          return false;  // comparisons
        return true;
      }
      default: return false;
    }
  }

  // dtrace refuses a constant zero divisor when it compiles the program; so do we.
  static void refuse_zero_divisor(const Node* divisor) {
    uint64_t v = 1;
    if (constant_value(divisor, &v) && v == 0) fail(divisor, "division by zero (the divisor is the constant 0)");
  }

  std::unique_ptr<DifObject> expr_object(const Node* n, Ty* type) {
    begin();
    Ty t;
    uint8_t r = gen(n, &t);
    if (t == Ty::kVoid) fail(n, "expression has no value");
    emit(kOpRet, r, 0, 0, 0);
    d_->returns_string = t == Ty::kString;
    if (type) *type = t;
    return finish();
  }

  std::unique_ptr<DifObject> stmt_object(const Node* n) {
    begin();
    Ty t;
    uint8_t r = gen(n, &t);
    emit(kOpRet, t == Ty::kVoid ? 0 : r, 0, 0, 0);
    return finish();
  }

  std::map<std::string, VarSym> globals, selfs, locals, assocs, self_assocs;
  uint32_t next_global = kVarFirstUser, next_self = 0, next_local = 0, next_assoc = 0;

 private:
  CompiledProgram* prog_;
  std::unique_ptr<DifObject> d_;
  uint32_t used_regs_ = 0;

  void begin() {
    d_ = std::make_unique<DifObject>();
    used_regs_ = 1;  // r0
  }
  std::unique_ptr<DifObject> finish() {
    if (d_->insns.size() > kMaxInsns) throw CompileError{0, 0, "clause too large for one DIF object"};
    d_->finalize();
    return std::move(d_);
  }
  uint8_t alloc(const Node* n) {
    for (uint8_t r = 1; r < kNumRegs; r++)
      if (!(used_regs_ & (1u << r))) {
        used_regs_ |= 1u << r;
        return r;
      }
    fail(n, "expression too complex: out of D-VM registers");
  }
  void release(uint8_t r) {
    if (r) used_regs_ &= ~(1u << r);
  }
  size_t emit(uint8_t op, uint8_t rd, uint8_t r1, uint8_t r2, uint32_t imm) {
    d_->insns.push_back(Insn{op, rd, r1, r2, imm});
    return d_->insns.size() - 1;
  }
  void patch(size_t at) { d_->insns[at].imm = static_cast<uint32_t>(d_->insns.size()); }
  uint32_t intconst(uint64_t v) {
    for (size_t i = 0; i < d_->ints.size(); i++)
      if (d_->ints[i] == v) return static_cast<uint32_t>(i);
    d_->ints.push_back(v);
    return static_cast<uint32_t>(d_->ints.size() - 1);
  }
  uint32_t strconst(const std::string& s) {
    std::string z = s + '\0';
    size_t p = d_->strtab.find(z);
    if (p != std::string::npos && (p == 0 || d_->strtab[p - 1] == '\0')) return static_cast<uint32_t>(p);
    p = d_->strtab.size();
    d_->strtab += z;
    return static_cast<uint32_t>(p);
  }

  static bool builtin_id(const std::string& name, uint32_t* id, Ty* t) {
    for (uint32_t i = 0; i < kVarBuiltinEnd; i++) {
      const char* b = builtin_name(i);
      if (b && name == b) {
        *id = i;
        *t = (i >= kVarProbeprov && i <= kVarExecname) ? Ty::kString : Ty::kInt;
        return true;
      }
    }
    return false;
  }

  // Variable symbol for a store; creates it with type t on first assignment.
  VarSym& sym_for_store(std::map<std::string, VarSym>& tab, uint32_t& next, uint32_t limit, const Node* n, Ty t,
                        const char* what) {
    auto it = tab.find(n->name);
    if (it == tab.end()) {
      if (next >= limit) fail(n, std::string("too many ") + what + " variables");
      it = tab.emplace(n->name, VarSym{next++, t}).first;
      const char* scope = &tab == &globals  ? "global"
                          : &tab == &selfs  ? "self"
                          : &tab == &locals ? "this"
                          : &tab == &assocs ? "assoc"
                                            : "self-assoc";
      prog_->vars.push_back(
          VarInfo{n->name, scope, it->second.id, t == Ty::kString ? ValueType::kString : ValueType::kInt});
    } else if (it->second.type != t) {
      fail(n, "operands have incompatible types: " + std::string(what) + " variable '" + n->name + "' is " +
                  (it->second.type == Ty::kString ? "string" : "integer") + ", assigned " +
                  (t == Ty::kString ? "string" : "integer"));
    }
    return it->second;
  }
  const VarSym* sym_for_load(std::map<std::string, VarSym>& tab, const Node* n) {
    auto it = tab.find(n->name);
    return it == tab.end() ? nullptr : &it->second;
  }

  void push_keys(const Node* n, size_t first) {
    std::vector<std::pair<uint8_t, Ty>> regs;
    for (size_t i = first; i < n->kids.size(); i++) {
      Ty t;
      uint8_t r = gen(n->kids[i].get(), &t);
      if (t == Ty::kVoid) fail(n->kids[i].get(), "key expression has no value");
      regs.push_back({r, t});
    }
    if (regs.size() > kMaxTuple) fail(n, "too many keys (at most 8)");
    emit(kOpFlushts, 0, 0, 0, 0);
    for (auto& [r, t] : regs) {
      emit(t == Ty::kString ? kOpPushtr : kOpPushtv, 0, r, 0, 0);
      release(r);
    }
  }

  // Loads an lvalue into a new register.  Read-modify-write of a variable
  // that does not exist yet (x++, a[k] += n) declares it as an integer that
  // reads 0, as D does.
  uint8_t load_lvalue(const Node* n, Ty* t) {
    switch (n->kind) {
      case NK::kIdent: {
        uint32_t bid;
        Ty bt;
        if (!builtin_id(n->name, &bid, &bt) && !globals.count(n->name))
          sym_for_store(globals, next_global, kVarFirstUser + kMaxGlobals, n, Ty::kInt, "global");
        break;
      }
      case NK::kSelf:
        if (!selfs.count(n->name)) sym_for_store(selfs, next_self, kMaxTls, n, Ty::kInt, "thread-local");
        break;
      case NK::kThis:
        if (!locals.count(n->name)) sym_for_store(locals, next_local, kMaxLocals, n, Ty::kInt, "clause-local");
        break;
      case NK::kAssoc:
        if (!assocs.count(n->name)) sym_for_store(assocs, next_assoc, kMaxAssoc, n, Ty::kInt, "associative array");
        break;
      case NK::kSelfAssoc:
        if (!self_assocs.count(n->name))
          sym_for_store(self_assocs, next_assoc, kMaxAssoc, n, Ty::kInt, "thread-local array");
        break;
      default: break;
    }
    return gen(n, t);
  }

  // Stores register r (type t) into lvalue n.
  void store_lvalue(const Node* n, uint8_t r, Ty t) {
    uint32_t ref = t == Ty::kString ? kVarRef : 0;
    switch (n->kind) {
      case NK::kIdent: {
        uint32_t bid;
        Ty bt;
        if (builtin_id(n->name, &bid, &bt)) fail(n, "cannot assign to built-in variable '" + n->name + "'");
        VarSym& s = sym_for_store(globals, next_global, kVarFirstUser + kMaxGlobals, n, t, "global");
        emit(kOpStgs, 0, r, 0, s.id | ref);
        break;
      }
      case NK::kSelf: {
        VarSym& s = sym_for_store(selfs, next_self, kMaxTls, n, t, "thread-local");
        emit(kOpStts, 0, r, 0, s.id | ref);
        break;
      }
      case NK::kThis: {
        VarSym& s = sym_for_store(locals, next_local, kMaxLocals, n, t, "clause-local");
        emit(kOpStls, 0, r, 0, s.id | ref);
        break;
      }
      case NK::kAssoc:
      case NK::kSelfAssoc: {
        bool self = n->kind == NK::kSelfAssoc;
        if (!self && n->name == "args") fail(n, "cannot assign to args[]: the probe's arguments are read-only");
        VarSym& s = self ? sym_for_store(self_assocs, next_assoc, kMaxAssoc, n, t, "thread-local array")
                         : sym_for_store(assocs, next_assoc, kMaxAssoc, n, t, "associative array");
        push_keys(n, 0);
        emit(self ? kOpStta : kOpStga, 0, r, 0, s.id | ref);
        break;
      }
      default: fail(n, "left side of assignment is not a variable");
    }
  }

  uint8_t gen_cond_value(uint8_t op_branch, uint8_t rd) {
    // rd = condition ? 1 : 0, condition codes already set.
    size_t br = emit(op_branch, 0, 0, 0, 0);
    emit(kOpMov, rd, 0, 0, 0);
    size_t skip = emit(kOpBa, 0, 0, 0, 0);
    patch(br);
    emit(kOpSetx, rd, 0, 0, intconst(1));
    patch(skip);
    return rd;
  }

  // One switch over the expression node kinds (~210 lines), a case each of
  // a few instructions: the code for every kind of D expression reads as
  // one table, as a compiler's expression switch does (DTrace's dt_cg_node).
  uint8_t gen(const Node* n, Ty* t) {
    switch (n->kind) {
      case NK::kInt: {
        uint8_t r = alloc(n);
        emit(kOpSetx, r, 0, 0, intconst(n->ival));
        *t = Ty::kInt;
        return r;
      }
      case NK::kString: {
        uint8_t r = alloc(n);
        emit(kOpSets, r, 0, 0, strconst(n->name));
        *t = Ty::kString;
        return r;
      }
      case NK::kIdent: {
        uint32_t id;
        if (builtin_id(n->name, &id, t)) {
          uint8_t r = alloc(n);
          emit(kOpLdgs, r, 0, 0, id);
          return r;
        }
        const VarSym* s = sym_for_load(globals, n);
        if (!s) fail(n, "undefined variable '" + n->name + "'");
        *t = s->type;
        uint8_t r = alloc(n);
        emit(kOpLdgs, r, 0, 0, s->id | (s->type == Ty::kString ? kVarRef : 0));
        return r;
      }
      case NK::kSelf:
      case NK::kThis: {
        bool self = n->kind == NK::kSelf;
        const VarSym* s = sym_for_load(self ? selfs : locals, n);
        if (!s) fail(n, std::string("undefined variable '") + (self ? "self->" : "this->") + n->name + "'");
        *t = s->type;
        uint8_t r = alloc(n);
        emit(self ? kOpLdts : kOpLdls, r, 0, 0, s->id | (s->type == Ty::kString ? kVarRef : 0));
        return r;
      }
      case NK::kAssoc:
      case NK::kSelfAssoc: {
        bool self = n->kind == NK::kSelfAssoc;
        if (!self && n->name == "args") {
          // args[N]: the probe's Nth argument (argN); N a constant, as dtrace
          // requires (each argument has its own type there).
          uint64_t i;
          if (n->kids.size() != 1 || !constant_value(n->kids[0].get(), &i) || i >= kMaxArgs)
            fail(n, "args[] takes one constant index from 0 to " + std::to_string(kMaxArgs - 1));
          uint8_t r = alloc(n);
          emit(kOpLdgs, r, 0, 0, kVarArg0 + static_cast<uint32_t>(i));
          *t = Ty::kInt;
          return r;
        }
        const VarSym* s = sym_for_load(self ? self_assocs : assocs, n);
        if (!s) fail(n, "undefined associative array '" + std::string(self ? "self->" : "") + n->name + "'");
        push_keys(n, 0);
        *t = s->type;
        uint8_t r = alloc(n);
        emit(self ? kOpLdta : kOpLdga, r, 0, 0, s->id | (s->type == Ty::kString ? kVarRef : 0));
        return r;
      }
      case NK::kDeref: {
        Ty at;
        uint8_t r = gen(n->kids[0].get(), &at);
        if (at != Ty::kInt) fail(n, "cannot dereference a string");
        emit(kOpLdx, r, r, 0, 0);
        *t = Ty::kInt;
        return r;
      }
      case NK::kUnary: {
        Ty at;
        uint8_t r = gen(n->kids[0].get(), &at);
        if (at != Ty::kInt) fail(n, "operator " + n->op + " needs an integer operand");
        if (n->op == "-")
          emit(kOpSub, r, 0, r, 0);
        else if (n->op == "~")
          emit(kOpNot, r, r, 0, 0);
        else {  // !
          emit(kOpTst, 0, r, 0, 0);
          gen_cond_value(kOpBe, r);
        }
        *t = Ty::kInt;
        return r;
      }
      case NK::kBinary: {
        Ty ta, tb;
        uint8_t a = gen(n->kids[0].get(), &ta);
        uint8_t b = gen(n->kids[1].get(), &tb);
        if (ta == Ty::kVoid || tb == Ty::kVoid) fail(n, "operand has no value");
        static const std::map<std::string, uint8_t> kCmp = {{"==", kOpBe},  {"!=", kOpBne}, {"<", kOpBl},
                                                            {"<=", kOpBle}, {">", kOpBg},   {">=", kOpBge}};
        auto c = kCmp.find(n->op);
        if (c != kCmp.end()) {
          if (ta != tb) fail(n, "operands of " + n->op + " have incompatible types (string and integer)");
          emit(ta == Ty::kString ? kOpScmp : kOpCmp, 0, a, b, 0);
          release(b);
          gen_cond_value(c->second, a);
          *t = Ty::kInt;
          return a;
        }
        if (ta != Ty::kInt || tb != Ty::kInt) fail(n, "operator " + n->op + " needs integer operands");
        if (n->op == "/" || n->op == "%") refuse_zero_divisor(n->kids[1].get());
        if (n->op == "^^") {
          // Logical xor (D's ^^): both sides evaluated, each made 0/1.
          emit(kOpTst, 0, a, 0, 0);
          gen_cond_value(kOpBne, a);
          emit(kOpTst, 0, b, 0, 0);
          gen_cond_value(kOpBne, b);
          emit(kOpXor, a, a, b, 0);
          release(b);
          *t = Ty::kInt;
          return a;
        }
        static const std::map<std::string, uint8_t> kAlu = {
            {"+", kOpAdd}, {"-", kOpSub}, {"*", kOpMul}, {"/", kOpSdiv}, {"%", kOpSrem},
            {"&", kOpAnd}, {"|", kOpOr},  {"^", kOpXor}, {"<<", kOpSll}, {">>", kOpSra}};
        emit(kAlu.at(n->op), a, a, b, 0);
        release(b);
        *t = Ty::kInt;
        return a;
      }
      case NK::kLogical: {
        // Short circuit: a && b, a || b -> 0/1.
        Ty ta, tb;
        uint8_t a = gen(n->kids[0].get(), &ta);
        if (ta != Ty::kInt) fail(n->kids[0].get(), "operand of " + n->op + " must be an integer");
        emit(kOpTst, 0, a, 0, 0);
        size_t shortc = emit(n->op == "&&" ? kOpBe : kOpBne, 0, 0, 0, 0);
        uint8_t b = gen(n->kids[1].get(), &tb);
        if (tb != Ty::kInt) fail(n->kids[1].get(), "operand of " + n->op + " must be an integer");
        emit(kOpTst, 0, b, 0, 0);
        release(b);
        size_t shortc2 = emit(n->op == "&&" ? kOpBe : kOpBne, 0, 0, 0, 0);
        emit(kOpSetx, a, 0, 0, intconst(n->op == "&&" ? 1 : 0));
        size_t end = emit(kOpBa, 0, 0, 0, 0);
        patch(shortc);
        patch(shortc2);
        emit(kOpSetx, a, 0, 0, intconst(n->op == "&&" ? 0 : 1));
        patch(end);
        *t = Ty::kInt;
        return a;
      }
      case NK::kTernary: {
        Ty tc, ta, tb;
        uint8_t c = gen(n->kids[0].get(), &tc);
        if (tc != Ty::kInt) fail(n->kids[0].get(), "condition must be an integer");
        emit(kOpTst, 0, c, 0, 0);
        size_t to_else = emit(kOpBe, 0, 0, 0, 0);
        uint8_t a = gen(n->kids[1].get(), &ta);
        emit(kOpMov, c, a, 0, 0);
        release(a);
        size_t to_end = emit(kOpBa, 0, 0, 0, 0);
        patch(to_else);
        uint8_t b = gen(n->kids[2].get(), &tb);
        if (ta != tb) fail(n, "branches of ?: have incompatible types");
        emit(kOpMov, c, b, 0, 0);
        release(b);
        patch(to_end);
        *t = ta;
        return c;
      }
      case NK::kAssign: {
        const Node* lhs = n->kids[0].get();
        Ty tv;
        uint8_t v;
        if (n->op == "=") {
          v = gen(n->kids[1].get(), &tv);
          if (tv == Ty::kVoid) fail(n->kids[1].get(), "right side of assignment has no value");
        } else {
          Ty tl;
          v = load_lvalue(lhs, &tl);
          Ty tr;
          uint8_t r = gen(n->kids[1].get(), &tr);
          if (tl != Ty::kInt || tr != Ty::kInt) fail(n, "operator " + n->op + " needs integer operands");
          if (n->op == "/=" || n->op == "%=") refuse_zero_divisor(n->kids[1].get());
          static const std::map<std::string, uint8_t> kAlu = {
              {"+=", kOpAdd}, {"-=", kOpSub}, {"*=", kOpMul}, {"/=", kOpSdiv}, {"%=", kOpSrem},
              {"&=", kOpAnd}, {"|=", kOpOr},  {"^=", kOpXor}, {"<<=", kOpSll}, {">>=", kOpSra}};
          emit(kAlu.at(n->op), v, v, r, 0);
          release(r);
          tv = Ty::kInt;
        }
        store_lvalue(lhs, v, tv);
        *t = tv;
        return v;
      }
      case NK::kIncDec: {
        const Node* lhs = n->kids[0].get();
        if (lhs->kind == NK::kInt || lhs->kind == NK::kString || lhs->kind == NK::kCall)
          fail(n, "operand of " + n->op + " must be a variable");
        Ty tl;
        uint8_t v = load_lvalue(lhs, &tl);
        if (tl != Ty::kInt) fail(n, "operand of " + n->op + " must be an integer");
        uint8_t one = alloc(n);
        emit(kOpSetx, one, 0, 0, intconst(1));
        uint8_t nv = alloc(n);
        emit(n->op == "++" ? kOpAdd : kOpSub, nv, v, one, 0);
        release(one);
        store_lvalue(lhs, nv, Ty::kInt);
        if (n->prefix) {
          release(v);
          *t = Ty::kInt;
          return nv;
        }
        release(nv);
        *t = Ty::kInt;
        return v;
      }
      case NK::kCall: return gen_call(n, t);
      case NK::kAgg: fail(n, "aggregation is only allowed as a statement");
      case NK::kAggRef:
        fail(n, "@" + n->name + " can only be an argument of printa(), clear(), trunc(), normalize() or denormalize()");
    }
    fail(n, "internal: unknown node");
  }

  uint8_t gen_call(const Node* n, Ty* t) {
    static const std::map<std::string, std::pair<Subr, std::vector<Ty>>> kSubrs = {
        {"strlen", {kSubrStrlen, {Ty::kString}}},
        {"strjoin", {kSubrStrjoin, {Ty::kString, Ty::kString}}},
        {"alloca", {kSubrAlloca, {Ty::kInt}}},
        {"bcopy", {kSubrBcopy, {Ty::kInt, Ty::kInt, Ty::kInt}}},
        {"copyin", {kSubrCopyin, {Ty::kInt, Ty::kInt}}},
        {"copyinstr", {kSubrCopyinstr, {Ty::kInt}}},
        {"rand", {kSubrRand, {}}}};
    auto it = kSubrs.find(n->name);
    if (it == kSubrs.end()) {
      static const char* const kActions[] = {
          "printf",   "trace",     "tracemem",   "stack",  "exit",   "count", "sum",   "min",       "max",        "avg",
          "quantize", "lquantize", "llquantize", "stddev", "printa", "clear", "trunc", "normalize", "denormalize"};
      for (const char* a : kActions)
        if (n->name == a) fail(n, n->name + "() may only be used as a statement");
      fail(n, "unknown function '" + n->name + "'");
    }
    const auto& [subr, argt] = it->second;
    if (n->kids.size() != argt.size())
      fail(n, n->name + "() takes " + std::to_string(argt.size()) + " argument" + (argt.size() == 1 ? "" : "s") + ", " +
                  std::to_string(n->kids.size()) + " given");
    std::vector<std::pair<uint8_t, Ty>> regs;
    for (size_t i = 0; i < n->kids.size(); i++) {
      Ty at;
      uint8_t r = gen(n->kids[i].get(), &at);
      // Strings are pointers: integer arguments may take them (copyin(s, n)).
      if (argt[i] == Ty::kString && at != Ty::kString)
        fail(n->kids[i].get(), "argument " + std::to_string(i + 1) + " of " + n->name + "() must be a string");
      regs.push_back({r, at});
    }
    emit(kOpFlushts, 0, 0, 0, 0);
    for (auto& [r, at] : regs) {
      emit(kOpPushtv, 0, r, 0, 0);
      release(r);
    }
    uint8_t rd = alloc(n);
    emit(kOpCall, rd, 0, 0, subr);
    emit(kOpFlushts, 0, 0, 0, 0);
    *t = (subr == kSubrStrjoin || subr == kSubrCopyinstr) ? Ty::kString : subr == kSubrBcopy ? Ty::kVoid : Ty::kInt;
    return rd;
  }
};

}  // namespace tbdvm::compiler_detail
