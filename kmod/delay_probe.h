/* SPDX-License-Identifier: GPL-2.0 */
/* The delay probe on tracebench_fixed (delay_probe.c): DELAY_* ioctls. */
#ifndef TRACEBENCH_KMOD_DELAY_PROBE_H
#define TRACEBENCH_KMOD_DELAY_PROBE_H

#include <linux/fs.h>

long tb_ioctl_delay(struct file *file, unsigned int cmd, void __user *uarg);
/* The file's probe, if it owns it, unregistered and given up. */
void tb_delay_release(struct file *file);
/* FIRE's loop for tracebench_fixed, n events from seq (tracebench_main.c):
 * what the probe is calibrated on.  Preemption disabled by the caller. */
void tb_fire_fixed_loop(u64 seq, u32 n);

#endif
