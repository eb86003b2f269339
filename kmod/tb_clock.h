/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's clock for timed loops and stages: the serialized TSC on x86
 * (TB_KMOD_CAP_TSC), monotonic ns elsewhere.
 */
#ifndef TRACEBENCH_KMOD_TB_CLOCK_H
#define TRACEBENCH_KMOD_TB_CLOCK_H

#include <linux/timekeeping.h>
#include <linux/types.h>
#ifdef CONFIG_X86
#include <asm/msr.h>
#endif

static __always_inline u64 tb_now(void)
{
#ifdef CONFIG_X86
	return rdtsc_ordered();
#else
	return ktime_get_mono_fast_ns();
#endif
}

#endif
