// Probe sites of the eBPF tests (in their own files so the compiler cannot
// see through them).
#pragma once

extern "C" void tb_ebpf_test_site(int i);      // noinline; USDT tb_ebpf_test:site
extern "C" void tb_ebpf_test_sem_site(int i);  // USDT tb_ebpf_test:sem_site behind a semaphore
// noinline (i, buffer, length): a payload site like bench/dvm_workloads.cc's,
// whose buffer is argument 1 and length argument 2.
extern "C" void tb_ebpf_test_payload_site(unsigned long i, const char* p, unsigned long n);
