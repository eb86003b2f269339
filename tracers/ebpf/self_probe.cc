#include "self_probe.h"

#include <sys/sdt.h>

extern "C" __attribute__((noinline, used)) void tb_ebpf_self_probe(int arg) {
  DTRACE_PROBE1(tracebench_ebpf, self_probe, arg);
  asm volatile("" ::: "memory");  // keeps the call from being elided
}
