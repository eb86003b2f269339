// SPDX-License-Identifier: GPL-2.0
// The DIF core's host services in the module (C++ side of the glue): the
// tb_dif_host_* functions of dif_glue.h behind a tbdvm::Host.  Shared by
// dif_glue.cc (one run) and session_glue.cc (tracing sessions).
#pragma once

#include "dif_glue.h"
#include "core/vm.h"

// Internal linkage (each glue file its own copy): the kernel's module link
// drops the COMDAT sections C++ puts inline functions in, and their mcount
// entries would point into nothing.
namespace tb_module_host
{
namespace
{

uint64_t timestamp()
{
	return tb_dif_host_timestamp();
}
uint64_t vtimestamp()
{
	return tb_dif_host_vtimestamp();
}
uint64_t walltimestamp()
{
	return tb_dif_host_walltimestamp();
}
uint64_t cpu()
{
	return tb_dif_host_cpu();
}
bool copyin(void *dst, uint64_t src, uint64_t len)
{
	return tb_dif_host_copyin(dst, src, len) != 0;
}
uint32_t stack(uint64_t *pcs, uint32_t max)
{
	return tb_dif_host_stack(pcs, max);
}

// Every service set; pid is the caller's to fill where it is fixed.
void install(tbdvm::Host *h)
{
	h->timestamp = timestamp;
	h->vtimestamp = vtimestamp;
	h->walltimestamp = walltimestamp;
	h->cpu = cpu;
	h->copyin = copyin;
	h->stack = stack;
}

} // namespace
} // namespace tb_module_host
