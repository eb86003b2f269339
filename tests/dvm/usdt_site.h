// The usdt provider's test site, for one source file of each test binary that
// includes it (tests/dvm/process_providers_test.cc on the host,
// tests/kmod/kmod_dvm_session_test.cc in the VM lab): an SDT note guarded by
// its semaphore with arguments in the forms a compiler writes (x: a register,
// -7: an immediate, the global: %rip-relative, p->b: memory through a
// register, an int sign-extended), and an unguarded one whose name D spells
// with a dash (not-guarded).  tb_test_usdt_target returns 1 when the
// semaphore is raised.  tb_test_usdt_indexed holds a note whose argument is
// an indexed memory operand, written out as assembly: one the provider
// refuses, by itself.
#pragma once

// Notes name their semaphores (tb_test_usdt_fired_semaphore below).
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

extern "C" {
__extension__ unsigned short tb_test_usdt_fired_semaphore __attribute__((unused, section(".probes")));
__extension__ unsigned short tb_test_usdt_not__guarded_semaphore __attribute__((unused, section(".probes")));
__extension__ unsigned short tb_test_usdt_indexed_semaphore __attribute__((unused, section(".probes")));
}
volatile long tb_test_usdt_global = 0;
struct TbUsdtPair {
  long a;
  int b;
};
extern "C" __attribute__((noinline, used)) int tb_test_usdt_target(long x, const TbUsdtPair* p) {
  if (__builtin_expect(tb_test_usdt_fired_semaphore, 0)) {
    DTRACE_PROBE4(tb_test_usdt, fired, x, -7, tb_test_usdt_global, p->b);
    return 1;
  }
  DTRACE_PROBE(tb_test_usdt, not__guarded);
  return 0;
}
extern "C" __attribute__((noinline, used)) void tb_test_usdt_indexed() {
  // The note sys/sdt.h would write, with the argument spelled out (the site's
  // nop, .stapsdt.base, which the probes above define, and the semaphore).
  __asm__ __volatile__(
      "990: nop\n"
      ".pushsection .note.stapsdt,\"?\",\"note\"\n"
      ".balign 4\n"
      ".4byte 992f-991f, 994f-993f, 3\n"
      "991: .asciz \"stapsdt\"\n"
      "992: .balign 4\n"
      "993: .8byte 990b\n"
      ".8byte _.stapsdt.base\n"
      ".8byte tb_test_usdt_indexed_semaphore\n"
      ".asciz \"tb_test_usdt\"\n"
      ".asciz \"indexed\"\n"
      ".asciz \"8@(%rax,%rdx,8)\"\n"
      "994: .balign 4\n"
      ".popsection\n");
}
