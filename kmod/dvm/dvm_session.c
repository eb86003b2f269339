// SPDX-License-Identifier: GPL-2.0
/*
 * The D-VM as a tracer in the module: DVM_ENABLE/GO/STOP/BUFSNAP/AGGSNAP/
 * STATUS (tracebench_kmod_abi.h).  The session belongs to the open file;
 * one exists at a time.  Probes:
 *   dtrace:::BEGIN / END   fired by GO (the first) and STOP with END
 *   syscall::<name>:entry  the raw tracepoint sys_enter, by syscall number
 *   syscall::<name>:return the raw tracepoint sys_exit; with TB_KMOD_DVM_SYSCALL_KPROBE
 *                          a kprobe (kretprobe) on the syscall's function
 *                          instead, registered and enabled as fbt's are
 *   sdt:tracebench::<event> the module's own tracepoints (tracebench_fixed,
 *                          tracebench_payload), fired by FIRE's loop
 *   fbt:<mod>:<func>:entry a kprobe on the function, :return a kretprobe;
 *                          registered disabled at ENABLE (a function that
 *                          cannot be probed is refused there), enabled by GO
 *   profile:::profile-N    an hrtimer at N Hz on every online CPU (pinned)
 *   profile:::tick-N       an hrtimer at N Hz on the CPU that ran GO
 *   pid<P>:<mod>:<func>:entry a uprobe at a file and offset user space
 *                          resolved (:return a uretprobe), checked at ENABLE
 *                          (a file or offset that cannot be probed is
 *                          refused there), placed by GO and lifted by STOP
 *                          (the untraced process runs without breakpoints),
 *                          firing only in process P
 *   <prov><P>:<mod>:<func>:<name> a USDT site (an SDT note user space read):
 *                          a uprobe at its file offset with the note's
 *                          semaphore as the uprobe's reference counter
 *                          (raised while placed), arguments read as the
 *                          note's specs say; otherwise a pid probe
 * A firing reached from inside another on the same CPU (fbt on a function
 * the VM or the provider calls) is dropped and counted (busy_drops).
 * A firing masks local interrupts (DTrace's way: the CPU's slot then has
 * one writer, and a buffer switch done on that CPU by IPI needs no lock).
 *
 * One file, longer than the suite's ~600-line guide, on purpose: every
 * provider's handler reaches the VM through tb_dvm_fire_here(), inlined
 * (__always_inline) so that a firing makes no call between the provider's
 * entry and the VM (what the stage timing reports as "provider entry"), and
 * the ioctls that arm and disarm the providers share the session record
 * (struct tb_dvm) and its mutex with them.  Its parts, in order: the firing
 * path; the providers (sdt, profile timers, fbt and syscall kprobes, pid and
 * usdt uprobes, raw syscall tracepoints); arming; ENABLE and its checks; GO,
 * STOP, the snapshots and STATUS.
 */
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <linux/version.h>
#include <asm/irq_regs.h>
#include <asm/syscall.h>
#include <asm/unistd.h>

#include "tracebench_kmod_abi.h"
#include "tb_clock.h"
#include "tracebench_trace.h"
#include "dvm/dif_glue.h"
#include "dvm/dif_ioctl.h"

static_assert(sizeof(struct tb_kmod_dvm_action) == 64);
static_assert(sizeof(struct tb_kmod_dvm_ecb) == 24);
static_assert(sizeof(struct tb_kmod_dvm_probe) == 400);
static_assert(sizeof(struct tb_kmod_dvm_usdt_arg) == 16);

/* Probe kinds that are kprobes (and syscall ones with TB_KMOD_DVM_SYSCALL_KPROBE), and that are uprobes. */
#define TB_KMOD_FBT_KINDS \
	((1u << TB_KMOD_DVM_PROBE_FBT_ENTRY) | (1u << TB_KMOD_DVM_PROBE_FBT_RETURN))
#define TB_KMOD_SYS_KINDS \
	((1u << TB_KMOD_DVM_PROBE_SYSCALL_ENTRY) | (1u << TB_KMOD_DVM_PROBE_SYSCALL_RETURN))
#define TB_KMOD_UPR_KINDS                                                             \
	((1u << TB_KMOD_DVM_PROBE_PID_ENTRY) | (1u << TB_KMOD_DVM_PROBE_PID_RETURN) | \
	 (1u << TB_KMOD_DVM_PROBE_USDT))

/* uprobe_register() returns the uprobe, unregistering is two steps (6.12). */
#define TB_UPROBE_HANDLE (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0))

unsigned int tb_dif_host_stack(unsigned long *pcs, unsigned int max)
{
	return stack_trace_save(pcs, max, 1);
}

void *tb_dvm_host_zalloc(unsigned long long size)
{
	if (size > (8ull << 30))
		return NULL;
	return kvzalloc(size, GFP_KERNEL);
}

void tb_dvm_host_free(void *p)
{
	kvfree(p);
}

/* A CPU's stage sums (TB_KMOD_DVM_TIMED), written with interrupts masked. */
struct tb_dvm_stages {
	u64 floor;
	u64 n[TB_KMOD_DVM_KINDS], entry[TB_KMOD_DVM_KINDS],
		vm[TB_KMOD_DVM_KINDS];				/* by probe kind */
	u64 trap_n[TB_KMOD_DVM_KINDS], trap[TB_KMOD_DVM_KINDS]; /* TB_KMOD_DVM_TIMED_TRAP */
} ____cacheline_aligned;

struct tb_dvm;
/* One fbt probe: a kprobe (entry) or a kretprobe (return); or a syscall
 * probe on its function (TB_KMOD_DVM_SYSCALL_KPROBE). */
struct tb_dvm_fbt {
	struct kprobe kp;
	struct kretprobe krp;
	struct tb_dvm *d;
	int probe1;
	bool ret;
	bool sys; /* a syscall probe: arguments from the caller's user registers */
	bool registered;
	char sym[TB_KMOD_DVM_NAMES_LEN];
};

/* One pid probe, a uprobe (entry) or uretprobe (return) at inode + offset,
 * or one usdt probe (a uprobe with a reference counter and argument specs). */
struct tb_dvm_upr {
	struct uprobe_consumer uc;
	struct tb_dvm *d;
	int probe1;
	pid_t tgid;	     /* the only process it fires in */
	struct inode *inode; /* held (igrab) for the session */
	loff_t offset;
	loff_t ref_ctr; /* usdt: the semaphore's file offset, or 0 */
	u32 usdt_nargs; /* usdt: arguments read from usdt_args */
	struct tb_kmod_dvm_usdt_arg usdt_args[TB_KMOD_DVM_USDT_ARGS];
#if TB_UPROBE_HANDLE
	struct uprobe *up;
#endif
	bool registered; /* placed: GO to STOP */
};

/* One timer of a profile-N (one per CPU) or tick-N probe. */
struct tb_dvm_timer {
	struct hrtimer t;
	struct tb_dvm *d;
	int probe1;
	int cpu; /* profile: the CPU it runs on; tick: -1 (GO's CPU) */
	ktime_t period;
	bool started;
};

struct tb_dvm {
	struct tb_dvm_session *s;
	struct tb_dvm_timer *timers; /* ntimers: ncpus per profile probe, one per tick probe */
	u32 ntimers;
	bool timers_on;
	struct tb_dvm_fbt *fbt; /* nfbt */
	u32 nfbt;
	bool fbt_on;		/* the fbt probes are enabled (their handlers fire) */
	bool sys_kprobe;	/* TB_KMOD_DVM_SYSCALL_KPROBE: syscall probes are in fbt[] */
	char why[160];		/* a refusal that names what it refuses */
	struct tb_dvm_upr *upr; /* nupr */
	u32 nupr;
	bool upr_on;		      /* the pid probes' handlers fire */
	u8 *busy;		      /* ncpus: a firing is running on that CPU */
	struct tb_dvm_stages *stages; /* ncpus, when timed */
	bool trap; /* TB_KMOD_DVM_TIMED_TRAP: entry probes' arg0 is the caller's TSC */
	struct tb_dif_loaded *objects;
	u32 n_objects;
	u32 ncpus;
	u32 bufsize;
	u32 aggsize;
	int begin_probe; /* probe index + 1, 0 = none */
	int end_probe;
	bool error_probe; /* dtrace:::ERROR given (the VM fires it; nothing to arm) */
	u8 *kinds;	  /* n_probes: each probe's kind, for the stage sums */
	int *entry;	  /* NR_syscalls: probe index + 1 */
	int *exit;
	int sdt[TB_KMOD_EV_COUNT]; /* by event id: probe index + 1 */
	bool want_enter, want_exit;
	bool enter_on, exit_on, fixed_on, payload_on;
	bool begun, ended;
	void *agg_copy;	   /* aggsize bytes: a CPU's aggregation buffer, copied on that CPU */
	struct mutex lock; /* ioctls on this session */
};

/* The one session (tb_dvm_mutex): its owner file's private_data. */
static DEFINE_MUTEX(tb_dvm_mutex);
static struct tb_dvm *tb_dvm_active;
static struct tracepoint *tb_tp_sys_enter, *tb_tp_sys_exit;

/* t0: the callback's first read (0 when not timed); [base, base + len): memory D may read. */
static __always_inline void tb_dvm_fire_in(struct tb_dvm *d, int probe1,
					   const unsigned long long *args, unsigned int nargs,
					   u64 base, u64 len, u64 t0, long err)
{
	struct tb_dvm_who who;
	unsigned long flags;
	unsigned int cpu;
	u64 t1, t2, t3;

	who.pid = task_tgid_nr(current);
	who.tid = task_pid_nr(current);
	who.thread = (unsigned long long)(unsigned long)current;
	who.comm = current->comm;
	who.uid = from_kuid(&init_user_ns, current_uid());
	who.err = err;
	local_irq_save(flags);
	rcu_read_lock();
	who.ppid = task_ppid_nr(current);
	rcu_read_unlock();
	cpu = raw_smp_processor_id();
	if (d->busy[cpu]) {
		tb_dvm_busy_drop(d->s, cpu);
		local_irq_restore(flags);
		return;
	}
	d->busy[cpu] = 1;
	if (!t0) {
		tb_dvm_fire_region(d->s, probe1 - 1, args, nargs, base, len, &who, cpu);
	} else {
		struct tb_dvm_stages *st = &d->stages[cpu];
		const u32 k = d->kinds[probe1 - 1];

		t1 = tb_now();
		tb_dvm_fire_region(d->s, probe1 - 1, args, nargs, base, len, &who, cpu);
		t2 = tb_now();
		t3 = tb_now();
		st->n[k]++;
		st->entry[k] += t1 - t0;
		st->vm[k] += t2 - t1;
		st->floor += t3 - t2;
		if (d->trap && nargs &&
		    (k == TB_KMOD_DVM_PROBE_SYSCALL_ENTRY || k == TB_KMOD_DVM_PROBE_PID_ENTRY ||
		     k == TB_KMOD_DVM_PROBE_USDT) &&
		    args[0] < t0 && t0 - args[0] < (1ull << 32)) {
			st->trap_n[k]++;
			st->trap[k] += t0 - args[0];
		}
	}
	d->busy[cpu] = 0;
	local_irq_restore(flags);
}

static __always_inline void tb_dvm_fire_here(struct tb_dvm *d, int probe1,
					     const unsigned long long *args, unsigned int nargs,
					     u64 t0)
{
	tb_dvm_fire_in(d, probe1, args, nargs, 0, 0, t0, 0);
}

static void tb_dvm_sdt_fixed(void *data, u64 seq, u64 value)
{
	struct tb_dvm *d = data;
	u64 t0 = d->stages ? tb_now() : 0;
	unsigned long long args[2] = {seq, value};

	tb_dvm_fire_here(d, d->sdt[TB_KMOD_EV_FIXED], args, 2, t0);
}

static void tb_dvm_sdt_payload(void *data, u64 seq, const u8 *payload, u32 len)
{
	struct tb_dvm *d = data;
	u64 t0 = d->stages ? tb_now() : 0;
	unsigned long long args[3] = {seq, (unsigned long long)(unsigned long)payload, len};

	tb_dvm_fire_in(d, d->sdt[TB_KMOD_EV_PAYLOAD], args, 3, (unsigned long)payload, len, t0, 0);
}

static enum hrtimer_restart tb_dvm_timer_fire(struct hrtimer *t)
{
	struct tb_dvm_timer *x = container_of(t, struct tb_dvm_timer, t);
	struct pt_regs *regs = get_irq_regs();
	u64 t0 = x->d->stages ? tb_now() : 0;
	unsigned long long args[2] = {0, 0};

	if (regs)
		args[user_mode(regs) ? 1 : 0] = instruction_pointer(regs);
	if (READ_ONCE(x->d->timers_on))
		tb_dvm_fire_here(x->d, x->probe1, args, 2, t0);
	hrtimer_forward_now(t, x->period);
	return HRTIMER_RESTART;
}

/* Sets up (not started) the timers of the profile and tick probes. */
static long tb_dvm_timers_init(struct tb_dvm *d, const struct tb_kmod_dvm_probe *probes, u32 n)
{
	u32 i, c, k = 0;

	for (i = 0; i < n; i++)
		d->ntimers += probes[i].kind == TB_KMOD_DVM_PROBE_PROFILE ? d->ncpus
			      : probes[i].kind == TB_KMOD_DVM_PROBE_TICK  ? 1
									  : 0;
	if (!d->ntimers)
		return 0;
	d->timers = kvcalloc(d->ntimers, sizeof(*d->timers), GFP_KERNEL);
	if (!d->timers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		u32 count = probes[i].kind == TB_KMOD_DVM_PROBE_PROFILE ? d->ncpus
			    : probes[i].kind == TB_KMOD_DVM_PROBE_TICK	? 1
									: 0;

		for (c = 0; c < count; c++, k++) {
			struct tb_dvm_timer *x = &d->timers[k];

			hrtimer_init(&x->t, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
			x->t.function = tb_dvm_timer_fire;
			x->d = d;
			x->probe1 = i + 1;
			x->cpu = probes[i].kind == TB_KMOD_DVM_PROBE_PROFILE ? (int)c : -1;
			x->period = ns_to_ktime(NSEC_PER_SEC / probes[i].arg);
		}
	}
	return 0;
}

static void tb_dvm_timer_start_here(void *arg)
{
	struct tb_dvm_timer *x = arg;

	hrtimer_start(&x->t, x->period, HRTIMER_MODE_REL_PINNED);
}

/* Profile timers start on their CPU (pinned; an offline CPU's does not), a
 * tick timer on this one. */
static void tb_dvm_timers_start(struct tb_dvm *d)
{
	u32 k;

	WRITE_ONCE(d->timers_on, true);
	for (k = 0; k < d->ntimers; k++) {
		struct tb_dvm_timer *x = &d->timers[k];

		if (x->cpu < 0) {
			tb_dvm_timer_start_here(x);
			x->started = true;
		} else if (smp_call_function_single(x->cpu, tb_dvm_timer_start_here, x, 1) == 0) {
			x->started = true;
		}
	}
}

static void tb_dvm_timers_stop(struct tb_dvm *d)
{
	u32 k;

	WRITE_ONCE(d->timers_on, false);
	for (k = 0; k < d->ntimers; k++) {
		if (d->timers[k].started)
			hrtimer_cancel(
				&d->timers[k].t); /* waits for a callback running elsewhere */
		d->timers[k].started = false;
	}
}

/* arg0..arg5 of a function entry (fbt, pid): the calling convention's
 * argument registers. */
static void tb_dvm_entry_args(struct pt_regs *regs, unsigned long long args[6])
{
	unsigned int i;

	for (i = 0; i < 6; i++)
		args[i] = regs_get_kernel_argument(regs, i);
}

static int tb_dvm_kp_entry(struct kprobe *p, struct pt_regs *regs)
{
	struct tb_dvm_fbt *f = container_of(p, struct tb_dvm_fbt, kp);
	u64 t0 = f->d->stages ? tb_now() : 0;
	unsigned long long args[6];

	if (!READ_ONCE(f->d->fbt_on))
		return 0;
	tb_dvm_entry_args(regs, args);
	tb_dvm_fire_here(f->d, f->probe1, args, 6, t0);
	return 0;
}

static int tb_dvm_kp_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct tb_dvm_fbt *f = container_of(get_kretprobe(ri), struct tb_dvm_fbt, krp);
	u64 t0 = f->d->stages ? tb_now() : 0;
	unsigned long long args[2] = {0, regs_return_value(regs)};

	/* A return whose entry came before GO or after STOP fires nothing. */
	if (!READ_ONCE(f->d->fbt_on))
		return 0;
	tb_dvm_fire_here(f->d, f->probe1, args, 2, t0);
	return 0;
}

/* A syscall probe on the syscall's function: the arguments are the
 * syscall's, from the user registers it saved on entry. */
static int tb_dvm_kp_sys_entry(struct kprobe *p, struct pt_regs *regs)
{
	struct tb_dvm_fbt *f = container_of(p, struct tb_dvm_fbt, kp);
	u64 t0 = f->d->stages ? tb_now() : 0;
	unsigned long a[6];
	unsigned long long args[6];
	unsigned int i;

	if (!READ_ONCE(f->d->fbt_on))
		return 0;
	syscall_get_arguments(current, current_pt_regs(), a);
	for (i = 0; i < 6; i++)
		args[i] = a[i];
	tb_dvm_fire_here(f->d, f->probe1, args, 6, t0);
	return 0;
}

static int tb_dvm_kp_sys_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct tb_dvm_fbt *f = container_of(get_kretprobe(ri), struct tb_dvm_fbt, krp);
	u64 t0 = f->d->stages ? tb_now() : 0;
	long ret = (long)regs_return_value(regs);
	unsigned long long args[2] = {(unsigned long long)ret, (unsigned long long)ret};

	if (!READ_ONCE(f->d->fbt_on))
		return 0;
	tb_dvm_fire_in(f->d, f->probe1, args, 2, 0, 0, t0, IS_ERR_VALUE(ret) ? -ret : 0);
	return 0;
}

/* The prefix of a syscall's function on this architecture (its wrapper that
 * takes the saved registers), or NULL. */
static const char *tb_dvm_sys_prefix(void)
{
#if defined(CONFIG_X86_64)
	return "__x64_sys_";
#elif defined(CONFIG_ARM64)
	return "__arm64_sys_";
#else
	return NULL;
#endif
}

/* The function behind a syscall, where its table entry names another than
 * sys_<name> (arch/x86/entry/syscalls/syscall_64.tbl, asm-generic/unistd.h):
 * the old name was kept for an older struct (__x64_sys_uname exists on some
 * kernels, and is not what x86-64's uname calls). */
static const char *tb_dvm_sys_function(const char *name)
{
	static const char *const alias[][2] = {
		{"stat", "newstat"},   {"fstat", "newfstat"}, {"lstat", "newlstat"},
		{"uname", "newuname"}, {"umount2", "umount"},
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(alias); i++)
		if (!strcmp(name, alias[i][0]))
			return alias[i][1];
	return name;
}

static void tb_dvm_fbt_enable(struct tb_dvm *d, bool on)
{
	u32 i;

	for (i = 0; i < d->nfbt; i++) {
		struct tb_dvm_fbt *f = &d->fbt[i];

		if (!f->registered)
			continue;
		if (f->ret)
			on ? enable_kretprobe(&f->krp) : disable_kretprobe(&f->krp);
		else
			on ? enable_kprobe(&f->kp) : disable_kprobe(&f->kp);
	}
}

/* Whether a probe is of a kind in the mask `kinds`. */
static bool tb_dvm_kind_in(const struct tb_kmod_dvm_probe *p, u32 kinds)
{
	return p->kind < 32 && (kinds & (1u << p->kind));
}

/* The registration records of the probes of a kind in `kinds` (fbt's or
 * pid/usdt's): an array of `size`-byte elements, one per such probe, zeroed,
 * at *arr and their number in *count (0 and NULL when there are none); NULL,
 * or why not with *err set. */
static const char *tb_dvm_alloc_for(const struct tb_kmod_dvm_probe *probes, u32 n, u32 kinds,
				    size_t size, void **arr, u32 *count, long *err)
{
	u32 i;

	*count = 0;
	*arr = NULL;
	for (i = 0; i < n; i++)
		if (tb_dvm_kind_in(&probes[i], kinds))
			(*count)++;
	if (!*count)
		return NULL;
	*arr = kvcalloc(*count, size, GFP_KERNEL);
	if (*arr)
		return NULL;
	*err = -ENOMEM;
	return "out of memory";
}

/* Registers f's kprobe (or kretprobe) on f->sym, disabled. */
static int tb_dvm_fbt_place(struct tb_dvm_fbt *f)
{
	memset(&f->kp, 0, sizeof(f->kp));
	memset(&f->krp, 0, sizeof(f->krp));
	if (f->ret) {
		f->krp.kp.symbol_name = f->sym;
		f->krp.kp.flags = KPROBE_FLAG_DISABLED;
		f->krp.handler = f->sys ? tb_dvm_kp_sys_return : tb_dvm_kp_return;
		f->krp.maxactive = 4 * num_possible_cpus();
		return register_kretprobe(&f->krp);
	}
	f->kp.symbol_name = f->sym;
	f->kp.flags = KPROBE_FLAG_DISABLED;
	f->kp.pre_handler = f->sys ? tb_dvm_kp_sys_entry : tb_dvm_kp_entry;
	return register_kprobe(&f->kp);
}

/* Registers every fbt probe (and with sys_kprobe every syscall probe),
 * disabled; NULL, or why one cannot be. */
static const char *tb_dvm_fbt_register(struct tb_dvm *d, const struct tb_kmod_dvm_probe *probes,
				       u32 n, long *err)
{
	const u32 kinds = TB_KMOD_FBT_KINDS | (d->sys_kprobe ? TB_KMOD_SYS_KINDS : 0);
	const char *why = tb_dvm_alloc_for(probes, n, kinds, sizeof(*d->fbt), (void **)&d->fbt,
					   &d->nfbt, err);
	u32 i, k = 0;

	if (why || !d->nfbt)
		return why;
	for (i = 0; i < n; i++) {
		const struct tb_kmod_dvm_probe *p = &probes[i];
		struct tb_dvm_fbt *f;
		const char *func;
		int ret;

		if (!tb_dvm_kind_in(p, kinds))
			continue;
		f = &d->fbt[k++];
		f->d = d;
		f->probe1 = i + 1;
		f->sys = !(TB_KMOD_FBT_KINDS & (1u << p->kind));
		f->ret = p->kind == TB_KMOD_DVM_PROBE_FBT_RETURN ||
			 p->kind == TB_KMOD_DVM_PROBE_SYSCALL_RETURN;
		/* names: provider, module, function, name (checked NUL-separated by the caller). */
		func = p->names + strnlen(p->names, p->names_len) + 1;
		func += strnlen(func, p->names + p->names_len - func) + 1;
		if (func >= p->names + p->names_len || !*func)
			return f->sys ? "probe: syscall without a name"
				      : "probe: fbt without a function name";
		if (f->sys) {
			const char *prefix = tb_dvm_sys_prefix();

			if (!prefix)
				return "probe: syscall probes on their functions are known on "
				       "x86-64 and arm64 only";
			ret = -ENAMETOOLONG;
			if (snprintf(f->sym, sizeof(f->sym), "%s%s", prefix,
				     tb_dvm_sys_function(func)) < (int)sizeof(f->sym))
				ret = tb_dvm_fbt_place(f);
			if (ret) {
				snprintf(d->why, sizeof(d->why),
					 "probe: syscall %s: its function cannot be probed (%s: no "
					 "such symbol, or kprobes "
					 "refuse it); syscallprobe=tracepoint takes every syscall",
					 func, f->sym);
				return d->why;
			}
			f->registered = true;
			continue;
		}
		strscpy(f->sym, func, sizeof(f->sym));
		ret = tb_dvm_fbt_place(f);
		if (ret)
			return "probe: fbt cannot probe this function (no such symbol, or kprobes "
			       "refuse it)";
		f->registered = true;
	}
	return NULL;
}

static void tb_dvm_fbt_unregister(struct tb_dvm *d)
{
	u32 i;

	for (i = 0; i < d->nfbt; i++) {
		struct tb_dvm_fbt *f = &d->fbt[i];

		if (!f->registered)
			continue;
		if (f->ret)
			unregister_kretprobe(&f->krp);
		else
			unregister_kprobe(&f->kp);
		f->registered = false;
	}
}

static int tb_dvm_up_entry(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct tb_dvm_upr *u = container_of(uc, struct tb_dvm_upr, uc);
	u64 t0 = u->d->stages ? tb_now() : 0;
	unsigned long long args[6];

	/* Breakpoints are in every process that maps the file: D sees one.
	 * Preemption off from the check on, so STOP's grace period waits
	 * for a firing that saw the probes on (uprobe handlers run
	 * preemptible). */
	if (task_tgid_nr(current) != u->tgid)
		return 0;
	preempt_disable();
	if (READ_ONCE(u->d->upr_on)) {
		tb_dvm_entry_args(regs, args);
		tb_dvm_fire_here(u->d, u->probe1, args, 6, t0);
	}
	preempt_enable();
	return 0;
}

/* A register of the traced task at a USDT site (x86-64's pt_regs). */
static unsigned long tb_usdt_reg(const struct pt_regs *r, u8 reg)
{
#ifdef CONFIG_X86_64
	switch (reg) {
	case TB_KMOD_USDT_REG_AX:
		return r->ax;
	case TB_KMOD_USDT_REG_BX:
		return r->bx;
	case TB_KMOD_USDT_REG_CX:
		return r->cx;
	case TB_KMOD_USDT_REG_DX:
		return r->dx;
	case TB_KMOD_USDT_REG_SI:
		return r->si;
	case TB_KMOD_USDT_REG_DI:
		return r->di;
	case TB_KMOD_USDT_REG_BP:
		return r->bp;
	case TB_KMOD_USDT_REG_SP:
		return r->sp;
	case TB_KMOD_USDT_REG_R8:
		return r->r8;
	case TB_KMOD_USDT_REG_R9:
		return r->r9;
	case TB_KMOD_USDT_REG_R10:
		return r->r10;
	case TB_KMOD_USDT_REG_R11:
		return r->r11;
	case TB_KMOD_USDT_REG_R12:
		return r->r12;
	case TB_KMOD_USDT_REG_R13:
		return r->r13;
	case TB_KMOD_USDT_REG_R14:
		return r->r14;
	case TB_KMOD_USDT_REG_R15:
		return r->r15;
	case TB_KMOD_USDT_REG_IP:
		return r->ip;
	}
#endif
	return 0;
}

/* A USDT argument's value, its size's bytes (sign-)extended to 64 bits.
 * Memory is the traced process's, read here in its context (the handler
 * may fault it in); an unreadable address reads as 0. */
static u64 tb_usdt_arg(const struct pt_regs *r, const struct tb_kmod_dvm_usdt_arg *a)
{
	const unsigned int bytes = a->size < 0 ? -a->size : a->size;
	u64 v = 0;

	switch (a->kind) {
	case TB_KMOD_USDT_ARG_IMM:
		v = (u64)a->value;
		break;
	case TB_KMOD_USDT_ARG_REG:
		v = tb_usdt_reg(r, a->reg);
		break;
	case TB_KMOD_USDT_ARG_MEM: {
		unsigned long addr = tb_usdt_reg(r, a->reg) + a->value;

		if (a->scale)
			addr += tb_usdt_reg(r, a->index) * a->scale;
		if (copy_from_user(&v, (const void __user *)addr, bytes))
			v = 0;
		break;
	}
	}
	if (bytes < 8) {
		v &= (1ull << (bytes * 8)) - 1;
		if (a->size < 0 && (v >> (bytes * 8 - 1)))
			v |= ~0ull << (bytes * 8);
	}
	return v;
}

static int tb_dvm_usdt(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct tb_dvm_upr *u = container_of(uc, struct tb_dvm_upr, uc);
	u64 t0 = u->d->stages ? tb_now() : 0;
	unsigned long long args[TB_KMOD_DVM_USDT_ARGS];
	unsigned int i;

	if (task_tgid_nr(current) != u->tgid)
		return 0;
	/* Read before preemption is off: memory arguments may fault. */
	for (i = 0; i < u->usdt_nargs; i++)
		args[i] = tb_usdt_arg(regs, &u->usdt_args[i]);
	preempt_disable();
	if (READ_ONCE(u->d->upr_on))
		tb_dvm_fire_here(u->d, u->probe1, args, u->usdt_nargs, t0);
	preempt_enable();
	return 0;
}

static int tb_dvm_up_return(struct uprobe_consumer *uc, unsigned long func, struct pt_regs *regs)
{
	struct tb_dvm_upr *u = container_of(uc, struct tb_dvm_upr, uc);
	u64 t0 = u->d->stages ? tb_now() : 0;
	unsigned long long args[2] = {0, regs_return_value(regs)};

	if (task_tgid_nr(current) != u->tgid)
		return 0;
	preempt_disable();
	if (READ_ONCE(u->d->upr_on))
		tb_dvm_fire_here(u->d, u->probe1, args, 2, t0);
	preempt_enable();
	return 0;
}

/* Places one pid or usdt probe: its breakpoint in every process mapping
 * the file (the semaphore raised there); 0 or an errno. */
static int tb_dvm_upr_place(struct tb_dvm_upr *u)
{
	int ret;

#if TB_UPROBE_HANDLE
	u->up = uprobe_register(u->inode, u->offset, u->ref_ctr, &u->uc);
	ret = IS_ERR(u->up) ? PTR_ERR(u->up) : 0;
#else
	ret = uprobe_register_refctr(u->inode, u->offset, u->ref_ctr, &u->uc);
#endif
	u->registered = !ret;
	return ret;
}

/* Lifts every placed pid and usdt probe; no handler runs once it returns. */
static void tb_dvm_upr_lift(struct tb_dvm *d)
{
	u32 i;
	bool any = false;

	for (i = 0; i < d->nupr; i++) {
		struct tb_dvm_upr *u = &d->upr[i];

		if (!u->registered)
			continue;
#if TB_UPROBE_HANDLE
		uprobe_unregister_nosync(u->up, &u->uc);
#else
		uprobe_unregister(u->inode, u->offset, &u->uc);
#endif
		u->registered = false;
		any = true;
	}
#if TB_UPROBE_HANDLE
	if (any)
		uprobe_unregister_sync();
#endif
}

/* Places every pid and usdt probe (GO); 0, or an errno with none placed. */
static int tb_dvm_upr_place_all(struct tb_dvm *d)
{
	u32 i;
	int ret = 0;

	for (i = 0; i < d->nupr && !ret; i++)
		ret = tb_dvm_upr_place(&d->upr[i]);
	if (ret)
		tb_dvm_upr_lift(d);
	return ret;
}

/* Checks every pid and usdt probe (ENABLE): its file held, a trial
 * placement the kernel accepts, lifted again, so the untraced process runs
 * without breakpoints (and with its semaphores down) until GO; NULL, or why
 * one cannot be. */
static const char *tb_dvm_upr_register(struct tb_dvm *d, const struct tb_kmod_dvm_probe *probes,
				       u32 n, long *err)
{
	const char *why = tb_dvm_alloc_for(probes, n, TB_KMOD_UPR_KINDS, sizeof(*d->upr),
					   (void **)&d->upr, &d->nupr, err);
	u32 i, k = 0;

	if (why || !d->nupr)
		return why;
	for (i = 0; i < n; i++) {
		const struct tb_kmod_dvm_probe *p = &probes[i];
		struct tb_dvm_upr *u;
		struct path path;
		struct inode *inode;
		char *name;
		int ret;

		if (!tb_dvm_kind_in(p, TB_KMOD_UPR_KINDS))
			continue;
		u = &d->upr[k++];
		u->d = d;
		u->probe1 = i + 1;
		u->tgid = (pid_t)p->arg;
		u->offset = (loff_t)p->offset;
		u->ref_ctr = (loff_t)p->ref_ctr_offset;
		u->usdt_nargs = p->usdt_nargs;
		memcpy(u->usdt_args, p->usdt_args, sizeof(u->usdt_args));
		if (p->kind == TB_KMOD_DVM_PROBE_PID_RETURN)
			u->uc.ret_handler = tb_dvm_up_return;
		else if (p->kind == TB_KMOD_DVM_PROBE_USDT)
			u->uc.handler = tb_dvm_usdt;
		else
			u->uc.handler = tb_dvm_up_entry;
		name = strndup_user(u64_to_user_ptr(p->path_ptr), PATH_MAX);
		if (IS_ERR(name)) {
			*err = PTR_ERR(name) == -EFAULT ? -EFAULT : 0;
			return "probe: pid or usdt probe's path is not a string of at most "
			       "PATH_MAX bytes";
		}
		ret = kern_path(name, LOOKUP_FOLLOW, &path);
		kfree(name);
		if (ret)
			return "probe: pid or usdt probe's file does not exist";
		inode = igrab(d_inode(path.dentry));
		path_put(&path);
		if (!inode)
			return "probe: pid or usdt probe's file is going away";
		if (!S_ISREG(inode->i_mode) || u->offset < 0 || u->offset >= i_size_read(inode)) {
			iput(inode);
			return "probe: pid or usdt probe's offset is not inside a regular file";
		}
		if (u->ref_ctr < 0 || u->ref_ctr > i_size_read(inode) - 2) {
			iput(inode);
			return "probe: usdt probe's semaphore offset is not inside its file";
		}
		u->inode = inode;
		/* A refusal here: the session's destroy lifts what was placed. */
		if (tb_dvm_upr_place(u))
			return u->ref_ctr ? "probe: uprobes refuse this offset or semaphore (not "
					    "an instruction they can "
					    "probe, or a semaphore another probe there counts "
					    "elsewhere)"
					  : "probe: uprobes refuse this offset (not an instruction "
					    "they can probe)";
	}
	tb_dvm_upr_lift(d); /* one wait for every trial placement (6.12: a single sync) */
	return NULL;
}

/* Lifts the pid and usdt probes and lets their files go. */
static void tb_dvm_upr_unregister(struct tb_dvm *d)
{
	u32 i;

	tb_dvm_upr_lift(d);
	for (i = 0; i < d->nupr; i++) {
		struct tb_dvm_upr *u = &d->upr[i];

		if (u->inode)
			iput(u->inode);
		u->inode = NULL;
	}
}

static void tb_dvm_sys_enter(void *data, struct pt_regs *regs, long id)
{
	struct tb_dvm *d = data;
	u64 t0 = d->stages ? tb_now() : 0;
	unsigned long a[6];
	unsigned long long args[6];
	int i, p;

	if (id < 0 || id >= NR_syscalls)
		return;
	p = READ_ONCE(d->entry[id]);
	if (!p)
		return;
	syscall_get_arguments(current, regs, a);
	for (i = 0; i < 6; i++)
		args[i] = a[i];
	tb_dvm_fire_here(d, p, args, 6, t0);
}

static void tb_dvm_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	struct tb_dvm *d = data;
	u64 t0 = d->stages ? tb_now() : 0;
	unsigned long long args[2];
	long id = syscall_get_nr(current, regs);
	int p;

	if (id < 0 || id >= NR_syscalls)
		return;
	p = READ_ONCE(d->exit[id]);
	if (!p)
		return;
	args[0] = args[1] = (unsigned long long)ret;
	tb_dvm_fire_in(d, p, args, 2, 0, 0, t0, IS_ERR_VALUE(ret) ? -ret : 0);
}

static void tb_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sys_enter"))
		tb_tp_sys_enter = tp;
	else if (!strcmp(tp->name, "sys_exit"))
		tb_tp_sys_exit = tp;
}

static void tb_dvm_disarm(struct tb_dvm *d)
{
	bool any =
		d->enter_on || d->exit_on || d->fixed_on || d->payload_on || d->fbt_on || d->upr_on;

	if (d->timers_on)
		tb_dvm_timers_stop(d);
	if (d->fbt_on) {
		WRITE_ONCE(d->fbt_on, false);
		tb_dvm_fbt_enable(d, false);
	}
	WRITE_ONCE(d->upr_on, false);
	tb_dvm_upr_lift(d);
	if (d->enter_on)
		tracepoint_probe_unregister(tb_tp_sys_enter, (void *)tb_dvm_sys_enter, d);
	if (d->exit_on)
		tracepoint_probe_unregister(tb_tp_sys_exit, (void *)tb_dvm_sys_exit, d);
	if (d->fixed_on)
		unregister_trace_tracebench_fixed(tb_dvm_sdt_fixed, d);
	if (d->payload_on)
		unregister_trace_tracebench_payload(tb_dvm_sdt_payload, d);
	d->enter_on = d->exit_on = d->fixed_on = d->payload_on = false;
	/* Firings in flight end before anything is read or freed (kprobe
	 * handlers, and uprobe handlers past their check, run with preemption
	 * disabled: an RCU grace period). */
	if (any)
		tracepoint_synchronize_unregister();
}

/* A registration's outcome: *on set, or everything armed so far undone. */
static int tb_dvm_armed(struct tb_dvm *d, int ret, bool *on)
{
	if (ret) {
		tb_dvm_disarm(d);
		return ret;
	}
	*on = true;
	return 0;
}

static long tb_dvm_arm(struct tb_dvm *d)
{
	int ret = 0;

	if (d->want_enter)
		ret = tb_dvm_armed(
			d, tracepoint_probe_register(tb_tp_sys_enter, (void *)tb_dvm_sys_enter, d),
			&d->enter_on);
	if (!ret && d->want_exit)
		ret = tb_dvm_armed(
			d, tracepoint_probe_register(tb_tp_sys_exit, (void *)tb_dvm_sys_exit, d),
			&d->exit_on);
	if (!ret && d->sdt[TB_KMOD_EV_FIXED])
		ret = tb_dvm_armed(d, register_trace_tracebench_fixed(tb_dvm_sdt_fixed, d),
				   &d->fixed_on);
	if (!ret && d->sdt[TB_KMOD_EV_PAYLOAD])
		ret = tb_dvm_armed(d, register_trace_tracebench_payload(tb_dvm_sdt_payload, d),
				   &d->payload_on);
	if (!ret && d->nupr)
		ret = tb_dvm_armed(d, tb_dvm_upr_place_all(d), &d->upr_on);
	if (ret)
		return ret;
	if (d->nfbt) {
		tb_dvm_fbt_enable(d, true);
		WRITE_ONCE(d->fbt_on, true);
	}
	if (d->ntimers)
		tb_dvm_timers_start(d);
	return 0;
}

static void tb_dvm_destroy(struct tb_dvm *d)
{
	u32 i;

	if (!d)
		return;
	tb_dvm_disarm(d);
	tb_dvm_fbt_unregister(d);
	tb_dvm_upr_unregister(d);
	tb_dvm_session_free(d->s);
	for (i = 0; i < d->n_objects; i++)
		tb_dif_unload(&d->objects[i]);
	kvfree(d->objects);
	kvfree(d->entry);
	kvfree(d->exit);
	kvfree(d->agg_copy);
	kvfree(d->stages);
	kvfree(d->kinds);
	kvfree(d->fbt);
	kvfree(d->upr);
	kvfree(d->timers);
	kvfree(d->busy);
	kfree(d);
}

/* Copies an array of n elements of size sz from user space; *err on failure. */
static void *tb_copy_array(u64 uptr, u32 n, size_t sz, long *err)
{
	void *p;

	if (!n)
		return NULL;
	p = kvmalloc_array(n, sz, GFP_KERNEL);
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	if (copy_from_user(p, u64_to_user_ptr(uptr), (size_t)n * sz)) {
		kvfree(p);
		*err = -EFAULT;
		return NULL;
	}
	return p;
}

static long tb_dvm_refuse(struct tb_kmod_dvm_enable *req, const char *why, u32 object, u32 pc)
{
	strscpy(req->err, why, sizeof(req->err));
	req->err_object = object;
	req->err_pc = pc;
	return -EINVAL;
}

static long tb_dvm_check_sizes(struct tb_kmod_dvm_enable *req)
{
	if (req->version != TB_KMOD_DVM_VERSION)
		return tb_dvm_refuse(req, "unknown DVM_ENABLE version", 0, 0);
	if ((req->flags & ~TB_KMOD_DVM_FLAGS_ALL) || req->reserved_out)
		return tb_dvm_refuse(req, "unknown flag or non-zero reserved field", 0, 0);
	if ((req->flags & TB_KMOD_DVM_TIMED_TRAP) &&
	    (!(req->flags & TB_KMOD_DVM_TIMED) || !IS_ENABLED(CONFIG_X86)))
		return tb_dvm_refuse(req, "TIMED_TRAP needs TIMED and the TSC (x86)", 0, 0);
	if (req->bufsize < 64 || req->bufsize > TB_KMOD_DVM_MAX_BUFSIZE || req->bufsize % 8)
		return tb_dvm_refuse(req, "bufsize: a multiple of 8 from 64 bytes to 64 MiB", 0, 0);
	if (req->aggsize < 64 || req->aggsize > TB_KMOD_DVM_MAX_BUFSIZE || req->aggsize % 8)
		return tb_dvm_refuse(req, "aggsize: a multiple of 8 from 64 bytes to 64 MiB", 0, 0);
	if (req->dynvarsize > TB_KMOD_DVM_MAX_BUFSIZE)
		return tb_dvm_refuse(req, "dynvarsize: at most 64 MiB", 0, 0);
	if (req->strsize < TB_KMOD_DVM_MIN_STRSIZE || req->strsize > TB_KMOD_DVM_MAX_STRSIZE)
		return tb_dvm_refuse(req, "strsize: 16 to 4096 bytes", 0, 0);
	if (req->scratchsize > TB_KMOD_DVM_MAX_SCRATCH || req->scratchsize % 8)
		return tb_dvm_refuse(req, "scratchsize: a multiple of 8 up to 1 MiB", 0, 0);
	if (req->n_objects > TB_KMOD_DVM_MAX_OBJECTS ||
	    req->n_key_objects > TB_KMOD_DVM_MAX_OBJECTS ||
	    req->n_actions > TB_KMOD_DVM_MAX_ACTIONS || req->n_ecbs > TB_KMOD_DVM_MAX_ECBS ||
	    req->n_probes > TB_KMOD_DVM_MAX_PROBES)
		return tb_dvm_refuse(req, "too many objects, actions, ECBs or probes", 0, 0);
	if (!req->n_ecbs || !req->n_probes)
		return tb_dvm_refuse(req, "no ECB or no probe", 0, 0);
	return 0;
}

/* A usdt probe's argument specs (every slot past usdt_nargs zero); NULL if good. */
static const char *tb_dvm_usdt_args_check(const struct tb_kmod_dvm_probe *p)
{
	u32 i, j;

	if (p->usdt_nargs > TB_KMOD_DVM_USDT_ARGS)
		return "probe: usdt probes carry at most 10 arguments";
	for (i = 0; i < TB_KMOD_DVM_USDT_ARGS; i++) {
		const struct tb_kmod_dvm_usdt_arg *a = &p->usdt_args[i];
		const int bytes = a->size < 0 ? -a->size : a->size;

		for (j = 0; j < sizeof(a->reserved); j++)
			if (a->reserved[j])
				return "probe: usdt argument's reserved bytes must be 0";
		if (i >= p->usdt_nargs) {
			if (a->value || a->kind || a->size || a->reg || a->index || a->scale)
				return "probe: usdt argument past usdt_nargs is not zero";
			continue;
		}
		if (a->kind < TB_KMOD_USDT_ARG_IMM || a->kind > TB_KMOD_USDT_ARG_MEM)
			return "probe: usdt argument of unknown kind";
		if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
			return "probe: usdt argument size is not 1, 2, 4 or 8 bytes";
		if (a->kind == TB_KMOD_USDT_ARG_IMM ? a->reg != 0 : a->reg > TB_KMOD_USDT_REG_IP)
			return "probe: usdt argument names no register this module reads";
		if (a->kind == TB_KMOD_USDT_ARG_REG && a->value)
			return "probe: usdt register argument has a displacement";
		if (a->scale ? a->kind != TB_KMOD_USDT_ARG_MEM || (a->scale & (a->scale - 1)) ||
				       a->scale > 8 || a->index >= TB_KMOD_USDT_REG_IP ||
				       a->reg == TB_KMOD_USDT_REG_IP
			     : a->index != 0)
			return "probe: usdt argument's index is not a register scaled by 1, 2, 4 "
			       "or 8 in a memory operand";
		if (!IS_ENABLED(CONFIG_X86_64) && a->kind != TB_KMOD_USDT_ARG_IMM)
			return "probe: usdt arguments in registers are read on x86-64 only";
	}
	return NULL;
}

/* Probe kinds: what each arms.  Sets *why on a bad probe.  One switch over
 * the kinds (~90 lines), each case a few lines: the list of what a probe of
 * each kind may be reads in one place. */
static const char *tb_dvm_map_probes(struct tb_dvm *d, const struct tb_kmod_dvm_probe *probes,
				     u32 n)
{
	u32 i;
	const char *why;

	for (i = 0; i < n; i++) {
		const struct tb_kmod_dvm_probe *p = &probes[i];

		if (p->kind < TB_KMOD_DVM_KINDS)
			d->kinds[i] = p->kind; /* an unknown kind is refused below */
		if (!tb_dvm_kind_in(p, TB_KMOD_UPR_KINDS) && (p->path_ptr || p->offset))
			return "probe: only pid and usdt probes take a file and an offset";
		if (p->kind != TB_KMOD_DVM_PROBE_USDT && (p->ref_ctr_offset || p->usdt_nargs))
			return "probe: only usdt probes take a semaphore and argument specs";
		if (p->reserved)
			return "probe: reserved fields must be 0";
		why = tb_dvm_usdt_args_check(p);
		if (why)
			return why;
		switch (p->kind) {
		case TB_KMOD_DVM_PROBE_BEGIN:
		case TB_KMOD_DVM_PROBE_END:
			if (p->arg)
				return "probe: BEGIN and END take no argument";
			if (p->kind == TB_KMOD_DVM_PROBE_BEGIN ? d->begin_probe : d->end_probe)
				return "probe: given twice";
			if (p->kind == TB_KMOD_DVM_PROBE_BEGIN)
				d->begin_probe = i + 1;
			else
				d->end_probe = i + 1;
			break;
		case TB_KMOD_DVM_PROBE_SYSCALL_ENTRY:
		case TB_KMOD_DVM_PROBE_SYSCALL_RETURN: {
			int *map = p->kind == TB_KMOD_DVM_PROBE_SYSCALL_ENTRY ? d->entry : d->exit;

			if (p->arg >= NR_syscalls)
				return "probe: no such syscall number on this kernel";
			if (map[p->arg])
				return "probe: given twice";
			map[p->arg] = i + 1;
			if (d->sys_kprobe) /* a kprobe on its function (tb_dvm_fbt_register) */
				break;
			if (p->kind == TB_KMOD_DVM_PROBE_SYSCALL_ENTRY)
				d->want_enter = true;
			else
				d->want_exit = true;
			break;
		}
		case TB_KMOD_DVM_PROBE_SDT:
			if (p->arg != TB_KMOD_EV_FIXED && p->arg != TB_KMOD_EV_PAYLOAD)
				return "probe: sdt takes the fixed or the payload event";
			if (d->sdt[p->arg])
				return "probe: given twice";
			d->sdt[p->arg] = i + 1;
			break;
		case TB_KMOD_DVM_PROBE_FBT_ENTRY:
		case TB_KMOD_DVM_PROBE_FBT_RETURN:
			if (p->arg)
				return "probe: fbt takes no argument (the function is in the "
				       "names)";
			break;
		case TB_KMOD_DVM_PROBE_PROFILE:
		case TB_KMOD_DVM_PROBE_TICK:
			if (p->arg < 1 || p->arg > TB_KMOD_DVM_MAX_HZ)
				return "probe: profile and tick rates are 1 to 10000 Hz";
			break;
		case TB_KMOD_DVM_PROBE_PID_ENTRY:
		case TB_KMOD_DVM_PROBE_PID_RETURN:
		case TB_KMOD_DVM_PROBE_USDT:
			if (!p->arg || p->arg > PID_MAX_LIMIT)
				return "probe: pid and usdt probes name a process (arg = its pid)";
			if (!p->path_ptr)
				return "probe: pid and usdt probes name a file (path_ptr)";
			break;
		case TB_KMOD_DVM_PROBE_ERROR:
			/* Fired by the VM itself after a fault: nothing to arm. */
			if (p->arg)
				return "probe: ERROR takes no argument";
			if (d->error_probe)
				return "probe: given twice";
			d->error_probe = true;
			break;
		default:
			return "probe: unknown kind";
		}
	}
	if ((d->want_enter && !tb_tp_sys_enter) || (d->want_exit && !tb_tp_sys_exit))
		return "probe: this kernel has no raw syscall tracepoints "
		       "(CONFIG_HAVE_SYSCALL_TRACEPOINTS)";
	return NULL;
}

/* The arrays an ENABLE request points to, copied in. */
struct tb_dvm_arrays {
	struct tb_kmod_dif_verify *objs;
	u32 *keys;
	struct tb_kmod_dvm_action *acts;
	struct tb_kmod_dvm_ecb *ecbs;
	struct tb_kmod_dvm_probe *probes;
};

static void tb_dvm_free_arrays(struct tb_dvm_arrays *a)
{
	kvfree(a->probes);
	kvfree(a->ecbs);
	kvfree(a->acts);
	kvfree(a->keys);
	kvfree(a->objs);
}

/* 0, or an errno with what was copied left for tb_dvm_free_arrays(). */
static long tb_dvm_copy_arrays(const struct tb_kmod_dvm_enable *req, struct tb_dvm_arrays *a)
{
	long ret = 0;

	a->objs = tb_copy_array(req->objects_ptr, req->n_objects, sizeof(*a->objs), &ret);
	if (!ret)
		a->keys = tb_copy_array(req->key_objects_ptr, req->n_key_objects, sizeof(*a->keys),
					&ret);
	if (!ret)
		a->acts = tb_copy_array(req->actions_ptr, req->n_actions, sizeof(*a->acts), &ret);
	if (!ret)
		a->ecbs = tb_copy_array(req->ecbs_ptr, req->n_ecbs, sizeof(*a->ecbs), &ret);
	if (!ret)
		a->probes = tb_copy_array(req->probes_ptr, req->n_probes, sizeof(*a->probes), &ret);
	return ret;
}

/* The timers, kprobes and uprobes of the probes, last in ENABLE: their names
 * are checked here, and a refusal unregisters what was (the session's
 * destroy).  0, a refusal (-EINVAL, said in req), or an errno. */
static long tb_dvm_register_probes(struct tb_dvm *d, struct tb_kmod_dvm_enable *req,
				   const struct tb_kmod_dvm_probe *probes)
{
	const char *why;
	long ret = tb_dvm_timers_init(d, probes, req->n_probes);

	if (ret)
		return ret;
	why = tb_dvm_fbt_register(d, probes, req->n_probes, &ret);
	if (!why)
		why = tb_dvm_upr_register(d, probes, req->n_probes, &ret);
	if (why)
		return ret ? ret : tb_dvm_refuse(req, why, 0, 0);
	return 0;
}

/* A session's record for `req`: its per-CPU, per-syscall and per-object
 * arrays allocated; NULL when memory is short (what was allocated freed). */
static struct tb_dvm *tb_dvm_alloc(const struct tb_kmod_dvm_enable *req)
{
	struct tb_dvm *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return NULL;
	mutex_init(&d->lock);
	d->ncpus = nr_cpu_ids;
	d->bufsize = req->bufsize;
	d->aggsize = req->aggsize;
	d->entry = kvcalloc(NR_syscalls, sizeof(int), GFP_KERNEL);
	d->exit = kvcalloc(NR_syscalls, sizeof(int), GFP_KERNEL);
	d->agg_copy = kvmalloc(req->aggsize, GFP_KERNEL);
	d->busy = kvcalloc(d->ncpus, 1, GFP_KERNEL);
	d->objects = kvcalloc(req->n_objects ? req->n_objects : 1, sizeof(*d->objects), GFP_KERNEL);
	d->kinds = kvcalloc(req->n_probes, 1, GFP_KERNEL);
	if (req->flags & TB_KMOD_DVM_TIMED)
		d->stages = kvcalloc(d->ncpus, sizeof(*d->stages), GFP_KERNEL);
	d->trap = req->flags & TB_KMOD_DVM_TIMED_TRAP;
	d->sys_kprobe = req->flags & TB_KMOD_DVM_SYSCALL_KPROBE;
	if (!d->entry || !d->exit || !d->agg_copy || !d->objects || !d->busy || !d->kinds ||
	    ((req->flags & TB_KMOD_DVM_TIMED) && !d->stages)) {
		tb_dvm_destroy(d);
		return NULL;
	}
	return d;
}

/* Every object verified by the core's verifier, as DIF_VERIFY does, and
 * loaded into d (dobjs[i] its core object): 0, a refusal (-EINVAL, said in
 * req), or an errno. */
static long tb_dvm_load_objects(struct tb_dvm *d, struct tb_kmod_dvm_enable *req,
				struct tb_kmod_dif_verify *objs, struct tb_dif_object *dobjs)
{
	long ret;
	u32 i;

	for (i = 0; i < req->n_objects; i++) {
		ret = tb_dif_load(&objs[i], &d->objects[i]);
		if (ret == -EINVAL)
			return tb_dvm_refuse(req, objs[i].err_rule, i + 1, objs[i].err_pc);
		if (ret)
			return ret;
		d->n_objects = i + 1;
		dobjs[i] = d->objects[i].o;
	}
	return 0;
}

static long tb_dvm_enable(struct file *file, void __user *uarg)
{
	struct tb_kmod_dvm_enable *req;
	struct tb_dvm_arrays a = {};
	struct tb_dif_object *dobjs = NULL;
	struct tb_dvm *d = NULL;
	const char *why = NULL;
	unsigned int idx = 0;
	long ret = 0;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	if (copy_from_user(req, uarg, sizeof(*req))) {
		kfree(req);
		return -EFAULT;
	}
	req->err_object = 0;
	req->err_pc = 0;
	req->ncpus = 0;
	memset(req->err, 0, sizeof(req->err));
	mutex_lock(&tb_dvm_mutex);
	if (tb_dvm_active) {
		ret = -EBUSY;
		goto out;
	}
	ret = tb_dvm_check_sizes(req);
	if (ret)
		goto out_copy;
	ret = tb_dvm_copy_arrays(req, &a);
	if (ret)
		goto out;
	d = tb_dvm_alloc(req);
	dobjs = kvcalloc(req->n_objects ? req->n_objects : 1, sizeof(*dobjs), GFP_KERNEL);
	if (!d || !dobjs) {
		ret = -ENOMEM;
		goto out;
	}
	if (!tb_tp_sys_enter || !tb_tp_sys_exit)
		for_each_kernel_tracepoint(tb_find_tp, NULL);
	why = tb_dvm_map_probes(d, a.probes, req->n_probes);
	if (why) {
		ret = tb_dvm_refuse(req, why, 0, 0);
		goto out_copy;
	}
	ret = tb_dvm_load_objects(d, req, a.objs, dobjs);
	if (ret)
		goto out_copy;
	d->s = tb_dvm_session_build(req, dobjs, a.keys, a.acts, a.ecbs, a.probes, d->ncpus, &why,
				    &idx);
	if (!d->s) {
		ret = tb_dvm_refuse(req, why, 0, idx);
		goto out_copy;
	}
	ret = tb_dvm_register_probes(d, req, a.probes);
	if (ret)
		goto out_copy;
	req->ncpus = d->ncpus;
	file->private_data = d;
	tb_dvm_active = d;
	d = NULL;
out_copy:
	if ((!ret || ret == -EINVAL) && copy_to_user(uarg, req, sizeof(*req)))
		ret = ret ? ret : -EFAULT;
	if (ret && tb_dvm_active && file->private_data == tb_dvm_active) {
		/* Enabled, but the caller cannot learn it: undo. */
		d = tb_dvm_active;
		tb_dvm_active = NULL;
		file->private_data = NULL;
	}
out:
	mutex_unlock(&tb_dvm_mutex);
	tb_dvm_destroy(d);
	kvfree(dobjs);
	tb_dvm_free_arrays(&a);
	kfree(req);
	return ret;
}

static long tb_dvm_go(struct tb_dvm *d)
{
	static const unsigned long long none[1];
	long ret;

	if (d->ended)
		return -EINVAL;
	if (d->enter_on || d->exit_on || d->fixed_on || d->payload_on || d->fbt_on || d->upr_on ||
	    d->timers_on)
		return 0;
	if (!d->begun && d->begin_probe)
		tb_dvm_fire_here(d, d->begin_probe, none, 0, 0);
	d->begun = true;
	ret = tb_dvm_arm(d);
	return ret;
}

static long tb_dvm_stop(struct tb_dvm *d, void __user *uarg)
{
	static const unsigned long long none[1];
	struct tb_kmod_dvm_stop req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || (req.flags & ~TB_KMOD_DVM_STOP_END))
		return -EINVAL;
	tb_dvm_disarm(d);
	if ((req.flags & TB_KMOD_DVM_STOP_END) && !d->ended) {
		if (d->end_probe)
			tb_dvm_fire_here(d, d->end_probe, none, 0, 0);
		d->ended = true;
	}
	return 0;
}

struct tb_dvm_ipi {
	struct tb_dvm *d;
	u32 cpu;
	bool agg;
	const void *data;
	u32 len;
};

static void tb_dvm_snap_here(void *arg)
{
	struct tb_dvm_ipi *x = arg;
	unsigned long flags;

	local_irq_save(flags);
	if (x->agg)
		x->len = tb_dvm_agg_copy(x->d->s, x->cpu, x->d->agg_copy, x->d->aggsize);
	else
		tb_dvm_buffer_switch(x->d->s, x->cpu, &x->data, &x->len);
	local_irq_restore(flags);
}

static long tb_dvm_snap(struct tb_dvm *d, void __user *uarg, bool agg)
{
	struct tb_kmod_dvm_snap req;
	struct tb_dvm_ipi x = {.d = d, .agg = agg};
	u64 t0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || req.cpu >= d->ncpus || req.buf_size < (agg ? d->aggsize : d->bufsize))
		return -EINVAL;
	x.cpu = req.cpu;
	t0 = ktime_get_ns();
	/* On the slot's CPU (no firing there meanwhile); an offline CPU fires
	 * nothing.  An empty active half is not switched: no IPI interrupts a
	 * CPU whose probes recorded nothing (aggregating clauses, say). */
	if (!agg && !tb_dvm_buffer_pending(d->s, req.cpu))
		x.len = 0;
	else if (smp_call_function_single(req.cpu, tb_dvm_snap_here, &x, 1))
		tb_dvm_snap_here(&x);
	req.switch_ns = ktime_get_ns() - t0;
	req.len = x.len;
	if (x.len && copy_to_user(u64_to_user_ptr(req.buf_ptr), agg ? d->agg_copy : x.data, x.len))
		return -EFAULT;
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

struct tb_dvm_reset_ipi {
	struct tb_dvm *d;
	u32 cpu;
	int kind;
	const struct tb_kmod_dvm_aggreset *req;
	u32 changed;
};

static void tb_dvm_aggreset_here(void *arg)
{
	struct tb_dvm_reset_ipi *x = arg;
	const struct tb_kmod_dvm_aggreset *r = x->req;
	unsigned long flags;

	local_irq_save(flags);
	x->changed = tb_dvm_agg_reset(x->d->s, x->cpu, r->agg_id, x->kind,
				      (r->flags & TB_KMOD_DVM_AGGRESET_KEY) ? r->key : NULL,
				      r->keylen, (r->flags & TB_KMOD_DVM_AGGRESET_TRUNC) != 0);
	local_irq_restore(flags);
}

static long tb_dvm_aggreset(struct tb_dvm *d, void __user *uarg)
{
	struct tb_kmod_dvm_aggreset *req;
	struct tb_dvm_reset_ipi x = {.d = d};
	long ret = 0;
	u32 cpu;

	req = kmalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	if (copy_from_user(req, uarg, sizeof(*req))) {
		ret = -EFAULT;
		goto out;
	}
	x.kind = tb_dvm_agg_kind(d->s, req->agg_id);
	if (x.kind < 0 || (req->flags & ~(TB_KMOD_DVM_AGGRESET_TRUNC | TB_KMOD_DVM_AGGRESET_KEY)) ||
	    ((req->flags & TB_KMOD_DVM_AGGRESET_KEY)
		     ? req->keylen % 8 || req->keylen > TB_KMOD_DVM_AGG_KEY_MAX
		     : req->keylen != 0)) {
		ret = -EINVAL;
		goto out;
	}
	x.req = req;
	req->changed = 0;
	for (cpu = 0; cpu < d->ncpus; cpu++) {
		x.cpu = cpu;
		x.changed = 0;
		/* On the slot's CPU, like a buffer switch; an offline CPU fires nothing. */
		if (smp_call_function_single(cpu, tb_dvm_aggreset_here, &x, 1))
			tb_dvm_aggreset_here(&x);
		req->changed += x.changed;
	}
	if (copy_to_user(uarg, req, sizeof(*req)))
		ret = -EFAULT;
out:
	kfree(req);
	return ret;
}

static long tb_dvm_status_ioctl(struct tb_dvm *d, void __user *uarg)
{
	struct tb_kmod_dvm_status st;
	u32 cpu, i, k;

	if (copy_from_user(&cpu, uarg, sizeof(cpu)))
		return -EFAULT;
	if (cpu != ~0u && cpu >= d->ncpus)
		return -EINVAL;
	memset(&st, 0, sizeof(st));
	st.cpu = cpu;
	tb_dvm_status(d->s, cpu, &st);
	for (i = 0; d->stages && i < d->ncpus; i++) {
		if (cpu != ~0u && cpu != i)
			continue;
		/* Another CPU may be adding: a snapshot, each sum whole (64-bit stores). */
		st.floor_cycles += READ_ONCE(d->stages[i].floor);
		for (k = 0; k < TB_KMOD_DVM_KINDS; k++) {
			st.kind_firings[k] += READ_ONCE(d->stages[i].n[k]);
			st.kind_entry_cycles[k] += READ_ONCE(d->stages[i].entry[k]);
			st.kind_vm_cycles[k] += READ_ONCE(d->stages[i].vm[k]);
			st.kind_trap_firings[k] += READ_ONCE(d->stages[i].trap_n[k]);
			st.kind_trap_cycles[k] += READ_ONCE(d->stages[i].trap[k]);
		}
	}
	/* The totals are the kinds' sums. */
	for (k = 0; k < TB_KMOD_DVM_KINDS; k++) {
		st.timed_firings += st.kind_firings[k];
		st.entry_cycles += st.kind_entry_cycles[k];
		st.vm_cycles += st.kind_vm_cycles[k];
	}
	return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
}

long tb_ioctl_dvm(struct file *file, unsigned int cmd, void __user *uarg)
{
	struct tb_dvm *d;
	long ret;

	if (cmd == TB_KMOD_IOC_DVM_ENABLE)
		return tb_dvm_enable(file, uarg);
	d = file->private_data;
	if (!d)
		return -ENOENT; /* no session on this file: DVM_ENABLE first */
	mutex_lock(&d->lock);
	switch (cmd) {
	case TB_KMOD_IOC_DVM_GO:
		ret = tb_dvm_go(d);
		break;
	case TB_KMOD_IOC_DVM_STOP:
		ret = tb_dvm_stop(d, uarg);
		break;
	case TB_KMOD_IOC_DVM_BUFSNAP:
		ret = tb_dvm_snap(d, uarg, false);
		break;
	case TB_KMOD_IOC_DVM_AGGSNAP:
		ret = tb_dvm_snap(d, uarg, true);
		break;
	case TB_KMOD_IOC_DVM_STATUS:
		ret = tb_dvm_status_ioctl(d, uarg);
		break;
	case TB_KMOD_IOC_DVM_AGGRESET:
		ret = tb_dvm_aggreset(d, uarg);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&d->lock);
	return ret;
}

void tb_dvm_release(struct file *file)
{
	struct tb_dvm *d = file->private_data;

	if (!d)
		return;
	mutex_lock(&tb_dvm_mutex);
	if (tb_dvm_active == d)
		tb_dvm_active = NULL;
	mutex_unlock(&tb_dvm_mutex);
	file->private_data = NULL;
	tb_dvm_destroy(d);
}
