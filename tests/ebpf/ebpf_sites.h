// Probe sites of the eBPF tests (in their own files so the compiler cannot
// see through them).
#pragma once

extern "C" void tb_ebpf_test_site(int i);      // noinline; USDT tb_ebpf_test:site
extern "C" void tb_ebpf_test_sem_site(int i);  // USDT tb_ebpf_test:sem_site behind a semaphore
