// The usdt test site, for one source file of each test binary that includes
// it (the D-VM's usdt provider: tests/dvm/process_providers_test.cc on the
// host, tests/kmod/kmod_dvm_session_test.cc in the VM lab; ftrace's and
// perf's usdt probes: tests/ftrace, tests/perf): an SDT note guarded by
// its semaphore with arguments in the forms a compiler writes (x: a register,
// -7: an immediate, the global: %rip-relative, p->b: memory through a
// register, an int sign-extended), and an unguarded one whose name D spells
// with a dash (not-guarded).  tb_test_usdt_target returns 1 when the
// semaphore is raised.  Two notes written out as assembly: indexed (an
// indexed memory operand, with the registers set) and unreadable (a spec
// the provider refuses).
#pragma once

// Notes name their semaphores (tb_test_usdt_fired_semaphore below).
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

extern "C" {
__extension__ unsigned short tb_test_usdt_fired_semaphore __attribute__((unused, section(".probes")));
__extension__ unsigned short tb_test_usdt_not__guarded_semaphore __attribute__((unused, section(".probes")));
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
// A note as sys/sdt.h writes one, with its argument specs spelled out (no
// semaphore); for extended asm ("%%" is "%").
#define TB_TEST_SDT_NOTE(name, args)            \
  "990: nop\n"                                  \
  ".pushsection .note.stapsdt,\"?\",\"note\"\n" \
  ".balign 4\n"                                 \
  ".4byte 992f-991f, 994f-993f, 3\n"            \
  "991: .asciz \"stapsdt\"\n"                   \
  "992: .balign 4\n"                            \
  "993: .8byte 990b\n"                          \
  ".8byte _.stapsdt.base\n"                     \
  ".8byte 0\n"                                  \
  ".asciz \"tb_test_usdt\"\n"                   \
  ".asciz \"" name                              \
  "\"\n"                                        \
  ".asciz \"" args                              \
  "\"\n"                                        \
  "994: .balign 4\n"                            \
  ".popsection\n"

// arg0 = p[i + 2], an int, through base + index * scale + displacement;
// arg1 = i.
extern "C" __attribute__((noinline, used)) void tb_test_usdt_indexed(const int* p, long i) {
  __asm__ __volatile__(TB_TEST_SDT_NOTE("indexed", "-4@8(%%rax,%%rdx,4) 8@%%rdx")::"a"(p), "d"(i) : "memory");
}

// An argument this reader does not take: a number relative to %rip.
extern "C" __attribute__((noinline, used)) void tb_test_usdt_unreadable() {
  __asm__ __volatile__(TB_TEST_SDT_NOTE("unreadable", "8@16(%%rip)")::: "memory");
}
