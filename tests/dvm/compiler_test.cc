// D compiler: golden DIF listings (-S), error positions, and compiled
// programs run through the VM.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tracers/dvm/core/vm.h"
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
// TBDVM_UPDATE_GOLDEN=1 rewrites the listings (review the diff!).
TEST(DvmCompilerGolden, ListingsMatch) {
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
    if (std::getenv("TBDVM_UPDATE_GOLDEN")) {
      std::ofstream(golden) << listing;
    }
    ASSERT_TRUE(fs::exists(golden)) << "missing " << golden << " (run with TBDVM_UPDATE_GOLDEN=1)";
    EXPECT_EQ(listing, slurp(golden));
  }
  EXPECT_GE(n, 5u);
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
      {"tb:::x { x = 1 $ 2; }", 1, 16, "unexpected character '$'"},
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

// A divisor that is constant but not zero, or not constant, compiles: the
// VM's own fault catches a zero that appears at run time.
TEST(DvmCompilerErrors, NonZeroOrRuntimeDivisorsCompile) {
  for (const char* src : {"tb:::x { trace(arg0 / 2); }", "tb:::x { trace(arg0 % (7 / 3)); }",
                          "tb:::x { trace(arg0 / arg1); }", "tb:::x { trace(arg0 / (arg1 - arg1)); }",
                          "tb:::x { x = 8; x /= -1; }",
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
  EXPECT_EQ(r.program->formats[0].arg_types,
            (std::vector<ValueType>{ValueType::kString, ValueType::kInt}));
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
  EXPECT_EQ(e.eval("4 ^^ 0"), 1u);  // folded as the VM computes it
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
