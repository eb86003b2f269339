#include <sys/sdt.h>

#include "ebpf_sites.h"

extern "C" {
__extension__ unsigned short tb_ebpf_test_sem_site_semaphore __attribute__((unused, section(".probes")));
}

extern "C" __attribute__((noinline, used)) void tb_ebpf_test_sem_site(int i) {
  if (__builtin_expect(tb_ebpf_test_sem_site_semaphore, 0)) DTRACE_PROBE1(tb_ebpf_test, sem_site, i);
  asm volatile("" ::: "memory");
}
