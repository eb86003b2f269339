// D compiler, part 1: tokens and the lexer (internal to the compiler).
#pragma once

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tbdvm::compiler_detail {

// A compile error with its position; the driver turns it into CompileResult.
struct CompileError {
  int line, col;
  std::string msg;
};

enum class Tok { kEnd, kIdent, kInt, kString, kPunct, kProbeDesc };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, punctuator, decoded string, probe description
  uint64_t ival = 0;
  int line = 1, col = 1;
};

// Macro variables and arguments (dcompile.h's CompileOptions, resolved).
struct Macros {
  std::vector<std::string> args;        // $0..$N
  std::map<std::string, int64_t> vars;  // target (when -c/-p gave one), pid, ppid, uid, ...
};

class Lexer {
 public:
  explicit Lexer(const std::string& s, const Macros* m = nullptr) : s_(s), macros_(m) {}

  [[noreturn]] void fail(int line, int col, const std::string& m) { throw CompileError{line, col, m}; }

  void skip_space() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        line_++;
        col_ = 1;
        pos_++;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        col_++;
        pos_++;
      } else if (c == '/' && peekc(1) == '*') {
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
      if (s_[pos_] == '\n') {
        line_++;
        col_ = 1;
      } else {
        col_++;
      }
      pos_++;
    }
  }
  bool at_end() {
    skip_space();
    return pos_ >= s_.size();
  }
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
    if (t.text.find('$') != std::string::npos) t.text = expand_in_description(t);
    size_t colons = 0;
    for (char c : t.text) colons += c == ':';
    if (colons > 3) fail(t.line, t.col, "probe description '" + t.text + "' has more than four fields");
    return t;
  }

  // One switch over the next character (~100 lines): every token's shape
  // in one place, as a hand-written lexer keeps it.
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
    if (c == '$') return macro(t);
    if (std::isdigit(static_cast<unsigned char>(c))) {
      t.kind = Tok::kInt;
      size_t start = pos_;
      int base = 10;
      if (c == '0' && (peekc(1) == 'x' || peekc(1) == 'X')) {
        base = 16;
        adv(2);
      } else if (c == '0' && std::isdigit(static_cast<unsigned char>(peekc(1)))) {
        base = 8;
        adv(1);
      }
      uint64_t v = 0;
      bool any = base != 16;
      while (true) {
        char d = peekc();
        int dv;
        if (std::isdigit(static_cast<unsigned char>(d)))
          dv = d - '0';
        else if (base == 16 && std::isxdigit(static_cast<unsigned char>(d)))
          dv = std::tolower(d) - 'a' + 10;
        else
          break;
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
        if (d == q) {
          adv(1);
          break;
        }
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
    static const char* const kPuncts[] = {"<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
                                          "||",  "^^",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "{",  "}",
                                          "(",   ")",   "[",  "]",  ",",  ";",  ":",  "/",  "?",  "+",  "-",  "*",
                                          "%",   "&",   "|",  "^",  "~",  "!",  "<",  ">",  "=",  "@",  "."};
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

  // The name after a '$' (or "$$") at s[i]: digits or an identifier; returns
  // the index past it.
  static size_t macro_name_at(const std::string& s, size_t i, std::string* name) {
    const bool digits = i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
    while (i < s.size() && (digits ? std::isdigit(static_cast<unsigned char>(s[i]))
                                   : std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      *name += s[i++];
    return i;
  }

  // $N, $$N, $name at the current position: the name and whether it was $$.
  std::string macro_name(bool* as_string) {
    adv(1);
    *as_string = peekc() == '$';
    if (*as_string) adv(1);
    std::string name;
    adv(macro_name_at(s_, pos_, &name) - pos_);
    return name;
  }

  // A macro's text: an argument as given, a variable in decimal.
  std::string macro_text(const Token& at, const std::string& name, bool* is_arg) {
    *is_arg = !name.empty() && std::isdigit(static_cast<unsigned char>(name[0]));
    if (name.empty()) fail(at.line, at.col, "expected a macro argument ($1) or variable ($target) after '$'");
    if (*is_arg) {
      const size_t n = name.size() > 6 ? SIZE_MAX : std::stoul(name);
      const size_t have = macros_ ? macros_->args.size() : 0;
      if (n >= have)
        fail(at.line, at.col,
             "macro argument $" + name + " is not defined (" + std::to_string(have > 0 ? have - 1 : 0) +
                 " given after the program)");
      return macros_->args[n];
    }
    if (macros_) {
      auto it = macros_->vars.find(name);
      if (it != macros_->vars.end()) return std::to_string(it->second);
    }
    if (name == "target") fail(at.line, at.col, "$target is not defined: give a process with -c or -p");
    fail(at.line, at.col, "unknown macro variable $" + name);
  }

  Token macro(Token t) {
    bool as_string, is_arg;
    const std::string name = macro_name(&as_string);
    const std::string text = macro_text(t, name, &is_arg);
    if (as_string) {
      if (!is_arg) fail(t.line, t.col, "$$ takes a macro argument ($$1), not $$" + name);
      t.kind = Tok::kString;
      t.text = text;
      return t;
    }
    // An integer (decimal, 0x hex, 0 octal) is a constant, an identifier a name.
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = text.empty() ? 0 : std::strtoull(text.c_str(), &end, 0);
    if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) && end && *end == '\0' && errno == 0) {
      t.kind = Tok::kInt;
      t.ival = v;
      t.text = text;
      return t;
    }
    bool ident = !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_');
    for (char ch : text) ident = ident && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (!ident)
      fail(t.line, t.col,
           "macro argument $" + name + " ('" + text + "') is neither an integer nor an identifier; $$" + name +
               " gives it as a string");
    t.kind = Tok::kIdent;
    t.text = text;
    return t;
  }

  std::string expand_in_description(const Token& t) {
    std::string out;
    const std::string& d = t.text;
    for (size_t i = 0; i < d.size(); i++) {
      if (d[i] != '$') {
        out += d[i];
        continue;
      }
      std::string name;
      const size_t end = macro_name_at(d, i + 1, &name);
      bool is_arg;
      out += macro_text(t, name, &is_arg);
      i = end - 1;
    }
    return out;
  }

  size_t pos() const { return pos_; }
  void reset(size_t p, int l, int c) {
    pos_ = p;
    line_ = l;
    col_ = c;
  }

 private:
  const std::string& s_;
  const Macros* macros_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace tbdvm::compiler_detail
