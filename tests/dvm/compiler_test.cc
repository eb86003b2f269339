// D compiler: golden DIF listings (-S), error positions, and compiled
// programs run through the VM.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kmod/dvm/core/vm.h"
#include "tracers/dvm/compiler/dcompile.h"

namespace tbdvm {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every tests/dvm/golden/*.d compiles and its -S listing equals *.S.
// TBDVM_UPDATE_GOLDEN=1 rewrites the listings that differ (review the
// diff!) and fails, naming them: a run that rewrites the files has compared
// nothing, so it can never pass; the next run without it checks them.
TEST(DvmCompilerGolden, ListingsMatch) {
  const bool update = std::getenv("TBDVM_UPDATE_GOLDEN") != nullptr;
  std::vector<std::string> rewritten;
  size_t n = 0;
  for (auto& ent : fs::directory_iterator(TBDVM_GOLDEN_DIR)) {
    if (ent.path().extension() != ".d") continue;
    n++;
    SCOPED_TRACE(ent.path().string());
    CompileResult r = compile_d(slurp(ent.path()));
    ASSERT_TRUE(r.program) << r.error;
    // Every DIF object the compiler emits passes the verifier.
    VerifyWork w;
    auto check = [&](const DifObject* d) {
      if (!d) return;
      VerifyError v = dif_verify(&d->prog, &w);
      EXPECT_EQ(v.rule, nullptr) << v.rule << " at " << v.pc;
    };
    for (auto& c : r.program->clauses) {
      check(c.predicate.get());
      for (auto& a : c.actions) {
        check(a.value.get());
        for (auto& k : a.keys) check(k.get());
      }
    }
    std::string listing = disassemble(*r.program);
    fs::path golden = ent.path();
    golden.replace_extension(".S");
    if (update && (!fs::exists(golden) || slurp(golden) != listing)) {
      std::ofstream(golden) << listing;
      rewritten.push_back(golden.filename().string());
      continue;
    }
    ASSERT_TRUE(fs::exists(golden)) << "missing " << golden << " (run with TBDVM_UPDATE_GOLDEN=1)";
    EXPECT_EQ(listing, slurp(golden));
  }
  EXPECT_GE(n, 5u);
  EXPECT_TRUE(rewritten.empty()) << "TBDVM_UPDATE_GOLDEN rewrote " << rewritten.size()
                                 << " listing(s) (review the diff, then run without it): "
                                 << ::testing::PrintToString(rewritten);
}

struct ErrorCase {
  const char* src;
  int line, col;
  const char* contains;
};

TEST(DvmCompilerErrors, NameLineAndColumn) {
  const ErrorCase cases[] = {
      {"tb:::x { trace(foo); }", 1, 16, "undefined variable 'foo'"},
      {"tb:::x\n{\n  x = 1 +;\n}", 3, 10, "expected an expression"},
      {"tb:::x { printf(\"%d %d\\n\", 1); }", 1, 10, "2 conversions but 1 argument"},
      {"tb:::x { @a = count(); @a = sum(1); }", 1, 29, "different aggregating function"},
      {"tb:::x { @a[1] = count(); @a[\"s\"] = count(); }", 1, 27, "different keys"},
      {"tb:::x { self->s = \"a\"; self->s = 1; }", 1, 25, "incompatible types"},
      {"tb:::x /arg0 == \"x\"/ { }", 1, 14, "incompatible types"},
      {"tb:::x { pid = 3; }", 1, 10, "cannot assign to built-in variable 'pid'"},
      {"tb:::x { trace(nosuch(1)); }", 1, 16, "unknown function 'nosuch'"},
      {"tb:::x { trace(strlen(1)); }", 1, 23, "must be a string"},
      {"tb:::x { \"abc }", 1, 10, "unterminated string"},
      {"tb:::x { trace(1) trace(2); }", 1, 19, "expected ';'"},
      {"tb:::x { trace(1);", 1, 19, "expected '}'"},
      {"tb:::x /arg0/ trace(1);", 1, 15, "expected '{'"},
      {"tb:::x { @q = lquantize(arg0, 10, 0); }", 1, 15, "upper bound"},
      {"tb:::x { tracemem(arg0, arg1); }", 1, 25, "integer constant"},
      {"tb:::x { x = 0x; }", 1, 14, "invalid hexadecimal"},
      {"tb:::x { x = 1 $ 2; }", 1, 16, "expected a macro argument ($1) or variable ($target) after '$'"},
      {"tb:::x { /* never closed", 1, 10, "unterminated comment"},
      {"\n\n   tb:::x { count(); }", 3, 13, "may only be used as a statement"},
      {"a:b:c:d:e { }", 1, 1, "more than four fields"},
      {"tb:::x { @a = avg(\"s\"); }", 1, 19, "integer argument"},
      {"#pragma D nonsense\ntb:::x {}", 1, 1, "#pragma D option"},
      {"", 1, 1, "no clauses"},
      {"tb:::x { trace(arg0 / 0); }", 1, 23, "division by zero"},
      {"tb:::x { trace(arg0 % (2 - 2)); }", 1, 26, "division by zero"},
      {"tb:::x { x = 1; x /= 4 * 0; }", 1, 24, "division by zero"},
      {"tb:::x { x = 1; x %= -(3 & 4); }", 1, 22, "division by zero"},
      {"tb:::x { @[arg0 / ((1 << 63) * 2)] = count(); }", 1, 30, "division by zero"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.src);
    CompileResult r = compile_d(c.src);
    EXPECT_FALSE(r.program);
    EXPECT_EQ(r.line, c.line) << r.error;
    EXPECT_EQ(r.column, c.col) << r.error;
    EXPECT_NE(r.error.find(c.contains), std::string::npos) << r.error;
    EXPECT_EQ(r.error.rfind("line " + std::to_string(c.line) + ", column " + std::to_string(c.col) + ":", 0), 0u)
        << r.error;
  }
}

// printa/clear/trunc/normalize/denormalize name an aggregation (defined
// anywhere in the program); printa's format is checked against its keys;
// llquantize's parameters follow dtrace's rules.
TEST(DvmCompilerErrors, AggregationActionsAndLlquantize) {
  const std::pair<const char*, const char*> cases[] = {
      {"tb:::x { printa(@nope); }", "line 1, column 17: @nope is not an aggregation of this program"},
      {"tb:::x { @a[\"s\"] = count(); printa(\"%d %@d\", @a); }", "conversion %d needs an integer but key 1 of @a"},
      {"tb:::x { @a = count(); printa(\"%d\", @a); }", "more key conversions than @a has keys (0)"},
      {"tb:::x { @a = count(); printa(\"%k\", @a); }", "printa() format has an invalid conversion"},
      {"tb:::x { printf(\"%99999999d\", 1); }",
       "printf() conversion %99999999: width or precision 99999999 is above 511"},
      {"tb:::x { printf(\"%.600s\", \"a\"); }", "width or precision 600 is above 511"},
      {"tb:::x { printf(\"%0512x\", 1); }", "width or precision 512 is above 511"},
      {"tb:::x { @a = count(); printa(\"%@9999d\", @a); }", "printa() conversion %9999: width or precision"},
      {"tb:::x { @a = count(); printa(1, @a); }", "string constant format"},
      {"tb:::x { trunc(1); }", "trunc() needs an aggregation (@name) as argument 1"},
      {"tb:::x { x = @a; }", "@a can only be an argument of printa()"},
      {"tb:::x { @a = count(); normalize(@a); }", "normalize() takes an aggregation and a factor"},
      {"tb:::x { @a = count(); normalize(@a, \"s\"); }", "normalize() needs an integer"},
      {"tb:::x { @a = count(); clear(@a, 1); }", "clear() takes one aggregation"},
      {"tb:::x { trace(printa(@a)); }", "printa() may only be used as a statement"},
      {"tb:::x { @q = llquantize(arg0, 1, 0, 2, 10); }", "factor must be in 2..65535"},
      {"tb:::x { @q = llquantize(arg0, 10, 3, 2, 10); }", "high magnitude must be at least the low one"},
      {"tb:::x { @q = llquantize(arg0, 10, 0, 2, 15); }", "multiple of the factor"},
      {"tb:::x { @q = llquantize(arg0, 10, 0, 2, 5); }", "multiple of the factor"},
      {"tb:::x { @q = llquantize(arg0, 10, 0, 2, 30); }", "must evenly divide a power of the factor"},
      {"tb:::x { @q = llquantize(arg0, 10, 0, 2, 60); }", "must evenly divide a power of the factor"},
      {"tb:::x { @q = llquantize(arg0, 10, 0, 18, 10); }", "does not fit in 63 bits"},
      {"tb:::x { @q = llquantize(arg0, 2, 0, 40, 4096); }", "more than 4096 buckets"},
      {"tb:::x { @q = llquantize(arg0, 10, 0, 2); }", "llquantize() takes 5 arguments"},
  };
  for (const auto& [src, want] : cases) {
    SCOPED_TRACE(src);
    CompileResult r = compile_d(src);
    EXPECT_FALSE(r.program);
    EXPECT_NE(r.error.find(want), std::string::npos) << r.error;
  }
  // A later clause may define the aggregation printa names.
  CompileResult r = compile_d("END { printa(\"%s %@d\\n\", @a); clear(@a); } tb:::x { @a[\"k\"] = count(); }");
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->clauses[0].actions[0].agg_op, AggOp::kPrinta);
  EXPECT_EQ(r.program->clauses[0].actions[1].agg_op, AggOp::kClear);
  // 10^17 is the top order that fits: 18 orders of 9 buckets, under- and overflow.
  r = compile_d("tb:::x { @q = llquantize(arg0, 10, 0, 17, 10); }");
  ASSERT_TRUE(r.program) << r.error;
  const ActionDesc& q = r.program->clauses[0].actions[0];
  EXPECT_EQ(agg_nvals(kAggLlquantize, q.lq_base, q.lq_limit, q.lq_step), 18u * 9 + 2);
}

// args[N] is argN (a constant N in 0..9, read-only), compiled to the same load.
TEST(DvmCompiler, ArgsArrayIsTheArguments) {
  CompileResult a = compile_d("tb:::x { trace(args[2] + args[1 + 1]); }");
  CompileResult b = compile_d("tb:::x { trace(arg2 + arg2); }");
  ASSERT_TRUE(a.program) << a.error;
  ASSERT_TRUE(b.program) << b.error;
  EXPECT_EQ(disassemble(*a.program), disassemble(*b.program));
  const std::pair<const char*, const char*> cases[] = {
      {"tb:::x { trace(args[arg0]); }", "line 1, column 16: args[] takes one constant index from 0 to 9"},
      {"tb:::x { trace(args[10]); }", "args[] takes one constant index"},
      {"tb:::x { trace(args[1, 2]); }", "args[] takes one constant index"},
      {"tb:::x { args[0] = 1; }", "cannot assign to args[]"},
  };
  for (const auto& [src, want] : cases) {
    CompileResult e = compile_d(src);
    EXPECT_FALSE(e.program) << src;
    EXPECT_NE(e.error.find(want), std::string::npos) << src << ": " << e.error;
  }
}

// dtrace's macros: $N as an integer or an identifier, $$N as a string, in
// descriptions as text; $target from -c/-p; $pid and friends.
TEST(DvmCompiler, MacroArgumentsAndVariables) {
  CompileOptions o;
  o.args = {"script.d", "42", "getpid", "a b", "0x10"};
  o.target = 777;
  CompileResult r =
      compile_d("syscall::$2:entry /arg0 == $1 && pid == $target && arg1 == $4/ { trace($$3); trace($pid); }", o);
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->clauses[0].probes[0], "syscall::getpid:entry");
  const std::string listing = disassemble(*r.program);
  EXPECT_NE(listing.find("! 0x2a"), std::string::npos) << listing;
  EXPECT_NE(listing.find("! 0x309"), std::string::npos) << listing;  // $target
  EXPECT_NE(listing.find("! 0x10"), std::string::npos) << listing;
  const std::string pid = "! 0x" + [] {
    char b[32];
    std::snprintf(b, sizeof b, "%x", static_cast<unsigned>(getpid()));
    return std::string(b);
  }();
  EXPECT_NE(listing.find(pid), std::string::npos) << listing;
  EXPECT_NE(r.program->clauses[0].actions[0].value->strtab.find("a b"), std::string::npos);
  // $2 is an identifier: here, a variable name.
  EXPECT_TRUE(compile_d("tb:::x { $2 = 1; trace(getpid); }", o).program);
  const std::pair<const char*, const char*> cases[] = {
      {"tb:::x { trace($5); }", "line 1, column 16: macro argument $5 is not defined (4 given after the program)"},
      {"tb:::x { trace($3); }", "macro argument $3 ('a b') is neither an integer nor an identifier; $$3 gives it"},
      {"tb:::x { trace($$target); }", "$$ takes a macro argument"},
      {"tb:::x { trace($nosuch); }", "unknown macro variable $nosuch"},
      {"tb:::$9 { }", "macro argument $9 is not defined"},
  };
  for (const auto& [src, want] : cases) {
    SCOPED_TRACE(src);
    CompileResult e = compile_d(src, o);
    EXPECT_FALSE(e.program);
    EXPECT_NE(e.error.find(want), std::string::npos) << e.error;
  }
  CompileResult e = compile_d("tb:::x /pid == $target/ { }");
  EXPECT_NE(e.error.find("$target is not defined: give a process with -c or -p"), std::string::npos) << e.error;
  EXPECT_NE(compile_d("tb:::x { trace($1); }").error.find("$1 is not defined (0 given"), std::string::npos);
}

// A divisor that is constant but not zero, or not constant, compiles: the
// VM's own fault catches a zero that appears at run time.
TEST(DvmCompilerErrors, NonZeroOrRuntimeDivisorsCompile) {
  for (const char* src :
       {"tb:::x { trace(arg0 / 2); }", "tb:::x { trace(arg0 % (7 / 3)); }", "tb:::x { trace(arg0 / arg1); }",
        "tb:::x { trace(arg0 / (arg1 - arg1)); }", "tb:::x { x = 8; x /= -1; }",
        "tb:::x { trace(arg0 / (1 << 64)); }"}) {  // the VM masks the count: 1 << 64 == 1
    CompileResult r = compile_d(src);
    EXPECT_TRUE(r.program) << src << ": " << r.error;
  }
}

// Hostile programs get an error with a position, never a crash: 5,000
// nested parentheses and 20,000 unary minus signs (each crashed the parser
// through unbounded recursion), a left-deep chain of 10,000 operators.
TEST(DvmCompilerErrors, DeepOrHugeExpressionsAreRefusedNotCrashed) {
  std::string parens = "tb:::x { trace(" + std::string(5000, '(') + "1" + std::string(5000, ')') + "); }";
  CompileResult r = compile_d(parens);
  EXPECT_FALSE(r.program);
  EXPECT_NE(r.error.find("expression nested too deeply"), std::string::npos) << r.error.substr(0, 200);
  EXPECT_EQ(r.line, 1);
  EXPECT_GT(r.column, 100);  // where the limit was reached

  std::string minus = "tb:::x { trace(" + std::string(20000, '-') + "1); }";  // "- - -": unary minus each
  for (std::size_t i = 1; i < minus.size(); i += 2)
    if (minus[i] == '-' && minus[i - 1] == '-') minus[i] = ' ';
  r = compile_d(minus);
  EXPECT_FALSE(r.program);
  EXPECT_NE(r.error.find("expression nested too deeply"), std::string::npos) << r.error.substr(0, 200);

  std::string chain = "tb:::x { trace(1";
  for (int i = 0; i < 10000; ++i) chain += "+1";
  chain += "); }";
  r = compile_d(chain);
  EXPECT_FALSE(r.program);
  EXPECT_NE(r.error.find("expression too large"), std::string::npos) << r.error.substr(0, 200);

  // Just under the limits still compiles.
  std::string ok = "tb:::x { trace(" + std::string(200, '(') + "1" + std::string(200, ')') + "); }";
  r = compile_d(ok);
  EXPECT_TRUE(r.program) << r.error;
  std::string ok_chain = "tb:::x { trace(1";
  for (int i = 0; i < 1000; ++i) ok_chain += "+1";
  ok_chain += "); }";
  r = compile_d(ok_chain);
  EXPECT_TRUE(r.program) << r.error;
}

TEST(DvmCompiler, PragmasAndProbeLists) {
  CompileResult r = compile_d(
      "#pragma D option quiet\n#pragma D option bufsize=64k\n"
      "syscall::getpid:entry, tb:::hot* /arg0 > 3/ { @[probefunc] = count(); }\n"
      "dtrace:::END { printf(\"%s %d\\n\", \"done\", 1); }");
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.options.at("quiet"), "");
  EXPECT_EQ(r.options.at("bufsize"), "64k");
  ASSERT_EQ(r.program->clauses.size(), 2u);
  EXPECT_EQ(r.program->clauses[0].probes, (std::vector<std::string>{"syscall::getpid:entry", "tb:::hot*"}));
  EXPECT_TRUE(r.program->clauses[0].predicate);
  EXPECT_EQ(r.program->clauses[1].line, 4);
  ASSERT_EQ(r.program->formats.size(), 1u);
  EXPECT_EQ(r.program->formats[0].format, "%s %d\n");
  EXPECT_EQ(r.program->formats[0].arg_types, (std::vector<ValueType>{ValueType::kString, ValueType::kInt}));
  ASSERT_EQ(r.program->aggs.size(), 1u);
  EXPECT_EQ(r.program->aggs[0].key_types, std::vector<ValueType>{ValueType::kString});
}

// Compiles `expr` as a predicate and evaluates it with the VM: checks the
// generated code against C semantics.
class ExprEval {
 public:
  uint64_t eval(const std::string& expr, uint64_t a0 = 0, uint64_t a1 = 0) {
    CompileResult r = compile_d("tb:::x /" + expr + "/ { }");
    EXPECT_TRUE(r.program) << r.error;
    if (!r.program) return ~0ull;
    keep_.push_back(r.program);
    const DifObject* d = r.program->clauses[0].predicate.get();
    VerifyWork w;
    EXPECT_EQ(dif_verify(&d->prog, &w).rule, nullptr);
    SpinLock lock;
    std::vector<uint8_t> scratch(1024);
    Slot slot;
    slot.lock = &lock;
    slot.scratch = scratch.data();
    slot.scratch_size = 1024;
    State st;
    st.slots = &slot;
    st.nslots = 1;
    std::vector<uint64_t> gv(kMaxGlobals);
    st.gvals = gv.data();
    FireArgs fa;
    fa.args[0] = a0;
    fa.args[1] = a1;
    Probe p;
    MState& ms = slot.ms;
    ms = MState{};
    ms.state = &st;
    ms.slot = &slot;
    ms.fa = &fa;
    ms.probe = &p;
    uint64_t v = dif_exec(&d->prog, &ms);
    EXPECT_EQ(ms.fault, kFaultNone) << expr;
    return v;
  }

 private:
  std::vector<std::shared_ptr<CompiledProgram>> keep_;
};

TEST(DvmCompiler, ExpressionsFollowCSemantics) {
  ExprEval e;
  EXPECT_EQ(e.eval("1 + 2 * 3"), 7u);
  EXPECT_EQ(e.eval("(1 + 2) * 3"), 9u);
  EXPECT_EQ(e.eval("(20 / 3)"), 6u);  // '/' inside parentheses is division
  EXPECT_EQ(e.eval("(-20 / 3)"), static_cast<uint64_t>(-6));
  EXPECT_EQ(e.eval("-20 % 3"), static_cast<uint64_t>(-2));
  EXPECT_EQ(e.eval("1 << 4 | 1"), 17u);
  EXPECT_EQ(e.eval("-16 >> 2"), static_cast<uint64_t>(-4));
  EXPECT_EQ(e.eval("~0 ^ 0xff"), ~0xffull);
  EXPECT_EQ(e.eval("6 & 3"), 2u);
  EXPECT_EQ(e.eval("!0 + !5"), 1u);
  EXPECT_EQ(e.eval("arg0 < arg1", 3, 5), 1u);
  EXPECT_EQ(e.eval("arg0 < arg1", static_cast<uint64_t>(-3), 5), 1u);  // signed
  EXPECT_EQ(e.eval("arg0 >= arg1", 5, 5), 1u);
  EXPECT_EQ(e.eval("arg0 > arg1 || arg1 == 9", 1, 9), 1u);
  EXPECT_EQ(e.eval("arg0 > arg1 && arg1 == 9", 1, 9), 0u);
  EXPECT_EQ(e.eval("arg0 != 0 && (10 / arg0) > 1", 0), 0u);  // short circuit: no fault
  EXPECT_EQ(e.eval("arg0 == 0 || (10 / arg0) > 1", 0), 1u);
  // ^^: logical xor, both sides made 0/1 (and both evaluated); between || and && in precedence.
  EXPECT_EQ(e.eval("arg0 ^^ arg1", 5, 0), 1u);
  EXPECT_EQ(e.eval("arg0 ^^ arg1", 5, 7), 0u);
  EXPECT_EQ(e.eval("arg0 ^^ arg1", 0, 0), 0u);
  EXPECT_EQ(e.eval("4 ^^ 0"), 1u);       // folded as the VM computes it
  EXPECT_EQ(e.eval("1 || 1 ^^ 1"), 1u);  // 1 || (1 ^^ 1)
  EXPECT_EQ(e.eval("1 ^^ 1 && 0"), 1u);  // 1 ^^ (1 && 0)
  EXPECT_EQ(e.eval("arg0 ? 10 : 20", 1), 10u);
  EXPECT_EQ(e.eval("arg0 ? 10 : 20", 0), 20u);
  EXPECT_EQ(e.eval("\"abc\" == \"abc\""), 1u);
  EXPECT_EQ(e.eval("\"abc\" < \"abd\""), 1u);
  EXPECT_EQ(e.eval("strlen(\"hello\") == 5"), 1u);
  EXPECT_EQ(e.eval("strlen(strjoin(\"ab\", \"cde\"))"), 5u);
  EXPECT_EQ(e.eval("'A' + 1"), 66u);
  EXPECT_EQ(e.eval("0x10 + 010"), 24u);
  EXPECT_EQ(e.eval("x = 5"), 5u);
  EXPECT_EQ(e.eval("(y = 4) + (y += 3)"), 11u);
  EXPECT_EQ(e.eval("(z = 1) + z++ + z"), 4u);
  EXPECT_EQ(e.eval("(w = 1) + ++w"), 3u);
}

}  // namespace
}  // namespace tbdvm
