/*
 * The reference loop of the syscall and uprobe cross-checks
 * (loop_protocol.h): `tracebench-crosscheck-loop MODE CPU CALLS CHUNK` with
 * MODE getpid (syscall(SYS_getpid), the suite's getpid workload) or nop (a
 * call of tb_xc_nop, whose first instruction is a one-byte nop the kernel
 * emulates under a uprobe, as the suite's site_nop).
 */
#include "loop_protocol.h"

#include <sys/syscall.h>

__asm__(
    ".text\n"
    ".globl tb_xc_nop\n"
    ".type tb_xc_nop, @function\n"
    ".p2align 4\n"
    "tb_xc_nop:\n"
    "  nop\n"
    "  ret\n"
    ".size tb_xc_nop, .-tb_xc_nop\n");
void tb_xc_nop(void);

static void fire_getpid(long n) {
  for (long i = 0; i < n; ++i) syscall(SYS_getpid);
}

static void fire_nop(long n) {
  for (long i = 0; i < n; ++i) {
    tb_xc_nop();
    __asm__ volatile("" ::: "memory");
  }
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "getpid") == 0) return xc_serve(argc, argv, fire_getpid, 0);
  if (argc == 5 && strcmp(argv[1], "nop") == 0) return xc_serve(argc, argv, fire_nop, 1);
  fprintf(stderr, "usage: %s getpid|nop CPU CALLS CHUNK\n", argv[0]);
  return 2;
}
