/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACEBENCH_KMOD_DIF_IOCTL_H
#define TRACEBENCH_KMOD_DIF_IOCTL_H

#include <linux/compiler_types.h>

/* TB_KMOD_IOC_DIF_VERIFY (tracebench_kmod_abi.h). */
long tb_ioctl_dif_verify(void __user *uarg);
/* TB_KMOD_IOC_DIF_EXEC. */
long tb_ioctl_dif_exec(void __user *uarg);

#endif
