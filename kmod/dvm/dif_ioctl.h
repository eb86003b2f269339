/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TRACEBENCH_KMOD_DIF_IOCTL_H
#define TRACEBENCH_KMOD_DIF_IOCTL_H

#include <linux/compiler_types.h>
#include <linux/types.h>

#include "dvm/dif_glue.h"

struct file;
struct tb_kmod_dif_verify;

/* A DIF object copied in from user space. */
struct tb_dif_loaded {
	struct tb_dif_object o;
	void *insns;
	u64 *ints;
	char *strtab;
};

/*
 * Checks the request, copies the object in and verifies it.  0: *l holds it
 * (tb_dif_unload).  -EINVAL: rejected, req->err_pc/err_rule say why (the
 * caller copies req back).  Else an errno with nothing held.
 */
long tb_dif_load(struct tb_kmod_dif_verify *req, struct tb_dif_loaded *l);
void tb_dif_unload(struct tb_dif_loaded *l);

/* TB_KMOD_IOC_DIF_VERIFY (tracebench_kmod_abi.h). */
long tb_ioctl_dif_verify(void __user *uarg);
/* TB_KMOD_IOC_DIF_EXEC. */
long tb_ioctl_dif_exec(void __user *uarg);
/* TB_KMOD_IOC_DVM_* (dvm/dvm_session.c): the session belongs to `file`. */
long tb_ioctl_dvm(struct file *file, unsigned int cmd, void __user *uarg);
/* The file is closing: its session (if any) is disarmed and freed. */
void tb_dvm_release(struct file *file);

#endif
