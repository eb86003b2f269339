// SPDX-License-Identifier: GPL-2.0
/*
 * The delay probe: a known cost that exists on the traced path only.
 *
 * The module attaches tb_delay_probe() to its own tracepoint tracebench_fixed
 * while user space has it enabled (DELAY_ENABLE 1), and detaches it
 * otherwise, so an untraced event pays nothing for it (the tracepoint's
 * static key is off; its call site is a nop) and a traced one pays the
 * tracepoint's dispatch and the probe, which busy-waits on the clock
 * (tb_clock.h: the TSC on x86) for a calibrated number of cycles.  The
 * difference between the two is one firing, which DELAY_SET calibrates to
 * cost `ns`:
 *
 *   - the clock's rate is measured against ktime_get_raw_ns() over a sleep
 *     (not taken from tsc_khz, which is reported beside it: a guest whose
 *     TSC runs at another rate than the kernel believes shows the gap);
 *   - a firing is timed as the suite meets it: FIRE's own loop for
 *     tracebench_fixed (tb_fire_fixed_loop()) with the probe registered,
 *     minus the same loop without it, over windows of about 50 us with
 *     preemption off (the clock reads spread over many events); the lower
 *     quartile of 61 windows, since an interrupt or time stolen by the host
 *     only lengthens a window;
 *   - with the shortest spin that says what dispatch, probe, count and the
 *     last read add to any spin; the spin is set to the rest of `ns` and
 *     corrected twice by what the firing then costs.
 *
 * While enabled the probe counts its firings and the cycles they spent, and
 * the enabled intervals are timed by both clocks: DELAY_STATUS reports them,
 * so user space can hold the events recorded to those fired and see the
 * time really spent, by a clock it can check.
 */
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#ifdef CONFIG_X86
#include <asm/tsc.h>
#endif

#include "tracebench_kmod_abi.h"
#include "tb_clock.h"
#include "delay_probe.h"
#include "tracebench_trace.h"

#define TB_DELAY_WINDOWS   61
#define TB_DELAY_WINDOW_NS 50000ull

struct tb_delay_count {
	u64 firings;
	u64 spent_cycles;
	u64 min_spent_cycles; /* U64_MAX until the first firing */
};
static DEFINE_PER_CPU(struct tb_delay_count, tb_delay_counts);

/* Cycles a firing spins; read by the probe on every firing. */
static u64 tb_delay_spin;

/* Everything below under tb_delay_lock. */
static DEFINE_MUTEX(tb_delay_lock);
static struct file *tb_delay_owner;
static bool tb_delay_on;
static u64 tb_delay_on_cycles, tb_delay_on_ns; /* the current enabled interval's start */
static u64 tb_delay_enabled_cycles, tb_delay_enabled_ns;

static void tb_delay_probe(void *data, u64 seq, u64 value)
{
	u64 start = tb_now(), now;
	u64 spin = READ_ONCE(tb_delay_spin);

	do {
		now = tb_now();
	} while (now - start < spin);
	/* Tracepoint probes run with preemption disabled: this CPU's slot. */
	__this_cpu_inc(tb_delay_counts.firings);
	__this_cpu_add(tb_delay_counts.spent_cycles, now - start);
	if (now - start < __this_cpu_read(tb_delay_counts.min_spent_cycles))
		__this_cpu_write(tb_delay_counts.min_spent_cycles, now - start);
}

static u32 tb_delay_tsc_khz(void)
{
#ifdef CONFIG_X86
	return tsc_khz;
#else
	return 0;
#endif
}

/* Clock cycles per second of ktime_get_raw_ns(), over a sleep; 0 if the
 * raw clock did not advance. */
static u64 tb_delay_rate_hz(void)
{
	u64 n0, c0, n1, c1;

	n0 = ktime_get_raw_ns();
	c0 = tb_now();
	msleep(TB_KMOD_DELAY_RATE_MS);
	n1 = ktime_get_raw_ns();
	c1 = tb_now();
	if (n1 <= n0 || c1 <= c0)
		return 0;
	return mul_u64_u64_div_u64(c1 - c0, NSEC_PER_SEC, n1 - n0);
}

static int tb_delay_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* What one window measured per event, in 1/1000 cycles: the lower quartile
 * and the interquartile range. */
struct tb_delay_windows {
	u64 q1, iqr;
};

/* FIRE's loop for tracebench_fixed, timed per event over the windows; the
 * probe spins `spin` cycles if it is registered. */
static struct tb_delay_windows tb_delay_loop_mcycles(u64 spin, u64 hz)
{
	u64 per_event[TB_DELAY_WINDOWS];
	u64 events = max_t(
		u64, 20, div64_u64(hz * TB_DELAY_WINDOW_NS, NSEC_PER_SEC * max_t(u64, spin, 100)));
	struct tb_delay_windows r;
	int w;

	WRITE_ONCE(tb_delay_spin, spin);
	for (w = 0; w < TB_DELAY_WINDOWS; w++) {
		u64 t0, t1;

		preempt_disable();
		t0 = tb_now();
		tb_fire_fixed_loop(TB_KMOD_DELAY_CALIB_SEQ, (u32)events);
		t1 = tb_now();
		preempt_enable();
		per_event[w] = div64_u64((t1 - t0) * 1000, events);
		cond_resched();
	}
	sort(per_event, TB_DELAY_WINDOWS, sizeof(u64), tb_delay_cmp_u64, NULL);
	r.q1 = per_event[TB_DELAY_WINDOWS / 4];
	r.iqr = per_event[3 * TB_DELAY_WINDOWS / 4] - r.q1;
	return r;
}

/* The probe detached, firings in flight finished, the interval timed. */
static void tb_delay_disarm(void)
{
	if (!tb_delay_on)
		return;
	tb_delay_enabled_cycles += tb_now() - tb_delay_on_cycles;
	tb_delay_enabled_ns += ktime_get_raw_ns() - tb_delay_on_ns;
	unregister_trace_tracebench_fixed(tb_delay_probe, NULL);
	tracepoint_synchronize_unregister();
	tb_delay_on = false;
}

static int tb_delay_arm(void)
{
	int ret;

	if (tb_delay_on)
		return 0;
	ret = register_trace_tracebench_fixed(tb_delay_probe, NULL);
	if (ret)
		return ret;
	tb_delay_on = true;
	tb_delay_on_ns = ktime_get_raw_ns();
	tb_delay_on_cycles = tb_now();
	return 0;
}

static void tb_delay_reset_counts(void)
{
	int cpu;

	for_each_possible_cpu (cpu) {
		struct tb_delay_count *c = per_cpu_ptr(&tb_delay_counts, cpu);

		c->firings = 0;
		c->spent_cycles = 0;
		c->min_spent_cycles = U64_MAX;
	}
	tb_delay_enabled_cycles = 0;
	tb_delay_enabled_ns = 0;
}

/*
 * Chooses the spin so that one firing costs req->ns (the file comment).  The
 * probe is registered for the calibration only; on return it is not.
 * ERANGE: req->ns is less than the shortest firing (req says what it costs).
 */
static long tb_delay_calibrate(struct tb_kmod_delay_set *req)
{
	u64 hz = tb_delay_rate_hz();
	struct tb_delay_windows off, on = {0, 0};
	s64 target, spin, least;
	long ret;
	int round;

	req->tsc_khz = tb_delay_tsc_khz();
	req->tsc_hz = hz;
	req->calib_windows = TB_DELAY_WINDOWS;
	if (!hz)
		return -EIO;
	target = (s64)div64_u64((u64)req->ns * hz, NSEC_PER_SEC / 1000); /* 1/1000 cycles */
	off = tb_delay_loop_mcycles(0, hz); /* the probe not registered: the untraced loop */
	req->untraced_mcycles = off.q1;
	ret = register_trace_tracebench_fixed(tb_delay_probe, NULL);
	if (ret)
		return ret;
	on = tb_delay_loop_mcycles(1, hz);
	least = (s64)on.q1 - (s64)off.q1;
	req->least_mcycles = max_t(s64, least, 0);
	if (least > target) {
		ret = -ERANGE;
		goto out;
	}
	spin = max_t(s64, 1000, target - (least - 1000));
	for (round = 0; round < 3; round++) {
		on = tb_delay_loop_mcycles(DIV_ROUND_CLOSEST_ULL((u64)spin, 1000), hz);
		if (round < 2)
			spin = max_t(s64, 1000, spin + (target - ((s64)on.q1 - (s64)off.q1)));
	}
	req->spin_cycles = DIV_ROUND_CLOSEST_ULL((u64)spin, 1000);
	req->firing_mcycles = max_t(s64, (s64)on.q1 - (s64)off.q1, 0);
	req->firing_iqr_mcycles = on.iqr;
out:
	unregister_trace_tracebench_fixed(tb_delay_probe, NULL);
	tracepoint_synchronize_unregister();
	WRITE_ONCE(tb_delay_spin, ret ? 0 : req->spin_cycles);
	tb_delay_reset_counts();
	return ret;
}

static long tb_delay_set(struct file *file, void __user *uarg)
{
	struct tb_kmod_delay_set req;
	long ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || req.ns == 0 || req.ns > TB_KMOD_DELAY_MAX_NS)
		return -EINVAL;
	req.tsc_hz = req.spin_cycles = req.least_mcycles = req.firing_mcycles = 0;
	req.firing_iqr_mcycles = req.untraced_mcycles = 0;
	mutex_lock(&tb_delay_lock);
	if (tb_delay_owner && tb_delay_owner != file) {
		mutex_unlock(&tb_delay_lock);
		return -EBUSY;
	}
	tb_delay_disarm();
	ret = tb_delay_calibrate(&req);
	/* Refused or failed: the file owns nothing. */
	tb_delay_owner = ret ? NULL : file;
	mutex_unlock(&tb_delay_lock);
	if ((ret == 0 || ret == -ERANGE) && copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return ret;
}

static long tb_delay_enable(struct file *file, void __user *uarg)
{
	struct tb_kmod_delay_enable req;
	long ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || req.on > 1)
		return -EINVAL;
	mutex_lock(&tb_delay_lock);
	if (tb_delay_owner != file)
		ret = tb_delay_owner ? -EBUSY : -EINVAL; /* another file's, or no DELAY_SET yet */
	else if (req.on)
		ret = tb_delay_arm();
	else
		tb_delay_disarm();
	mutex_unlock(&tb_delay_lock);
	return ret;
}

static long tb_delay_status(struct file *file, void __user *uarg)
{
	struct tb_kmod_delay_status st;
	int cpu;

	memset(&st, 0, sizeof(st));
	mutex_lock(&tb_delay_lock);
	if (tb_delay_owner != file) {
		long ret = tb_delay_owner ? -EBUSY : -EINVAL;

		mutex_unlock(&tb_delay_lock);
		return ret;
	}
	for_each_possible_cpu (cpu) {
		const struct tb_delay_count *c = per_cpu_ptr(&tb_delay_counts, cpu);
		u64 least = READ_ONCE(c->min_spent_cycles);

		st.firings += READ_ONCE(c->firings);
		st.spent_cycles += READ_ONCE(c->spent_cycles);
		if (least != U64_MAX && (!st.min_spent_cycles || least < st.min_spent_cycles))
			st.min_spent_cycles = least;
	}
	st.enabled_cycles = tb_delay_enabled_cycles;
	st.enabled_ns = tb_delay_enabled_ns;
	if (tb_delay_on) {
		st.enabled_cycles += tb_now() - tb_delay_on_cycles;
		st.enabled_ns += ktime_get_raw_ns() - tb_delay_on_ns;
	}
	st.enabled = tb_delay_on;
	mutex_unlock(&tb_delay_lock);
	return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
}

long tb_ioctl_delay(struct file *file, unsigned int cmd, void __user *uarg)
{
	switch (cmd) {
	case TB_KMOD_IOC_DELAY_SET:
		return tb_delay_set(file, uarg);
	case TB_KMOD_IOC_DELAY_ENABLE:
		return tb_delay_enable(file, uarg);
	case TB_KMOD_IOC_DELAY_STATUS:
		return tb_delay_status(file, uarg);
	default:
		return -ENOTTY;
	}
}

void tb_delay_release(struct file *file)
{
	mutex_lock(&tb_delay_lock);
	if (tb_delay_owner == file) {
		tb_delay_disarm();
		WRITE_ONCE(tb_delay_spin, 0);
		tb_delay_owner = NULL;
	}
	mutex_unlock(&tb_delay_lock);
}
