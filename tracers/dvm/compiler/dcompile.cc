// D subset compiler driver: clauses (probe descriptions, predicate,
// statements) and actions, on top of the lexer (lexer.h), the parser
// (parser.h) and the code generator (codegen.h); one pass per clause.
#include "tracers/dvm/compiler/dcompile.h"

#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracers/dvm/compiler/codegen.h"

namespace tbdvm {

namespace {

using namespace compiler_detail;

// ---------------------------------------------------------------------------
class Compiler {
 public:
  Compiler(const std::string& src, const Macros* m) : lx_(src, m) {}

  CompileResult run() {
    CompileResult res;
    auto prog = std::make_shared<CompiledProgram>();
    prog_ = prog.get();
    cg_ = std::make_unique<Codegen>(prog_);
    try {
      while (true) {
        std::string k, v;
        while (lx_.pragma(&k, &v)) res.options[k] = v;
        if (lx_.at_end()) break;
        clause();
      }
      if (prog_->clauses.empty()) throw CompileError{lx_.line(), lx_.col(), "program has no clauses"};
      resolve_agg_refs();
    } catch (const CompileError& e) {
      res.line = e.line;
      res.column = e.col;
      res.error = "line " + std::to_string(e.line) + ", column " + std::to_string(e.col) + ": " + e.msg;
      return res;
    }
    res.program = std::move(prog);
    return res;
  }

 private:
  Lexer lx_;
  CompiledProgram* prog_ = nullptr;
  std::unique_ptr<Codegen> cg_;
  // printa/clear/trunc/normalize/denormalize name an aggregation that a later
  // clause may define: resolved once every clause is compiled.
  struct AggRef {
    size_t clause, action;
    std::string name;
    int line, col;
  };
  std::vector<AggRef> agg_refs_;

  // A conversion's width and precision: what one conversion prints is kept
  // to 511 bytes (records.cc), but the C library writes the whole field
  // first, so %99999999d would cost ~0.3 s per firing.  Refused above this.
  static constexpr unsigned long kMaxFieldSize = 511;
  static void check_field_sizes(const Node* fmt, const std::string& spec, bool printa) {
    for (size_t k = 0; k < spec.size(); k++) {
      if (!std::isdigit(static_cast<unsigned char>(spec[k])) ||
          (spec[k] == '0' && (k == 0 || !std::isdigit(static_cast<unsigned char>(spec[k - 1])))))
        continue;
      size_t end = k;
      while (end < spec.size() && std::isdigit(static_cast<unsigned char>(spec[end]))) end++;
      const std::string digits = spec.substr(k, end - k);
      if (digits.size() > 3 || std::stoul(digits) > kMaxFieldSize)
        Codegen::fail(fmt, std::string(printa ? "printa" : "printf") + "() conversion " + spec + ": width or " +
                               "precision " + digits + " is above " + std::to_string(kMaxFieldSize));
      k = end - 1;
    }
  }

  // Splits a printf/printa format into literal text and conversions ('@'
  // marks printa's value), refusing an invalid conversion.
  static std::vector<FormatPiece> split_format(const Node* fmt, bool printa) {
    std::vector<FormatPiece> out(1);
    const std::string& f = fmt->name;
    for (size_t i = 0; i < f.size(); i++) {
      if (f[i] != '%') {
        out.back().text += f[i];
        continue;
      }
      if (i + 1 < f.size() && f[i + 1] == '%') {
        out.back().text += '%';
        i++;
        continue;
      }
      FormatPiece& p = out.back();
      p.spec = "%";
      size_t j = i + 1;
      for (; j < f.size() && std::strchr(printa ? "-+ #0123456789.@" : "-+ #0123456789.", f[j]); j++) {
        if (f[j] == '@')
          p.value = true;
        else
          p.spec += f[j];
      }
      check_field_sizes(fmt, p.spec, printa);
      while (j < f.size() && std::strchr("hlLqjzt", f[j])) j++;
      if (j >= f.size() || !std::strchr("diouxXcsp", f[j]))
        Codegen::fail(fmt, std::string(printa ? "printa" : "printf") +
                               "() format has an invalid conversion at offset " + std::to_string(i));
      p.conv = f[j];
      out.emplace_back();
      i = j;
    }
    return out;
  }

  void resolve_agg_refs() {
    for (const AggRef& r : agg_refs_) {
      ActionDesc& a = prog_->clauses[r.clause].actions[r.action];
      uint32_t id = 0;
      while (id < prog_->aggs.size() && prog_->aggs[id].name != r.name) id++;
      if (id == prog_->aggs.size())
        throw CompileError{r.line, r.col, "@" + r.name + " is not an aggregation of this program"};
      a.agg_id = id;
      if (a.agg_format < 0) continue;
      // printa's key conversions against the aggregation's keys.
      PrintfDesc& pf = prog_->formats[static_cast<size_t>(a.agg_format)];
      const AggDesc& d = prog_->aggs[id];
      pf.arg_types = d.key_types;
      size_t key = 0;
      Node at{NK::kString};
      at.line = r.line;
      at.col = r.col;
      for (const FormatPiece& c : pf.pieces) {
        if (c.value || !c.conv) continue;
        if (key >= d.key_types.size())
          Codegen::fail(&at, "printa() format has more key conversions than @" + r.name + " has keys (" +
                                 std::to_string(d.key_types.size()) + ")");
        if (d.key_types[key] == ValueType::kString && c.conv != 's')
          Codegen::fail(&at, std::string("printa() conversion %") + c.conv + " needs an integer but key " +
                                 std::to_string(key + 1) + " of @" + r.name + " is a string");
        key++;
      }
    }
  }

  void clause() {
    ClauseDesc c;
    Token first = lx_.probe_desc();
    c.line = first.line;
    c.probes.push_back(first.text);
    lx_.skip_space();
    while (lx_.peekc() == ',') {
      lx_.adv(1);
      c.probes.push_back(lx_.probe_desc().text);
      lx_.skip_space();
    }
    Parser ps(lx_);
    if (ps.is("/")) {
      ps.advance();
      ps.predicate_depth = 1;
      NodeP pred = ps.expr();
      ps.predicate_depth = 0;
      ps.expect("/");
      Ty t;
      c.predicate = cg_->expr_object(pred.get(), &t);
      if (t != Ty::kInt) Codegen::fail(pred.get(), "predicate must be an integer expression");
    }
    if (!ps.is("{")) ps.fail(ps.cur(), "expected '{' to start the clause body but found " + Parser::describe(ps.cur()));
    // The lexer is now positioned after '{' (the parser consumed it as the current token).
    ps.advance();
    while (!ps.is("}")) {
      if (ps.cur().kind == Tok::kEnd)
        ps.fail(ps.cur(), "expected '}' to close the clause that starts at line " + std::to_string(c.line));
      if (ps.is(";")) {
        ps.advance();
        continue;
      }
      NodeP st = ps.statement();
      statement(st.get(), &c);
      if (!ps.is("}")) ps.expect(";");
    }
    // Do not advance past '}' with the expression lexer: the next clause
    // starts with a probe description.
    prog_->clauses.push_back(std::move(c));
  }

  static int64_t const_int(const Node* n, const char* what) {
    if (n->kind == NK::kInt) return static_cast<int64_t>(n->ival);
    if (n->kind == NK::kUnary && n->op == "-" && n->kids[0]->kind == NK::kInt)
      return static_cast<int64_t>(0 - n->kids[0]->ival);
    Codegen::fail(n, std::string(what) + " must be an integer constant");
  }

  void statement(const Node* st, ClauseDesc* c) {
    if (st->kind == NK::kAgg) return aggregation(st, c);
    if (st->kind == NK::kCall) {
      const std::string& f = st->name;
      if (f == "printf") return printf_stmt(st, c);
      if (f == "printa" || f == "clear" || f == "trunc" || f == "normalize" || f == "denormalize")
        return agg_op_stmt(st, c);
      if (f == "trace" || f == "exit") {
        if (st->kids.size() != 1) Codegen::fail(st, f + "() takes 1 argument");
        ActionDesc a;
        a.kind = f == "trace" ? kActTrace : kActExit;
        Ty t;
        a.value = cg_->expr_object(st->kids[0].get(), &t);
        if (f == "exit" && t != Ty::kInt) Codegen::fail(st->kids[0].get(), "exit() needs an integer");
        c->actions.push_back(std::move(a));
        return;
      }
      if (f == "tracemem") {
        if (st->kids.size() != 2) Codegen::fail(st, "tracemem() takes 2 arguments (address, size)");
        int64_t n = const_int(st->kids[1].get(), "tracemem() size");
        if (n <= 0 || n > 65536) Codegen::fail(st->kids[1].get(), "tracemem() size must be in 1..65536");
        ActionDesc a;
        a.kind = kActTracemem;
        a.size = static_cast<uint32_t>(n);
        Ty t;
        a.value = cg_->expr_object(st->kids[0].get(), &t);
        c->actions.push_back(std::move(a));
        return;
      }
      if (f == "stack" || f == "ustack") {
        int64_t frames = 20;
        if (st->kids.size() > 1) Codegen::fail(st, f + "() takes at most 1 argument");
        if (st->kids.size() == 1) frames = const_int(st->kids[0].get(), "stack() depth");
        if (frames <= 0 || frames > 128) Codegen::fail(st, "stack() depth must be in 1..128");
        ActionDesc a;
        a.kind = kActStack;
        a.size = static_cast<uint32_t>(frames * 8);
        c->actions.push_back(std::move(a));
        return;
      }
    }
    ActionDesc a;
    a.kind = kActDifExpr;
    a.value = cg_->stmt_object(st);
    c->actions.push_back(std::move(a));
  }

  // printa([fmt,] @a), clear(@a), trunc(@a[, n]), normalize(@a, n), denormalize(@a).
  void agg_op_stmt(const Node* st, ClauseDesc* c) {
    const std::string& f = st->name;
    ActionDesc a;
    a.kind = kActTrace;
    size_t ai = 0;  // the aggregation's argument
    if (f == "printa") {
      if (st->kids.size() == 2) {
        if (st->kids[0]->kind != NK::kString)
          Codegen::fail(st->kids[0].get(), "printa() needs a string constant format before the aggregation");
        PrintfDesc pf;
        pf.format = st->kids[0]->name;
        pf.pieces = split_format(st->kids[0].get(), true);
        a.agg_format = static_cast<int32_t>(prog_->formats.size());
        prog_->formats.push_back(std::move(pf));
        ai = 1;
      } else if (st->kids.size() != 1) {
        Codegen::fail(st, "printa() takes an aggregation, optionally after a format (one aggregation at a time)");
      }
      a.agg_op = AggOp::kPrinta;
    } else if (f == "trunc") {
      if (st->kids.empty() || st->kids.size() > 2)
        Codegen::fail(st, "trunc() takes an aggregation and an optional count");
      a.agg_op = AggOp::kTrunc;
      a.agg_has_count = st->kids.size() == 2;
    } else if (f == "normalize") {
      if (st->kids.size() != 2) Codegen::fail(st, "normalize() takes an aggregation and a factor");
      a.agg_op = AggOp::kNormalize;
    } else {
      if (st->kids.size() != 1) Codegen::fail(st, f + "() takes one aggregation");
      a.agg_op = f == "clear" ? AggOp::kClear : AggOp::kDenormalize;
    }
    const Node* ref = st->kids[ai].get();
    if (ref->kind != NK::kAggRef)
      Codegen::fail(ref, f + "() needs an aggregation (@name) as argument " + std::to_string(ai + 1));
    Ty t;
    if (st->kids.size() == 2 && ai == 0) {
      a.value = cg_->expr_object(st->kids[1].get(), &t);
      if (t != Ty::kInt) Codegen::fail(st->kids[1].get(), f + "() needs an integer as its second argument");
    } else {
      Node zero{NK::kInt};
      zero.line = st->line;
      zero.col = st->col;
      a.value = cg_->expr_object(&zero, &t);
    }
    agg_refs_.push_back({prog_->clauses.size(), c->actions.size(), ref->name, ref->line, ref->col});
    c->actions.push_back(std::move(a));
  }

  void printf_stmt(const Node* st, ClauseDesc* c) {
    if (st->kids.empty() || st->kids[0]->kind != NK::kString)
      Codegen::fail(st, "printf() needs a string constant format as its first argument");
    PrintfDesc pf;
    pf.format = st->kids[0]->name;
    pf.pieces = split_format(st->kids[0].get(), false);
    // Count conversions and check them against the arguments.
    std::vector<char> convs;
    for (const FormatPiece& p : pf.pieces)
      if (p.conv) convs.push_back(p.conv);
    if (convs.size() != st->kids.size() - 1)
      Codegen::fail(st, "printf() format has " + std::to_string(convs.size()) + " conversion" +
                            (convs.size() == 1 ? "" : "s") + " but " + std::to_string(st->kids.size() - 1) +
                            " argument" + (st->kids.size() == 2 ? "" : "s") + " follow");
    uint32_t fid = static_cast<uint32_t>(prog_->formats.size());
    std::vector<ActionDesc> acts;
    for (size_t i = 1; i < st->kids.size(); i++) {
      ActionDesc a;
      a.kind = kActPrintf;
      a.format_id = fid;
      a.arg_index = static_cast<uint32_t>(i - 1);
      Ty t;
      a.value = cg_->expr_object(st->kids[i].get(), &t);
      if (t == Ty::kString && convs[i - 1] != 's')
        Codegen::fail(st->kids[i].get(), std::string("printf() conversion %") + convs[i - 1] +
                                             " needs an integer but argument " + std::to_string(i) + " is a string");
      pf.arg_types.push_back(t == Ty::kString ? ValueType::kString : ValueType::kInt);
      acts.push_back(std::move(a));
    }
    if (acts.empty()) {
      ActionDesc a;
      a.kind = kActPrintf;
      a.format_id = fid;
      acts.push_back(std::move(a));
    }
    prog_->formats.push_back(std::move(pf));
    for (auto& a : acts) c->actions.push_back(std::move(a));
  }

  // Long (~80 lines): the aggregating functions' argument rules side by
  // side, one table of what each function takes.
  void aggregation(const Node* st, ClauseDesc* c) {
    const Node* keys = st->kids[0].get();
    const Node* call = st->kids[1].get();
    static const std::map<std::string, AggKind> kFns = {{"count", kAggCount},
                                                        {"sum", kAggSum},
                                                        {"min", kAggMin},
                                                        {"max", kAggMax},
                                                        {"avg", kAggAvg},
                                                        {"quantize", kAggQuantize},
                                                        {"lquantize", kAggLquantize},
                                                        {"stddev", kAggStddev},
                                                        {"llquantize", kAggLlquantize}};
    auto it = kFns.find(call->name);
    if (it == kFns.end()) Codegen::fail(call, "'" + call->name + "' is not an aggregating function");
    AggKind kind = it->second;
    size_t want = kind == kAggCount ? 0 : kind == kAggLquantize ? 3 : kind == kAggLlquantize ? 5 : 1;
    size_t got = call->kids.size();
    if (!(got == want || (kind == kAggLquantize && got == 4)))
      Codegen::fail(call, call->name + "() takes " + std::to_string(want) + (kind == kAggLquantize ? " or 4" : "") +
                              " argument" + (want == 1 ? "" : "s") + ", " + std::to_string(got) + " given");
    ActionDesc a;
    a.kind = kActAggregate;
    a.agg_kind = kind;
    if (kind == kAggLquantize) {
      a.lq_base = const_int(call->kids[1].get(), "lquantize() lower bound");
      a.lq_limit = const_int(call->kids[2].get(), "lquantize() upper bound");
      a.lq_step = got == 4 ? const_int(call->kids[3].get(), "lquantize() step") : 1;
      if (a.lq_step <= 0) Codegen::fail(call, "lquantize() step must be positive");
      if (a.lq_limit <= a.lq_base) Codegen::fail(call, "lquantize() upper bound must be greater than the lower bound");
      if ((a.lq_limit - a.lq_base) / a.lq_step > 4096) Codegen::fail(call, "lquantize() has more than 4096 buckets");
    }
    if (kind == kAggLlquantize) {
      const int64_t factor = const_int(call->kids[1].get(), "llquantize() factor");
      const int64_t low = const_int(call->kids[2].get(), "llquantize() low magnitude");
      const int64_t high = const_int(call->kids[3].get(), "llquantize() high magnitude");
      const int64_t nsteps = const_int(call->kids[4].get(), "llquantize() steps");
      if (factor < 2 || factor > 65535) Codegen::fail(call->kids[1].get(), "llquantize() factor must be in 2..65535");
      if (low < 0 || low > 63) Codegen::fail(call->kids[2].get(), "llquantize() low magnitude must be in 0..63");
      if (high < low || high > 63)
        Codegen::fail(call->kids[3].get(), "llquantize() high magnitude must be at least the low one (and at most 63)");
      if (nsteps < factor || nsteps > 65535 || nsteps % factor != 0)
        Codegen::fail(call->kids[4].get(), "llquantize() steps must be a multiple of the factor, at least the factor");
      int64_t power = factor;  // dtrace's rule: whole, equal steps in every order
      while (power < nsteps) power *= factor;
      if (power % nsteps != 0)
        Codegen::fail(call->kids[4].get(), "llquantize() steps must evenly divide a power of the factor");
      a.lq_base = factor;
      a.lq_limit = llquantize_limit(low, high);
      a.lq_step = nsteps;
      const uint32_t top = llquantize_bucket(factor, a.lq_limit, nsteps, INT64_MAX);
      if (top == 0) Codegen::fail(call, "llquantize() factor^(high+1) does not fit in 63 bits");
      if (top + 1 > kAggMaxBuckets) Codegen::fail(call, "llquantize() has more than 4096 buckets");
    }
    if (want > 0) {
      Ty t;
      a.value = cg_->expr_object(call->kids[0].get(), &t);
      if (t != Ty::kInt) Codegen::fail(call->kids[0].get(), call->name + "() needs an integer argument");
    }
    std::vector<ValueType> ktypes;
    for (auto& k : keys->kids) {
      Ty t;
      a.keys.push_back(cg_->expr_object(k.get(), &t));
      ktypes.push_back(t == Ty::kString ? ValueType::kString : ValueType::kInt);
    }
    if (ktypes.size() > kMaxTuple) Codegen::fail(st, "aggregation has more than 8 keys");
    // One description per name; every use must agree.
    uint32_t id = 0;
    for (; id < prog_->aggs.size(); id++)
      if (prog_->aggs[id].name == st->name) break;
    if (id == prog_->aggs.size()) {
      AggDesc d;
      d.name = st->name;
      d.kind = kind;
      d.key_types = ktypes;
      d.lq_base = a.lq_base;
      d.lq_limit = a.lq_limit;
      d.lq_step = a.lq_step;
      prog_->aggs.push_back(d);
    } else {
      AggDesc& d = prog_->aggs[id];
      if (d.kind != kind || d.lq_base != a.lq_base || d.lq_limit != a.lq_limit || d.lq_step != a.lq_step)
        Codegen::fail(call, "@" + st->name + " is already used with a different aggregating function");
      if (d.key_types != ktypes) Codegen::fail(st, "@" + st->name + " is already used with different keys");
    }
    a.agg_id = id;
    c->actions.push_back(std::move(a));
  }
};

}  // namespace

CompileResult compile_d(const std::string& source) { return compile_d(source, CompileOptions{}); }

CompileResult compile_d(const std::string& source, const CompileOptions& options) {
  Macros m;
  m.args = options.args;
  if (options.target >= 0) m.vars["target"] = options.target;
  m.vars["pid"] = getpid();
  m.vars["ppid"] = getppid();
  m.vars["uid"] = getuid();
  m.vars["gid"] = getgid();
  m.vars["euid"] = geteuid();
  m.vars["egid"] = getegid();
  m.vars["pgid"] = getpgrp();
  m.vars["sid"] = getsid(0);
  Compiler c(source, &m);
  return c.run();
}

}  // namespace tbdvm
