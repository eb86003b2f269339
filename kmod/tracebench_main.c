// SPDX-License-Identifier: GPL-2.0
/*
 * tracebench companion module.
 *
 * /dev/tracebench (root only) takes these ioctls (ABI in
 * include/tracebench_kmod_abi.h):
 *   INFO: ABI version, capabilities, the events FIRE can fire.
 *   FIRE: fires N events in a tight loop with preemption (optionally also
 *         interrupts) disabled per chunk, timing every batch of events with
 *         the TSC and copying the samples to user space.
 *   DIF_VERIFY, DIF_EXEC: the D-VM's verifier on a DIF object, and one run of
 *         it (dvm/dif_ioctl.c).
 *   DVM_*: the D-VM as a tracer, its session owned by the open file
 *         (dvm/dvm_session.c).
 *   DELAY_*: the delay probe, a calibrated busy-wait the module attaches to
 *         its own tracepoint tracebench_fixed (delay_probe.c).
 * Each event calls the noinline tracebench_kmod_target() (the attach point
 * for kprobes, fentry/fexit and the function tracer) and then the selected
 * tracepoint.  The open file pins the module, so rmmod during a FIRE fails
 * with EBUSY instead of pulling the code from under the loop.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/version.h>
#include <asm/unistd.h> /* NR_syscalls */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif
#ifdef CONFIG_X86
#include <asm/tsc.h>
#endif

#include "tracebench_kmod_abi.h"
#include "tb_clock.h"
#include "delay_probe.h"
#include "dvm/dif_ioctl.h"

#define CREATE_TRACE_POINTS
#include "tracebench_trace.h"

/* Events per non-preemptible chunk (rounded to whole batches). */
#define TB_CHUNK_EVENTS 4096u

static atomic64_t tb_seq = ATOMIC64_INIT(0);
/* The payload pattern, filled once at load; FIRE copies what it needs. */
static u8 tb_pattern[TB_KMOD_MAX_PAYLOAD];
static u64 tb_sink;

/*
 * Calibration hook: a known regression on demand.  inject_delay_ns=N makes
 * every call of tracebench_kmod_target() spin N ns (busy wait on
 * local_clock()), so a kernel "regression" of known size and place can be
 * planted (scripts/vm/bisect-kernels.sh --inject-from, its test).  0 (the
 * default) costs one load and a not-taken branch per event.  At most
 * TB_INJECT_DELAY_MAX_NS: FIRE runs up to TB_CHUNK_EVENTS events with
 * preemption off, so 4096 x 100 us = 0.4 s without a reschedule at worst.
 * Writable at run time through /sys/module/tracebench/parameters/.
 */
#define TB_INJECT_DELAY_MAX_NS 100000u
static unsigned int tb_inject_delay_ns;

static int tb_inject_delay_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (v > TB_INJECT_DELAY_MAX_NS) {
		pr_err("tracebench: inject_delay_ns=%u is above the maximum %u\n", v,
		       TB_INJECT_DELAY_MAX_NS);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops tb_inject_delay_ops = {
	.set = tb_inject_delay_set,
	.get = param_get_uint,
};
module_param_cb(inject_delay_ns, &tb_inject_delay_ops, &tb_inject_delay_ns, 0644);
MODULE_PARM_DESC(
	inject_delay_ns,
	"Calibration: ns every tracebench_kmod_target() call spins (0..100000, default 0)");

static noinline void tb_spin_ns(unsigned int ns)
{
	u64 end = local_clock() + ns;

	while (local_clock() < end)
		cpu_relax();
}

u64 tracebench_kmod_target(u64 seq, const u8 *payload, u32 len);

/*
 * The attach point.  Global and noinline so the symbol keeps its name and
 * signature (no constprop/isra clone) and every event really calls it.
 */
noinline u64 tracebench_kmod_target(u64 seq, const u8 *payload, u32 len)
{
	u64 r = seq + len;
	unsigned int delay = READ_ONCE(tb_inject_delay_ns);

	if (len)
		r ^= READ_ONCE(payload[len - 1]);
	if (unlikely(delay))
		tb_spin_ns(delay);
	barrier();
	return r;
}

static u32 tb_tsc_khz(void)
{
#ifdef CONFIG_X86
	return tsc_khz;
#else
	return 0;
#endif
}

static __always_inline void tb_fire_one(u32 id, u64 seq, u8 *buf, u32 len)
{
	u64 r;

	if (len >= 8) {
		put_unaligned_le64(seq, buf);
	} else {
		u32 i;

		for (i = 0; i < len; i++)
			buf[i] = (u8)(seq >> (8 * i));
	}
	r = tracebench_kmod_target(seq, buf, len);
	WRITE_ONCE(tb_sink, READ_ONCE(tb_sink) + r);
	switch (id) {
	case TB_KMOD_EV_FIXED:
		trace_tracebench_fixed(seq, seq ^ TB_KMOD_FIXED_MAGIC);
		break;
	case TB_KMOD_EV_PAYLOAD:
		trace_tracebench_payload(seq, buf, len);
		break;
	default:
		break;
	}
}

/* One id per loop so the switch folds away in the hot path. */
#define TB_DEFINE_LOOP(name, ID)                                    \
	static noinline void name(u64 seq, u32 n, u8 *buf, u32 len) \
	{                                                           \
		u32 i;                                              \
		for (i = 0; i < n; i++)                             \
			tb_fire_one(ID, seq + i, buf, len);         \
	}
TB_DEFINE_LOOP(tb_loop_fixed, TB_KMOD_EV_FIXED)
TB_DEFINE_LOOP(tb_loop_payload, TB_KMOD_EV_PAYLOAD)
TB_DEFINE_LOOP(tb_loop_target, TB_KMOD_EV_TARGET)

typedef void (*tb_loop_fn)(u64 seq, u32 n, u8 *buf, u32 len);

void tb_fire_fixed_loop(u64 seq, u32 n)
{
	u8 buf[8];

	tb_loop_fixed(seq, n, buf, 0);
}

static long tb_ioctl_info(void __user *uarg)
{
	static const struct {
		u32 id, kind, max_payload;
		const char *name;
	} events[] = {
		{TB_KMOD_EV_FIXED, TB_KMOD_KIND_TRACEPOINT, 0, "tracebench:tracebench_fixed"},
		{TB_KMOD_EV_PAYLOAD, TB_KMOD_KIND_TRACEPOINT, TB_KMOD_MAX_PAYLOAD,
		 "tracebench:tracebench_payload"},
		{TB_KMOD_EV_TARGET, TB_KMOD_KIND_FUNCTION, TB_KMOD_MAX_PAYLOAD,
		 "function:" TB_KMOD_TARGET_SYMBOL},
	};
	struct tb_kmod_info *info;
	long ret = 0;
	u32 i;

	info = kzalloc(sizeof(*info), GFP_KERNEL); /* zeroed: no stack bytes leak */
	if (!info)
		return -ENOMEM;
	info->abi_version = TB_KMOD_ABI_VERSION;
	info->caps = TB_KMOD_CAP_IRQS_OFF | TB_KMOD_CAP_PAYLOAD | TB_KMOD_CAP_DIF |
		     TB_KMOD_CAP_DVM | TB_KMOD_CAP_DELAY;
#ifdef CONFIG_X86
	info->caps |= TB_KMOD_CAP_TSC;
#endif
	info->n_events = ARRAY_SIZE(events);
	info->nr_syscalls = NR_syscalls;
	info->max_payload = TB_KMOD_MAX_PAYLOAD;
	info->max_count = TB_KMOD_MAX_COUNT;
	info->max_batch = TB_KMOD_MAX_BATCH;
	info->max_samples = TB_KMOD_MAX_SAMPLES;
	info->tsc_khz = tb_tsc_khz();
	info->seq_next = (u64)atomic64_read(&tb_seq);
	strscpy(info->target_symbol, TB_KMOD_TARGET_SYMBOL, sizeof(info->target_symbol));
	strscpy(info->kernel_release, utsname()->release, sizeof(info->kernel_release));
	for (i = 0; i < ARRAY_SIZE(events); i++) {
		info->events[i].id = events[i].id;
		info->events[i].kind = events[i].kind;
		info->events[i].max_payload = events[i].max_payload;
		strscpy(info->events[i].name, events[i].name, sizeof(info->events[i].name));
	}
	if (copy_to_user(uarg, info, sizeof(*info)))
		ret = -EFAULT;
	kfree(info);
	return ret;
}

/* Long (~110 lines) on purpose: the request's checks, the timed firing loop
 * and its per-chunk bookkeeping (samples, migrations, the CPU it ran on) in
 * one function, so that what is inside a timed interval and what is outside
 * reads in one place. */
static long tb_ioctl_fire(void __user *uarg)
{
	struct tb_kmod_fire req;
	tb_loop_fn loop;
	u64 *samples = NULL;
	u64 n_samples, done = 0, seq_first, loop_cycles = 0, w0, w1;
	u32 batch, chunk_batches, k = 0, first_cpu = 0, migrations = 0, cpu = 0;
	u8 *buf;
	long ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved_in || (req.flags & ~TB_KMOD_FIRE_FLAGS_ALL))
		return -EINVAL;
	switch (req.event_id) {
	case TB_KMOD_EV_FIXED:
		loop = tb_loop_fixed;
		break;
	case TB_KMOD_EV_PAYLOAD:
		loop = tb_loop_payload;
		break;
	case TB_KMOD_EV_TARGET:
		loop = tb_loop_target;
		break;
	default:
		return -EINVAL;
	}
	if (req.payload_size > TB_KMOD_MAX_PAYLOAD)
		return -EINVAL;
	if (req.count == 0 || req.count > TB_KMOD_MAX_COUNT)
		return -EINVAL;
	batch = req.batch ? req.batch : 1;
	if (batch > TB_KMOD_MAX_BATCH)
		return -EINVAL;
	n_samples = div_u64(req.count + batch - 1, batch);
	if (req.samples_ptr) {
		if (n_samples > TB_KMOD_MAX_SAMPLES || n_samples > req.samples_cap)
			return -EINVAL;
		if (!access_ok(u64_to_user_ptr(req.samples_ptr), n_samples * sizeof(u64)))
			return -EFAULT;
		samples = kvcalloc(n_samples, sizeof(u64), GFP_KERNEL);
		if (!samples)
			return -ENOMEM;
	}
	/* Per FIRE: concurrent FIREs write their own sequence numbers into it. */
	buf = kmalloc(max(req.payload_size, 8u), GFP_KERNEL);
	if (!buf) {
		kvfree(samples);
		return -ENOMEM;
	}
	memcpy(buf, tb_pattern, req.payload_size);

	chunk_batches = max(1u, TB_CHUNK_EVENTS / batch);
	seq_first = (u64)atomic64_add_return((s64)req.count, &tb_seq) - req.count;
	w0 = ktime_get_ns();
	while (done < req.count) {
		unsigned long irqflags = 0;
		u64 t_prev, t;
		u32 b;

		preempt_disable();
		if (req.flags & TB_KMOD_FIRE_IRQS_OFF)
			local_irq_save(irqflags);
		cpu = smp_processor_id();
		if (done == 0)
			first_cpu = cpu;
		else if (cpu != first_cpu)
			migrations++;
		t_prev = tb_now();
		for (b = 0; b < chunk_batches && done < req.count; b++) {
			u32 n = (u32)min_t(u64, batch, req.count - done);

			loop(seq_first + done, n, buf, req.payload_size);
			t = tb_now();
			if (samples)
				samples[k++] = t - t_prev;
			loop_cycles += t - t_prev;
			t_prev = t;
			done += n;
		}
		if (req.flags & TB_KMOD_FIRE_IRQS_OFF)
			local_irq_restore(irqflags);
		preempt_enable();
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	w1 = ktime_get_ns();

	if (samples && k &&
	    copy_to_user(u64_to_user_ptr(req.samples_ptr), samples, (size_t)k * sizeof(u64)))
		ret = -EFAULT;
	req.samples_written = samples ? k : 0;
	req.cpu = cpu;
	req.fired = done;
	req.seq_first = seq_first;
	req.loop_cycles = loop_cycles;
	req.wall_ns = w1 - w0;
	req.tsc_khz = tb_tsc_khz();
	req.migrations = migrations;
	memset(req.reserved_out, 0, sizeof(req.reserved_out));
	if (!ret && copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
	kfree(buf);
	kvfree(samples);
	if (!ret && done < req.count)
		ret = -EINTR;
	return ret;
}

static int tb_open(struct inode *inode, struct file *file)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	/* misc_open left the miscdevice here; the file's D-VM session goes here. */
	file->private_data = NULL;
	return 0;
}

static int tb_release(struct inode *inode, struct file *file)
{
	tb_dvm_release(file);
	tb_delay_release(file);
	return 0;
}

static long tb_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case TB_KMOD_IOC_INFO:
		return tb_ioctl_info(uarg);
	case TB_KMOD_IOC_FIRE:
		return tb_ioctl_fire(uarg);
	case TB_KMOD_IOC_DIF_VERIFY:
		return tb_ioctl_dif_verify(uarg);
	case TB_KMOD_IOC_DIF_EXEC:
		return tb_ioctl_dif_exec(uarg);
	case TB_KMOD_IOC_DVM_ENABLE:
	case TB_KMOD_IOC_DVM_GO:
	case TB_KMOD_IOC_DVM_STOP:
	case TB_KMOD_IOC_DVM_BUFSNAP:
	case TB_KMOD_IOC_DVM_AGGSNAP:
	case TB_KMOD_IOC_DVM_STATUS:
	case TB_KMOD_IOC_DVM_AGGRESET:
		return tb_ioctl_dvm(file, cmd, uarg);
	case TB_KMOD_IOC_DELAY_SET:
	case TB_KMOD_IOC_DELAY_ENABLE:
	case TB_KMOD_IOC_DELAY_STATUS:
		return tb_ioctl_delay(file, cmd, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations tb_fops = {
	.owner = THIS_MODULE, /* an open fd pins the module: rmmod gets EBUSY */
	.open = tb_open,
	.release = tb_release,
	.unlocked_ioctl = tb_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice tb_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = TB_KMOD_DEVICE_NAME,
	.fops = &tb_fops,
	.mode = 0600,
};

static int __init tb_init(void)
{
	int ret;
	u32 i;

	for (i = 0; i < TB_KMOD_MAX_PAYLOAD; i++)
		tb_pattern[i] = tb_kmod_pattern_byte(i);
	ret = misc_register(&tb_misc);

	if (ret)
		pr_err("tracebench: misc_register failed: %d\n", ret);
	return ret;
}

static void __exit tb_exit(void)
{
	misc_deregister(&tb_misc);
}

module_init(tb_init);
module_exit(tb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("tracebench companion module: tracepoints and an in-kernel event loop");
MODULE_AUTHOR("tracebench");
