// D compiler, part 2: the AST and the recursive-descent parser, with the
// nesting and size limits (internal to the compiler).
#pragma once

#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracers/dvm/compiler/lexer.h"

namespace tbdvm::compiler_detail {

// ---------------------------------------------------------------------------
// AST.
struct Node;
using NodeP = std::unique_ptr<Node>;

enum class NK {
  kInt,
  kString,
  kIdent,
  kSelf,
  kThis,
  kAssoc,
  kSelfAssoc,
  kCall,
  kUnary,
  kBinary,
  kLogical,
  kTernary,
  kAssign,
  kIncDec,
  kDeref,
  kAgg,
  kAggRef  // @name as an argument (printa, clear, trunc, normalize, denormalize)
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
        {"||", 1}, {"^^", 2}, {"&&", 3}, {"|", 4},  {"^", 5},  {"&", 6},  {"==", 7}, {"!=", 7}, {"<", 8}, {"<=", 8},
        {">", 8},  {">=", 8}, {"<<", 9}, {">>", 9}, {"+", 10}, {"-", 10}, {"*", 11}, {"/", 11}, {"%", 11}};
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
    if (is("@")) {
      auto n = mk(NK::kAggRef, at);
      advance();
      if (tok_.kind == Tok::kIdent) {
        n->name = tok_.text;
        advance();
      }
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

}  // namespace tbdvm::compiler_detail
