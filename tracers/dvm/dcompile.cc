// D subset: lexer, recursive-descent parser and DIF code generator in one
// pass per clause.
#include "tracers/dvm/dcompile.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

namespace tbdvm {

namespace {

struct CompileError {
  int line, col;
  std::string msg;
};

enum class Tok {
  kEnd, kIdent, kInt, kString, kPunct, kProbeDesc
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, punctuator, decoded string, probe description
  uint64_t ival = 0;
  int line = 1, col = 1;
};

class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}

  [[noreturn]] void fail(int line, int col, const std::string& m) { throw CompileError{line, col, m}; }

  void skip_space() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') { line_++; col_ = 1; pos_++; }
      else if (std::isspace(static_cast<unsigned char>(c))) { col_++; pos_++; }
      else if (c == '/' && peekc(1) == '*') {
        int l = line_, co = col_;
        adv(2);
        while (pos_ < s_.size() && !(s_[pos_] == '*' && peekc(1) == '/')) adv(1);
        if (pos_ >= s_.size()) fail(l, co, "unterminated comment");
        adv(2);
      } else if (c == '/' && peekc(1) == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n') adv(1);
      } else {
        break;
      }
    }
  }

  char peekc(size_t k = 0) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }
  void adv(size_t n) {
    for (size_t i = 0; i < n && pos_ < s_.size(); i++) {
      if (s_[pos_] == '\n') { line_++; col_ = 1; } else { col_++; }
      pos_++;
    }
  }
  bool at_end() { skip_space(); return pos_ >= s_.size(); }
  int line() const { return line_; }
  int col() const { return col_; }

  // `#pragma D option x=y` at the start of a line; returns false if none.
  bool pragma(std::string* key, std::string* value) {
    skip_space();
    if (peekc() != '#') return false;
    int l = line_, c = col_;
    size_t e = s_.find('\n', pos_);
    std::string ln = s_.substr(pos_, e == std::string::npos ? std::string::npos : e - pos_);
    adv(ln.size());
    const std::string prefix = "#pragma D option ";
    if (ln.rfind(prefix, 0) != 0) fail(l, c, "only '#pragma D option name[=value]' is supported");
    std::string opt = ln.substr(prefix.size());
    while (!opt.empty() && std::isspace(static_cast<unsigned char>(opt.back()))) opt.pop_back();
    auto eq = opt.find('=');
    *key = opt.substr(0, eq);
    *value = eq == std::string::npos ? "" : opt.substr(eq + 1);
    return true;
  }

  // Probe descriptions are lexed raw: provider:module:function:name with globs.
  Token probe_desc() {
    skip_space();
    Token t;
    t.kind = Tok::kProbeDesc;
    t.line = line_;
    t.col = col_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || std::strchr(":_-*?.[]!$", c)) {
        t.text += c;
        adv(1);
      } else {
        break;
      }
    }
    if (t.text.empty()) fail(t.line, t.col, "expected a probe description (provider:module:function:name)");
    size_t colons = 0;
    for (char c : t.text) colons += c == ':';
    if (colons > 3) fail(t.line, t.col, "probe description '" + t.text + "' has more than four fields");
    return t;
  }

  Token next() {
    skip_space();
    Token t;
    t.line = line_;
    t.col = col_;
    if (pos_ >= s_.size()) return t;
    char c = s_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Tok::kIdent;
      while (std::isalnum(static_cast<unsigned char>(peekc())) || peekc() == '_') {
        t.text += peekc();
        adv(1);
      }
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      t.kind = Tok::kInt;
      size_t start = pos_;
      int base = 10;
      if (c == '0' && (peekc(1) == 'x' || peekc(1) == 'X')) { base = 16; adv(2); }
      else if (c == '0' && std::isdigit(static_cast<unsigned char>(peekc(1)))) { base = 8; adv(1); }
      uint64_t v = 0;
      bool any = base != 16;
      while (true) {
        char d = peekc();
        int dv;
        if (std::isdigit(static_cast<unsigned char>(d))) dv = d - '0';
        else if (base == 16 && std::isxdigit(static_cast<unsigned char>(d))) dv = std::tolower(d) - 'a' + 10;
        else break;
        if (dv >= base) fail(line_, col_, "invalid digit in integer constant");
        uint64_t nv = v * base + dv;
        if ((nv - dv) / base != v) fail(t.line, t.col, "integer constant too large");
        v = nv;
        any = true;
        adv(1);
      }
      if (!any) fail(t.line, t.col, "invalid hexadecimal constant");
      while (peekc() == 'u' || peekc() == 'U' || peekc() == 'l' || peekc() == 'L') adv(1);
      if (std::isalpha(static_cast<unsigned char>(peekc())) || peekc() == '_')
        fail(line_, col_, "invalid suffix on integer constant");
      t.ival = v;
      t.text = s_.substr(start, pos_ - start);
      return t;
    }
    if (c == '"' || c == '\'') {
      char q = c;
      adv(1);
      std::string v;
      while (true) {
        if (pos_ >= s_.size() || peekc() == '\n')
          fail(t.line, t.col, q == '"' ? "unterminated string constant" : "unterminated character constant");
        char d = peekc();
        if (d == q) { adv(1); break; }
        if (d == '\\') {
          char e = peekc(1);
          int el = line_, ec = col_;
          if (e == '\n' || e == '\0') fail(t.line, t.col, "unterminated string constant");
          adv(2);
          switch (e) {
            case 'n': v += '\n'; break;
            case 't': v += '\t'; break;
            case 'r': v += '\r'; break;
            case '0': v += '\0'; break;
            case '\\': v += '\\'; break;
            case '"': v += '"'; break;
            case '\'': v += '\''; break;
            case 'a': v += '\a'; break;
            default: fail(el, ec, std::string("unknown escape sequence '\\") + e + "'");
          }
          continue;
        }
        v += d;
        adv(1);
      }
      if (q == '\'') {
        if (v.size() != 1) fail(t.line, t.col, "character constant must hold one character");
        t.kind = Tok::kInt;
        t.ival = static_cast<uint8_t>(v[0]);
        t.text = "'" + v + "'";
      } else {
        t.kind = Tok::kString;
        t.text = v;
      }
      return t;
    }
    static const char* const kPuncts[] = {
        "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=",
        "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "{",  "}",  "(",  ")",  "[",  "]",  ",",
        ";",   ":",   "/",  "?",  "+",  "-",  "*",  "%",  "&",  "|",  "^",  "~",  "!",  "<",
        ">",   "=",   "@",  "."};
    for (const char* p : kPuncts) {
      size_t n = std::strlen(p);
      if (s_.compare(pos_, n, p) == 0) {
        t.kind = Tok::kPunct;
        t.text = p;
        adv(n);
        return t;
      }
    }
    fail(line_, col_, std::string("unexpected character '") + c + "'");
  }

  size_t pos() const { return pos_; }
  void reset(size_t p, int l, int c) { pos_ = p; line_ = l; col_ = c; }

 private:
  const std::string& s_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

// ---------------------------------------------------------------------------
// AST.
struct Node;
using NodeP = std::unique_ptr<Node>;

enum class NK {
  kInt, kString, kIdent, kSelf, kThis, kAssoc, kSelfAssoc, kCall, kUnary, kBinary, kLogical,
  kTernary, kAssign, kIncDec, kDeref, kAgg
};

struct Node {
  NK kind;
  int line = 0, col = 0;
  std::string op;    // operator, or name
  std::string name;  // variable / function / aggregation name
  uint64_t ival = 0;
  std::vector<NodeP> kids;  // operands, call args, assoc keys
  bool prefix = false;      // ++x vs x++
};

class Parser {
 public:
  explicit Parser(Lexer& lx) : lx_(lx) { advance(); }

  const Token& cur() const { return tok_; }
  void advance() { tok_ = lx_.next(); }
  bool is(const char* p) const { return tok_.kind == Tok::kPunct && tok_.text == p; }
  [[noreturn]] void fail(const Token& t, const std::string& m) { throw CompileError{t.line, t.col, m}; }
  void expect(const char* p) {
    if (!is(p)) fail(tok_, std::string("expected '") + p + "' but found " + describe(tok_));
    advance();
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEnd: return "end of input";
      case Tok::kIdent: return "'" + t.text + "'";
      case Tok::kInt: return "integer " + t.text;
      case Tok::kString: return "string constant";
      default: return "'" + t.text + "'";
    }
  }

  int predicate_depth = 0;  // > 0 while inside /.../ at paren depth 0
  int paren_depth = 0;

  // Hostile input must not exhaust the stack: the recursive descent is
  // limited in depth (parentheses, unary chains, nested ternaries and
  // assignments), and one expression in size (a left-deep chain a+a+...+a is
  // built by a loop, but generating and freeing it recurse).
  static constexpr int kMaxNesting = 512;  // a parenthesis counts 2 (assignment + operand level)
  static constexpr int kMaxNodes = 4096;
  int nesting_ = 0, nodes_ = 0;
  struct Nest {
    Parser* p;
    Nest(Parser* parser, const Token& at) : p(parser) {
      if (++p->nesting_ > kMaxNesting)
        p->fail(at, "expression nested too deeply (more than " + std::to_string(kMaxNesting) +
                        " levels of parentheses, unary operators and assignments)");
    }
    ~Nest() { --p->nesting_; }
  };

  NodeP mk(NK k, const Token& at) {
    if (++nodes_ > kMaxNodes)
      fail(at, "expression too large: more than " + std::to_string(kMaxNodes) + " operators and operands");
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->line = at.line;
    n->col = at.col;
    return n;
  }

  NodeP expr() { return assign(); }

  NodeP assign() {
    Token at = tok_;
    if (nesting_ == 0) nodes_ = 0;  // a new top-level expression
    Nest nest(this, at);
    NodeP lhs = ternary();
    static const char* const kOps[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
    for (const char* o : kOps) {
      if (is(o)) {
        if (predicate_depth && paren_depth == 0 && std::strcmp(o, "/=") == 0) break;
        Token op = tok_;
        advance();
        NodeP rhs = assign();
        auto n = mk(NK::kAssign, op);
        n->op = o;
        n->kids.push_back(std::move(lhs));
        n->kids.push_back(std::move(rhs));
        return n;
      }
    }
    return lhs;
  }

  NodeP ternary() {
    NodeP c = binary(0);
    if (is("?")) {
      Token at = tok_;
      advance();
      NodeP a = assign();
      expect(":");
      NodeP b = ternary();
      auto n = mk(NK::kTernary, at);
      n->kids.push_back(std::move(c));
      n->kids.push_back(std::move(a));
      n->kids.push_back(std::move(b));
      return n;
    }
    return c;
  }

  static int prec(const std::string& op) {
    static const std::map<std::string, int> kPrec = {
        {"||", 1}, {"^^", 2}, {"&&", 3}, {"|", 4}, {"^", 5}, {"&", 6}, {"==", 7}, {"!=", 7},
        {"<", 8},  {"<=", 8}, {">", 8},  {">=", 8}, {"<<", 9}, {">>", 9}, {"+", 10}, {"-", 10},
        {"*", 11}, {"/", 11}, {"%", 11}};
    auto it = kPrec.find(op);
    return it == kPrec.end() ? -1 : it->second;
  }

  NodeP binary(int min_prec) {
    NodeP lhs = unary();
    while (tok_.kind == Tok::kPunct) {
      std::string op = tok_.text;
      int p = prec(op);
      if (p < 0 || p <= min_prec - 1 || p < min_prec) break;
      if (op == "/" && predicate_depth && paren_depth == 0) break;  // closes the predicate
      Token at = tok_;
      advance();
      NodeP rhs = binary(p + 1);
      auto n = mk(op == "&&" || op == "||" ? NK::kLogical : NK::kBinary, at);
      n->op = op;
      n->kids.push_back(std::move(lhs));
      n->kids.push_back(std::move(rhs));
      lhs = std::move(n);
    }
    return lhs;
  }

  NodeP unary() {
    Token at = tok_;
    Nest nest(this, at);
    if (is("!") || is("~") || is("-") || is("+")) {
      std::string op = tok_.text;
      advance();
      NodeP e = unary();
      if (op == "+") return e;
      auto n = mk(NK::kUnary, at);
      n->op = op;
      n->kids.push_back(std::move(e));
      return n;
    }
    if (is("*")) {
      advance();
      auto n = mk(NK::kDeref, at);
      n->kids.push_back(unary());
      return n;
    }
    if (is("++") || is("--")) {
      std::string op = tok_.text;
      advance();
      auto n = mk(NK::kIncDec, at);
      n->op = op;
      n->prefix = true;
      n->kids.push_back(unary());
      return n;
    }
    return postfix();
  }

  NodeP postfix() {
    NodeP e = primary();
    while (is("++") || is("--")) {
      auto n = mk(NK::kIncDec, tok_);
      n->op = tok_.text;
      advance();
      n->kids.push_back(std::move(e));
      e = std::move(n);
    }
    return e;
  }

  void keys(Node* n) {
    expect("[");
    paren_depth++;
    if (is("]")) fail(tok_, "expected a key expression");
    n->kids.push_back(expr());
    while (is(",")) {
      advance();
      n->kids.push_back(expr());
    }
    paren_depth--;
    expect("]");
  }

  NodeP primary() {
    Token at = tok_;
    if (tok_.kind == Tok::kInt) {
      auto n = mk(NK::kInt, at);
      n->ival = tok_.ival;
      advance();
      return n;
    }
    if (tok_.kind == Tok::kString) {
      auto n = mk(NK::kString, at);
      n->name = tok_.text;
      advance();
      return n;
    }
    if (is("(")) {
      advance();
      paren_depth++;
      NodeP e = expr();
      paren_depth--;
      expect(")");
      return e;
    }
    if (tok_.kind == Tok::kIdent) {
      std::string id = tok_.text;
      advance();
      if ((id == "self" || id == "this") && is("->")) {
        advance();
        if (tok_.kind != Tok::kIdent) fail(tok_, "expected a variable name after '" + id + "->'");
        auto n = mk(id == "self" ? NK::kSelf : NK::kThis, at);
        n->name = tok_.text;
        advance();
        if (is("[")) {
          if (id == "this") fail(tok_, "clause-local associative arrays are not supported");
          n->kind = NK::kSelfAssoc;
          keys(n.get());
        }
        return n;
      }
      if (is("(")) {
        auto n = mk(NK::kCall, at);
        n->name = id;
        advance();
        paren_depth++;
        if (!is(")")) {
          n->kids.push_back(expr());
          while (is(",")) {
            advance();
            n->kids.push_back(expr());
          }
        }
        paren_depth--;
        expect(")");
        return n;
      }
      if (is("[")) {
        auto n = mk(NK::kAssoc, at);
        n->name = id;
        keys(n.get());
        return n;
      }
      auto n = mk(NK::kIdent, at);
      n->name = id;
      return n;
    }
    fail(tok_, "expected an expression but found " + describe(tok_));
  }

  // Statement: aggregation, or expression.
  NodeP statement() {
    if (is("@")) {
      Token at = tok_;
      advance();
      auto n = mk(NK::kAgg, at);
      if (tok_.kind == Tok::kIdent) {
        n->name = tok_.text;
        advance();
      }
      auto keyholder = mk(NK::kCall, at);
      if (is("[")) keys(keyholder.get());
      if (!is("=")) fail(tok_, "expected '=' after aggregation @" + n->name);
      advance();
      Token ft = tok_;
      if (tok_.kind != Tok::kIdent) fail(tok_, "expected an aggregating function (count, sum, ...)");
      NodeP call = primary();
      if (call->kind != NK::kCall) fail(ft, "expected an aggregating function call after '='");
      n->kids.push_back(std::move(keyholder));
      n->kids.push_back(std::move(call));
      return n;
    }
    return expr();
  }

 private:
  Lexer& lx_;
  Token tok_;
};

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
      case NK::kInt:
        *v = n->ival;
        return true;
      case NK::kUnary:
        if (!constant_value(n->kids[0].get(), &a)) return false;
        if (n->op == "-") *v = 0 - a;
        else if (n->op == "~") *v = ~a;
        else if (n->op == "!") *v = a == 0;
        else if (n->op == "+") *v = a;
        else return false;
        return true;
      case NK::kBinary: {
        if (!constant_value(n->kids[0].get(), &a) || !constant_value(n->kids[1].get(), &b)) return false;
        const std::string& o = n->op;
        if (o == "+") *v = a + b;
        else if (o == "-") *v = a - b;
        else if (o == "*") *v = a * b;
        else if (o == "&") *v = a & b;
        else if (o == "|") *v = a | b;
        else if (o == "^") *v = a ^ b;
        else if (o == "<<") *v = a << (b & 63);  // the VM masks shift counts the same way
        else if (o == ">>") *v = static_cast<uint64_t>(static_cast<int64_t>(a) >> (b & 63));
        else if (o == "/" || o == "%") {
          int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
          if (y == 0 || (y == -1 && x == INT64_MIN)) return false;  // refused or trapped on its own
          *v = static_cast<uint64_t>(o == "/" ? x / y : x % y);
        } else return false;  // comparisons
        return true;
      }
      default:
        return false;
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
  VarSym& sym_for_store(std::map<std::string, VarSym>& tab, uint32_t& next, uint32_t limit,
                        const Node* n, Ty t, const char* what) {
    auto it = tab.find(n->name);
    if (it == tab.end()) {
      if (next >= limit) fail(n, std::string("too many ") + what + " variables");
      it = tab.emplace(n->name, VarSym{next++, t}).first;
      const char* scope = &tab == &globals ? "global" : &tab == &selfs ? "self" : &tab == &locals ? "this"
                        : &tab == &assocs ? "assoc" : "self-assoc";
      prog_->vars.push_back(VarInfo{n->name, scope, it->second.id,
                                    t == Ty::kString ? ValueType::kString : ValueType::kInt});
    } else if (it->second.type != t) {
      fail(n, "operands have incompatible types: " + std::string(what) + " variable '" + n->name +
                  "' is " + (it->second.type == Ty::kString ? "string" : "integer") + ", assigned " +
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
        const VarSym* s = sym_for_load(self ? self_assocs : assocs, n);
        if (!s) {
          if (!self && !n->kids.empty() && n->name.size()) {
            // Could be a call-less use of an unknown array.
          }
          fail(n, "undefined associative array '" + std::string(self ? "self->" : "") + n->name + "'");
        }
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
        if (n->op == "-") emit(kOpSub, r, 0, r, 0);
        else if (n->op == "~") emit(kOpNot, r, r, 0, 0);
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
        static const std::map<std::string, uint8_t> kCmp = {
            {"==", kOpBe}, {"!=", kOpBne}, {"<", kOpBl}, {"<=", kOpBle}, {">", kOpBg}, {">=", kOpBge}};
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
      static const char* const kActions[] = {"printf", "trace", "tracemem", "stack", "exit",
                                             "count", "sum", "min", "max", "avg", "quantize", "lquantize"};
      for (const char* a : kActions)
        if (n->name == a) fail(n, n->name + "() may only be used as a statement" +
                                      std::string(std::strchr("cs", a[0]) && n->name != "stack" ? "" : ""));
      fail(n, "unknown function '" + n->name + "'");
    }
    const auto& [subr, argt] = it->second;
    if (n->kids.size() != argt.size())
      fail(n, n->name + "() takes " + std::to_string(argt.size()) + " argument" + (argt.size() == 1 ? "" : "s") +
                  ", " + std::to_string(n->kids.size()) + " given");
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
    *t = (subr == kSubrStrjoin || subr == kSubrCopyinstr) ? Ty::kString
         : subr == kSubrBcopy                              ? Ty::kVoid
                                                           : Ty::kInt;
    return rd;
  }
};

// ---------------------------------------------------------------------------
class Compiler {
 public:
  explicit Compiler(const std::string& src) : lx_(src) {}

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
      if (ps.cur().kind == Tok::kEnd) ps.fail(ps.cur(), "expected '}' to close the clause that starts at line " +
                                                           std::to_string(c.line));
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

  void printf_stmt(const Node* st, ClauseDesc* c) {
    if (st->kids.empty() || st->kids[0]->kind != NK::kString)
      Codegen::fail(st, "printf() needs a string constant format as its first argument");
    PrintfDesc pf;
    pf.format = st->kids[0]->name;
    // Count conversions and check them against the arguments.
    std::vector<char> convs;
    const std::string& f = pf.format;
    for (size_t i = 0; i < f.size(); i++) {
      if (f[i] != '%') continue;
      if (i + 1 < f.size() && f[i + 1] == '%') { i++; continue; }
      size_t j = i + 1;
      while (j < f.size() && std::strchr("-+ #0123456789.hlLqjzt", f[j])) j++;
      if (j >= f.size() || !std::strchr("diouxXcsp", f[j]))
        Codegen::fail(st->kids[0].get(), "printf() format has an invalid conversion at offset " + std::to_string(i));
      convs.push_back(f[j]);
      i = j;
    }
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

  void aggregation(const Node* st, ClauseDesc* c) {
    const Node* keys = st->kids[0].get();
    const Node* call = st->kids[1].get();
    static const std::map<std::string, AggKind> kFns = {
        {"count", kAggCount}, {"sum", kAggSum}, {"min", kAggMin}, {"max", kAggMax},
        {"avg", kAggAvg}, {"quantize", kAggQuantize}, {"lquantize", kAggLquantize}};
    auto it = kFns.find(call->name);
    if (it == kFns.end()) Codegen::fail(call, "'" + call->name + "' is not an aggregating function");
    AggKind kind = it->second;
    size_t want = kind == kAggCount ? 0 : kind == kAggLquantize ? 3 : 1;
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

CompileResult compile_d(const std::string& source) {
  Compiler c(source);
  return c.run();
}

}  // namespace tbdvm
