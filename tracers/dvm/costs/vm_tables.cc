// Tables 1, 2 and 4: the VM alone (DIF instructions, built-in variables,
// subroutines, actions and aggregations), fired through dvm_fire on the
// hand-built Core state.
#include "tracers/dvm/costs/costs.h"

#include <cstdio>
#include <cstdlib>

namespace tbdvm::costs {

std::vector<InsnCase> insn_cases() {
  const uint32_t g = kVarFirstUser + 1, gs = kVarFirstUser + 2;
  return {
      {"or", "logic", {I(kOpOr, 9, 1, 2)}},
      {"xor", "logic", {I(kOpXor, 9, 1, 2)}},
      {"and", "logic", {I(kOpAnd, 9, 1, 2)}},
      {"not", "logic", {I(kOpNot, 9, 1)}},
      {"add", "add/sub", {I(kOpAdd, 9, 1, 2)}},
      {"sub", "add/sub", {I(kOpSub, 9, 1, 2)}},
      {"mul", "mul", {I(kOpMul, 9, 1, 2)}},
      {"sdiv", "div/rem", {I(kOpSdiv, 9, 1, 2)}},
      {"udiv", "div/rem", {I(kOpUdiv, 9, 1, 2)}},
      {"srem", "div/rem", {I(kOpSrem, 9, 1, 2)}},
      {"urem", "div/rem", {I(kOpUrem, 9, 1, 2)}},
      {"setx", "set constant", {I(kOpSetx, 9, 0, 0, 1)}},
      {"sets", "set string", {I(kOpSets, 9, 0, 0, 0)}},
      {"pushtv", "push (by value)", {I(kOpPushtv, 0, 1), I(kOpFlushts)}, 1, {"flushts"}},
      {"pushtr", "push (by reference)", {I(kOpPushtr, 0, 6), I(kOpFlushts)}, 1, {"flushts"}},
      {"flushts", "flush stack", {I(kOpFlushts)}},
      {"cmp", "cmp", {I(kOpCmp, 0, 1, 2)}},
      {"tst", "tst", {I(kOpTst, 0, 1)}},
      {"scmp", "scmp (16-char strings)", {I(kOpScmp, 0, 6, 8)}},
      {"ba", "branch", {I(kOpBa, 0, 0, 0, 0xffffffff)}},  // target patched to next
      {"be", "branch (conditional)", {I(kOpBe, 0, 0, 0, 0xffffffff)}},
      {"mov", "mov", {I(kOpMov, 9, 1)}},
      {"ldx", "load memory", {I(kOpLdx, 9, 5)}},
      {"ldub", "load memory", {I(kOpLdub, 9, 5)}},
      {"stx", "store memory", {I(kOpStx, 7, 1)}},
      {"ldgs", "load global", {I(kOpLdgs, 9, 0, 0, g)}},
      {"stgs", "store global", {I(kOpStgs, 0, 1, 0, g)}},
      {"stgs_ref", "store global (by reference)", {I(kOpStgs, 0, 6, 0, gs | kVarRef)}},
      {"ldts", "load thread-local", {I(kOpLdts, 9, 0, 0, 1)}},
      {"stts", "store thread-local", {I(kOpStts, 0, 1, 0, 1)}},
      {"stts_ref", "store thread-local (by reference)", {I(kOpStts, 0, 6, 0, 2 | kVarRef)}},
      {"ldls", "load clause-local", {I(kOpLdls, 9, 0, 0, 1)}},
      {"stls", "store clause-local", {I(kOpStls, 0, 1, 0, 1)}},
      {"ldga",
       "load global assoc",
       {I(kOpPushtv, 0, 1), I(kOpLdga, 9, 0, 0, 1), I(kOpFlushts)},
       1,
       {"pushtv", "flushts"}},
      {"stga",
       "store global assoc",
       {I(kOpPushtv, 0, 1), I(kOpStga, 0, 2, 0, 1), I(kOpFlushts)},
       1,
       {"pushtv", "flushts"}},
      {"ldta",
       "load thread assoc",
       {I(kOpPushtv, 0, 1), I(kOpLdta, 9, 0, 0, 1), I(kOpFlushts)},
       1,
       {"pushtv", "flushts"}},
      {"stta",
       "store thread assoc",
       {I(kOpPushtv, 0, 1), I(kOpStta, 0, 2, 0, 1), I(kOpFlushts)},
       1,
       {"pushtv", "flushts"}},
      // What a predicate and an expression compile to, interleaved so each
      // result feeds the next (no class runs alone): per instruction.
      {"mixed",
       "mixed stream (argument and memory loads, ALU, compare, branch, locals)",
       {I(kOpLdgs, 9, 0, 0, kVarArg0 + 1), I(kOpSetx, 10, 0, 0, 1), I(kOpAdd, 9, 9, 10), I(kOpAnd, 11, 9, 2),
        I(kOpSll, 11, 11, 4), I(kOpCmp, 0, 9, 10), I(kOpBe, 0, 0, 0, 0xffffffff), I(kOpMov, 12, 9),
        I(kOpStls, 0, 11, 0, 1), I(kOpLdls, 13, 0, 0, 1), I(kOpSub, 9, 9, 13), I(kOpOr, 12, 12, 11), I(kOpLdx, 14, 5),
        I(kOpTst, 0, 14)},
       14},
  };
}

std::vector<InsnCase> g_insn_cases;
std::vector<Dif> g_insn_progs;
Dif g_empty_prog;  // prologue + ret

void patch_branches(Dif& d) {
  for (size_t i = 0; i < d.insns.size(); i++)
    if (d.insns[i].imm == 0xffffffff) d.insns[i].imm = static_cast<uint32_t>(i + 1);
}

void register_table1() {
  g_insn_cases = insn_cases();
  g_empty_prog = make_prog({}, 0);
  g_insn_progs.reserve(g_insn_cases.size());
  static VerifyWork w;
  for (auto& c : g_insn_cases) {
    Dif d = make_prog(c.seq, kRepeat);
    patch_branches(d);
    VerifyError v = dif_verify(d.prog(), &w);
    if (v.rule) {
      std::fprintf(stderr, "table1 %s: verifier: %s at %u\n", c.name, v.rule, v.pc);
      std::abort();
    }
    g_insn_progs.push_back(std::move(d));
  }
  // Empty program (prologue + ret): the invocation overhead.
  benchmark::RegisterBenchmark("table1/dif_invoke_empty", [](benchmark::State& s) {
    const Program* p = g_empty_prog.prog();
    timed(s, "table1/dif_invoke_empty", 200, [p](uint32_t n) {
      for (uint32_t i = 0; i < n; i++) benchmark::DoNotOptimize(run_prog(p));
    });
  })->Iterations(301);
  for (size_t k = 0; k < g_insn_cases.size(); k++) {
    std::string name = std::string("table1/") + g_insn_cases[k].name;
    benchmark::RegisterBenchmark(name.c_str(), [k, name](benchmark::State& s) {
      const Program* p = g_insn_progs[k].prog();
      const Program* e = g_empty_prog.prog();
      // Thread-local / assoc loads need the variable to exist.
      Core& c = core();
      if (g_insn_cases[k].seq[0].op == kOpLdts || g_insn_cases[k].seq.size() > 1) {
        Dif pre = make_prog(
            {I(kOpStts, 0, 1, 0, 1), I(kOpPushtv, 0, 1), I(kOpStga, 0, 2, 0, 1), I(kOpStta, 0, 2, 0, 1), I(kOpFlushts)},
            1);
        run_prog(pre.prog());
      }
      (void)c;
      timed(
          s, name, 50,
          [p](uint32_t n) {
            for (uint32_t i = 0; i < n; i++) benchmark::DoNotOptimize(run_prog(p));
          },
          [e](uint32_t n) {
            for (uint32_t i = 0; i < n; i++) benchmark::DoNotOptimize(run_prog(e));
          });
      g_cells[name].cycles /= kRepeat * g_insn_cases[k].per_seq;
      g_cells[name].min /= kRepeat * g_insn_cases[k].per_seq;
      for (double& x : g_cells[name].samples) x /= kRepeat * g_insn_cases[k].per_seq;
      s.counters["cycles"] = g_cells[name].cycles;
    })->Iterations(201);
  }
}

// ---------------------------------------------------------------------------
// Table 2: built-in variables, one load per (fresh) firing.
void register_table2() {
  static std::vector<std::pair<std::string, Dif>> progs;
  static Dif base = [] {
    Dif d;
    d.insns = {I(kOpRet, 0)};
    return d;
  }();
  for (uint32_t id = 0; id < kVarBuiltinEnd; id++) {
    const char* n = builtin_name(id);
    if (!n) continue;
    Dif d;
    d.insns = {I(kOpLdgs, 1, 0, 0, id), I(kOpRet, 1)};
    progs.emplace_back(n, std::move(d));
  }
  for (size_t k = 0; k < progs.size(); k++) {
    std::string name = "table2/" + progs[k].first;
    benchmark::RegisterBenchmark(name.c_str(), [k, name](benchmark::State& s) {
      const Program* p = progs[k].second.prog();
      const Program* b = base.prog();
      timed(
          s, name, 200,
          [p](uint32_t n) {
            for (uint32_t i = 0; i < n; i++) benchmark::DoNotOptimize(run_prog(p));
          },
          [b](uint32_t n) {
            for (uint32_t i = 0; i < n; i++) benchmark::DoNotOptimize(run_prog(b));
          });
    })->Iterations(201);
  }
}

// ---------------------------------------------------------------------------
// Table 4: subroutines (call minus its argument set-up), actions and
// aggregations (ECB with the action minus an empty ECB), via dvm_fire.
struct FireCase {
  std::string name;
  std::shared_ptr<CompiledProgram> prog;
};

std::unique_ptr<CoreEcb> core_ecb(const std::string& clause_body, uint32_t copies) {
  CompileResult r = compile_d("tb:::bench " + clause_body);
  if (!r.program) {
    std::fprintf(stderr, "dvm_costs: %s\n", r.error.c_str());
    std::abort();
  }
  auto c = std::make_unique<CoreEcb>();
  c->prog = r.program;
  ClauseDesc& cl = c->prog->clauses[0];
  uint32_t off = sizeof(RecordHeader);
  bool records = false;
  c->keys.resize(cl.actions.size());
  for (size_t i = 0; i < cl.actions.size(); i++) {
    ActionDesc& a = cl.actions[i];
    Action x;
    x.kind = a.kind;
    x.agg_kind = a.agg_kind;
    if (a.value) x.value = a.value->finalize();
    for (auto& k : a.keys) c->keys[i].push_back(k->finalize());
    x.keys = c->keys[i].data();
    x.nkeys = static_cast<uint32_t>(a.keys.size());
    x.agg_id = a.agg_id;
    x.lq_base = a.lq_base;
    x.lq_limit = a.lq_limit;
    x.lq_step = a.lq_step;
    uint32_t sz = 0;
    if (a.kind == kActTrace || a.kind == kActPrintf || a.kind == kActExit)
      sz = !a.value ? 0 : a.value->returns_string ? 256 : 8;
    if (a.kind == kActTracemem || a.kind == kActStack) sz = a.size;
    if (a.kind != kActDifExpr && a.kind != kActAggregate) records = true;
    x.offset = off;
    x.size = sz;
    off += (sz + 7) & ~7u;
    c->acts.push_back(x);
  }
  if (cl.predicate) c->ecb.predicate = cl.predicate->finalize();
  c->ecb.epid = 1;
  c->ecb.actions = c->acts.data();
  c->ecb.nactions = static_cast<uint32_t>(c->acts.size());
  c->ecb.record_size = records ? off : 0;
  for (uint32_t i = 0; i < copies && i < 16; i++) c->chain[i] = &c->ecb;
  return c;
}

void fire_core(CoreEcb* e, uint32_t necbs) {
  Core& c = core();
  c.probe.ecbs = e ? e->chain : nullptr;
  c.probe.necbs = e ? necbs : 0;
  dvm_fire_locked(&c.st, &c.probe, &c.fa, 0);
  // Keep the principal buffer from filling: the consumer's job.
  if (c.slot.buf.offset[0] > (1u << 19)) c.slot.buf.offset[0] = 0;
}

void register_fire_case(const std::string& name, const std::string& body, const std::string& base_body = "{ }") {
  benchmark::RegisterBenchmark(name.c_str(), [name, body, base_body](benchmark::State& s) {
    auto e = core_ecb(body);
    auto b = core_ecb(base_body);
    timed(
        s, name, 100,
        [&](uint32_t n) {
          for (uint32_t i = 0; i < n; i++) fire_core(e.get(), 1);
        },
        [&](uint32_t n) {
          for (uint32_t i = 0; i < n; i++) fire_core(b.get(), 1);
        });
  })->Iterations(201);
}

void register_table4() {
  // Subroutines: "x = f(args)" minus "x = args" (argument evaluation).
  static char user_buf[256] = "a user-space string for copyin";
  std::string ub = std::to_string(reinterpret_cast<uint64_t>(user_buf));
  struct S {
    const char* name;
    std::string with, without;
  } subrs[] = {
      {"strlen", "{ this->x = strlen(\"abcdefghijklmnop\"); }", "{ this->x = 1; }"},
      {"strjoin", "{ trace(strjoin(\"abcdefgh\", \"ijklmnop\")); }", "{ trace(\"abcdefghijklmnop\"); }"},
      {"alloca", "{ this->x = alloca(64); }", "{ this->x = 64; }"},
      {"bcopy", "{ this->d = alloca(64); bcopy(arg0, this->d, 64); }", "{ this->d = alloca(64); this->x = arg0; }"},
      {"copyin", "{ this->x = copyin(" + ub + ", 64); }", "{ this->x = " + ub + "; }"},
      {"copyinstr", "{ trace(copyinstr(" + ub + ")); }", "{ trace(\"a user-space string for copyin\"); }"},
      {"rand", "{ this->x = rand(); }", "{ this->x = 1; }"},
  };
  for (auto& sc : subrs) register_fire_case(std::string("table4/subr/") + sc.name, sc.with, sc.without);
  struct A {
    const char* name;
    const char* body;
  } acts[] = {
      {"trace_int", "{ trace(arg1); }"},
      {"trace_string", "{ trace(probename); }"},
      {"tracemem_64", "{ tracemem(arg0, 64); }"},
      {"printf_2args", "{ printf(\"%d %s\\n\", arg1, probename); }"},
      {"stack", "{ stack(); }"},
      {"count", "{ @a = count(); }"},
      {"sum", "{ @a = sum(arg1); }"},
      {"min", "{ @a = min(arg1); }"},
      {"max", "{ @a = max(arg1); }"},
      {"avg", "{ @a = avg(arg1); }"},
      {"quantize", "{ @a = quantize(arg1); }"},
      {"lquantize", "{ @a = lquantize(arg1, 0, 100, 10); }"},
      {"llquantize", "{ @a = llquantize(arg1, 10, 0, 6, 20); }"},
      {"stddev", "{ @a = stddev(arg1); }"},
      {"count_int_key", "{ @a[arg1] = count(); }"},
      {"count_string_key", "{ @a[probename] = count(); }"},
  };
  for (auto& a : acts) register_fire_case(std::string("table4/action/") + a.name, a.body);
}

}  // namespace tbdvm::costs
