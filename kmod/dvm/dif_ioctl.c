// SPDX-License-Identifier: GPL-2.0
/*
 * The D-VM's ioctls: user space hands the module DIF objects made by the
 * user-space D compiler; the module checks them again with the core's own
 * verifier (dif_glue.h) before anything runs them.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "tracebench_kmod_abi.h"
#include "dvm/dif_glue.h"
#include "dvm/dif_ioctl.h"

static_assert(sizeof(struct tb_kmod_dif_insn) == TB_DIF_INSN_SIZE);
static_assert(TB_KMOD_DIF_MAX_INSNS == TB_DIF_MAX_INSNS);
static_assert(TB_KMOD_DIF_STR_LEN == TB_DIF_STR_MAX);

/* The host services of the core, for a run in the module. */
unsigned long long tb_dif_host_timestamp(void)
{
	return ktime_get_ns();
}

unsigned long long tb_dif_host_vtimestamp(void)
{
	return current->se.sum_exec_runtime; /* as of the last tick or switch */
}

unsigned long long tb_dif_host_walltimestamp(void)
{
	return ktime_get_real_ns();
}

unsigned long long tb_dif_host_cpu(void)
{
	return raw_smp_processor_id();
}

int tb_dif_host_copyin(void *dst, unsigned long long src, unsigned long long len)
{
	return copy_from_user_nofault(dst, u64_to_user_ptr(src), len) == 0;
}

void tb_dif_unload(struct tb_dif_loaded *l)
{
	kvfree(l->strtab);
	kvfree(l->ints);
	kvfree(l->insns);
}

/* Copies n bytes from user space into fresh memory; NULL and *err on failure. */
static void *tb_dif_copy_in(u64 uptr, size_t n, long *err)
{
	void *p;

	if (!n)
		return NULL;
	p = kvmalloc(n, GFP_KERNEL);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	if (copy_from_user(p, u64_to_user_ptr(uptr), n)) {
		kvfree(p);
		*err = -EFAULT;
		return NULL;
	}
	return p;
}

static long tb_dif_reject(struct tb_kmod_dif_verify *req, u32 pc, const char *rule)
{
	req->err_pc = pc;
	strscpy(req->err_rule, rule, sizeof(req->err_rule));
	return -EINVAL;
}

long tb_dif_load(struct tb_kmod_dif_verify *req, struct tb_dif_loaded *l)
{
	const char *rule = NULL;
	unsigned int pc = 0;
	void *work;
	long ret = 0;

	memset(l, 0, sizeof(*l));
	req->err_pc = 0;
	req->reserved_out = 0;
	memset(req->err_rule, 0, sizeof(req->err_rule));
	if (req->reserved_in || (req->flags & ~TB_KMOD_DIF_FLAGS_ALL))
		return tb_dif_reject(req, 0, "unknown flag or non-zero reserved field");
	/* The verifier's own length rule, and the module's table caps, before
	 * anything is copied. */
	if (req->n_insns > TB_KMOD_DIF_MAX_INSNS)
		return tb_dif_reject(req, TB_KMOD_DIF_MAX_INSNS, "program too long");
	if (req->n_ints > TB_KMOD_DIF_MAX_INTS)
		return tb_dif_reject(req, 0, "integer table too large");
	if (req->strtab_len > TB_KMOD_DIF_MAX_STRTAB)
		return tb_dif_reject(req, 0, "string table too large");

	l->insns = tb_dif_copy_in(req->insns_ptr,
				  (size_t)req->n_insns * sizeof(struct tb_kmod_dif_insn), &ret);
	if (!ret)
		l->ints = tb_dif_copy_in(req->ints_ptr, (size_t)req->n_ints * sizeof(u64), &ret);
	if (!ret)
		l->strtab = tb_dif_copy_in(req->strtab_ptr, req->strtab_len, &ret);
	if (ret)
		goto fail;
	l->o.insns = l->insns;
	l->o.n_insns = req->n_insns;
	l->o.ints = l->ints;
	l->o.n_ints = req->n_ints;
	l->o.strtab = l->strtab;
	l->o.strtab_len = req->strtab_len;
	l->o.returns_string = !!(req->flags & TB_KMOD_DIF_RETURNS_STRING);
	work = kvmalloc(tb_dif_verify_work_size(), GFP_KERNEL);
	if (!work) {
		ret = -ENOMEM;
		goto fail;
	}
	if (tb_dif_verify(&l->o, work, &pc, &rule))
		ret = tb_dif_reject(req, pc, rule);
	kvfree(work);
	if (!ret)
		return 0;
fail:
	tb_dif_unload(l);
	return ret;
}

long tb_ioctl_dif_verify(void __user *uarg)
{
	struct tb_kmod_dif_verify req;
	struct tb_dif_loaded l;
	long ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = tb_dif_load(&req, &l);
	if (!ret)
		tb_dif_unload(&l);
	if ((!ret || ret == -EINVAL) && copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return ret;
}

long tb_ioctl_dif_exec(void __user *uarg)
{
	struct tb_kmod_dif_exec *req;
	struct tb_dif_result *res = NULL;
	struct tb_dif_loaded l;
	char comm[TASK_COMM_LEN];
	void *work = NULL;
	long ret;

	/* ~400 bytes of request and ~300 of result: not on the stack. */
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	res = kzalloc(sizeof(*res), GFP_KERNEL);
	if (!req || !res) {
		ret = -ENOMEM;
		goto out;
	}
	if (copy_from_user(req, uarg, sizeof(*req))) {
		ret = -EFAULT;
		goto out;
	}
	req->result = 0;
	req->fault = 0;
	req->result_len = 0;
	memset(req->result_str, 0, sizeof(req->result_str));
	ret = tb_dif_load(&req->object, &l);
	if (ret == -EINVAL && copy_to_user(uarg, req, sizeof(*req)))
		ret = -EFAULT;
	if (ret)
		goto out;
	work = kvzalloc(tb_dif_exec_work_size(), GFP_KERNEL);
	if (!work) {
		tb_dif_unload(&l);
		ret = -ENOMEM;
		goto out;
	}
	get_task_comm(comm, current);
	/* As on a probe: not preempted while the program runs. */
	preempt_disable();
	tb_dif_exec(&l.o, work, req->args, task_tgid_nr(current), task_pid_nr(current), comm, res);
	preempt_enable();
	tb_dif_unload(&l);
	req->result = res->value;
	req->fault = res->fault;
	req->result_len = res->str_len;
	memcpy(req->result_str, res->str, sizeof(req->result_str));
	if (copy_to_user(uarg, req, sizeof(*req)))
		ret = -EFAULT;
out:
	kvfree(work);
	kfree(res);
	kfree(req);
	return ret;
}
