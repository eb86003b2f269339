#include "ebpf_sites.h"

#include <sys/sdt.h>

extern "C" __attribute__((noinline, used)) void tb_ebpf_test_site(int i) {
  DTRACE_PROBE1(tb_ebpf_test, site, i);
  asm volatile("" ::: "memory");
}
