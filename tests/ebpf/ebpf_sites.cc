#include "ebpf_sites.h"

#include <sys/sdt.h>

extern "C" __attribute__((noinline, used)) void tb_ebpf_test_site(int i) {
  DTRACE_PROBE1(tb_ebpf_test, site, i);
  asm volatile("" ::: "memory");
}

extern "C" __attribute__((noinline, used)) void tb_ebpf_test_payload_site(unsigned long i, const char* p,
                                                                          unsigned long n) {
  asm volatile("" ::"r"(i), "r"(p), "r"(n) : "memory");
}
