// libFuzzer target: the D compiler.  Any input must either be rejected with
// a positioned error or compile to DIF that the verifier accepts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kmod/dvm/core/vm.h"
#include "tracers/dvm/compiler/dcompile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string src(reinterpret_cast<const char*>(data), size);
  tbdvm::CompileResult r = tbdvm::compile_d(src);
  if (!r.program) {
    if (r.error.empty() || r.line < 1 || r.column < 1) {
      std::fprintf(stderr, "error without a position: '%s'\n", r.error.c_str());
      std::abort();
    }
    return 0;
  }
  static tbdvm::VerifyWork w;
  auto check = [](tbdvm::DifObject* d) {
    if (!d) return;
    tbdvm::VerifyError v = tbdvm::dif_verify(d->finalize(), &w);
    if (v.rule) {
      std::fprintf(stderr, "compiler emitted DIF the verifier rejects: %s at %u\n", v.rule, v.pc);
      std::abort();
    }
  };
  for (auto& c : r.program->clauses) {
    check(c.predicate.get());
    for (auto& a : c.actions) {
      check(a.value.get());
      for (auto& k : a.keys) check(k.get());
    }
  }
  (void)tbdvm::disassemble(*r.program);
  return 0;
}
