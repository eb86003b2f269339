/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The D-VM's DIF core inside the module: the C side's view of it.
 *
 * The core (dvm/core: dif.h, vm.h, verify.cc, vm.cc) is the same source
 * the user-space D-VM (tracers/dvm) builds, compiled here as freestanding C++ with the
 * kernel's code-generation flags (Kbuild).  dif_glue.cc wraps it in plain C
 * functions; nothing of the kernel's headers reaches the C++ side and
 * nothing of C++ reaches the C side.
 */
#ifndef TRACEBENCH_KMOD_DIF_GLUE_H
#define TRACEBENCH_KMOD_DIF_GLUE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The core's instruction size and limit (checked against the core in
 * dif_glue.cc and against the ABI in dif_ioctl.c). */
#define TB_DIF_INSN_SIZE 8u
#define TB_DIF_MAX_INSNS 8192u

/* One DIF object, as user space handed it (already copied in). */
struct tb_dif_object {
	const void *insns; /* n_insns 8-byte instructions */
	unsigned int n_insns;
	const void *ints; /* n_ints 64-bit integers */
	unsigned int n_ints;
	const char *strtab;
	unsigned int strtab_len;
	int returns_string;
};

/* Bytes of scratch memory tb_dif_verify needs (the core allocates nothing). */
unsigned long tb_dif_verify_work_size(void);

/*
 * The core's verifier.  Returns 0 when the object is accepted; else 1 with
 * *pc the offending instruction and *rule the rule it breaks (a static
 * string of the core).
 */
int tb_dif_verify(const struct tb_dif_object *o, void *work, unsigned int *pc, const char **rule);

/* What a run of one object gave. */
#define TB_DIF_STR_MAX 256u /* the world's string size (D's strsize) */
struct tb_dif_result {
	unsigned long long value; /* the object's result (a string's address when it returns one) */
	unsigned int fault;	  /* 0, else the core's fault code (tbdvm::Fault) */
	unsigned int str_len;	  /* bytes in str (a string result, without its NUL) */
	char str[TB_DIF_STR_MAX]; /* NUL-terminated */
};

/* Bytes of memory tb_dif_exec builds its world in (zeroed by the caller). */
unsigned long tb_dif_exec_work_size(void);

/*
 * Runs a verified object once, as the value of a probe's action, in a world
 * of its own built in `work`: one slot, empty variables, the probe
 * "tracebench:dif:exec:run", arg0..arg9 = args, thread id `tid`, process id
 * `pid`, execname `execname`.  The host services below are the caller's.
 */
void tb_dif_exec(const struct tb_dif_object *o, void *work, const unsigned long long *args,
		 unsigned long long pid, unsigned long long tid, const char *execname,
		 struct tb_dif_result *out);

/*
 * A tracing session (DVM_ENABLE): the probes, ECBs, actions and per-CPU
 * slots, on objects the caller copied in and verified.  The request's arrays
 * are checked against what the core trusts (indices, record layouts, value
 * types, aggregation parameters) before anything is allocated; a refusal
 * returns NULL with *err (a static string) and *err_index (the offending
 * entry of the array *err names).
 */
struct tb_dvm_session;
struct tb_kmod_dvm_enable;
struct tb_kmod_dvm_action;
struct tb_kmod_dvm_ecb;
struct tb_kmod_dvm_probe;
struct tb_kmod_dvm_status;
struct tb_dvm_session *
tb_dvm_session_build(const struct tb_kmod_dvm_enable *req, const struct tb_dif_object *objs,
		     const unsigned int *key_objects, const struct tb_kmod_dvm_action *acts,
		     const struct tb_kmod_dvm_ecb *ecbs, const struct tb_kmod_dvm_probe *probes,
		     unsigned int ncpus, const char **err, unsigned int *err_index);
void tb_dvm_session_free(struct tb_dvm_session *s);

/* Who fired: the current task. */
struct tb_dvm_who {
	unsigned long long pid; /* thread-group id */
	unsigned long long tid;
	unsigned long long thread; /* curthread: the task_struct's address */
	const char *comm;	   /* 16 readable bytes, NUL-terminated */
	unsigned long long ppid;   /* the parent's thread-group id */
	unsigned long long uid;	   /* the real uid, in the initial namespace */
	unsigned long long err;	   /* errno: a syscall return probe's error, else 0 */
};
/* Fires probe `probe` (its index in DVM_ENABLE) in slot `cpu`; the caller
 * masks local interrupts (the slot has one writer). */
void tb_dvm_fire(struct tb_dvm_session *s, unsigned int probe, const unsigned long long *args,
		 unsigned int nargs, const struct tb_dvm_who *who, unsigned int cpu);
/* The same, with memory D may read at [base, base + len) (a payload). */
void tb_dvm_fire_region(struct tb_dvm_session *s, unsigned int probe,
			const unsigned long long *args, unsigned int nargs, unsigned long long base,
			unsigned long long len, const struct tb_dvm_who *who, unsigned int cpu);
/* Counts a firing dropped because slot `cpu` was already firing. */
void tb_dvm_busy_drop(struct tb_dvm_session *s, unsigned int cpu);
/* Switches slot `cpu`'s principal buffer halves (on that CPU, interrupts
 * masked); *data and *len: the now-inactive half, stable until the next switch. */
void tb_dvm_buffer_switch(struct tb_dvm_session *s, unsigned int cpu, const void **data,
			  unsigned int *len);
/* Bytes in slot `cpu`'s active principal buffer half, read from any CPU
 * (a firing may add some just after: the next switch takes them). */
unsigned int tb_dvm_buffer_pending(const struct tb_dvm_session *s, unsigned int cpu);
/* Copies slot `cpu`'s aggregation buffer (on that CPU); returns its bytes. */
unsigned int tb_dvm_agg_copy(struct tb_dvm_session *s, unsigned int cpu, void *dst,
			     unsigned int cap);
/* The aggregating function (tbdvm::AggKind) some action uses on aggregation
 * agg_id, or -1 when no action updates it. */
int tb_dvm_agg_kind(const struct tb_dvm_session *s, unsigned int agg_id);
/* clear() (unlink 0) or trunc() (unlink 1) on slot `cpu`'s aggregation
 * agg_id of function `kind`, only key[0 .. keylen) when key is not NULL (on
 * that CPU, interrupts masked); returns the entries changed. */
unsigned int tb_dvm_agg_reset(struct tb_dvm_session *s, unsigned int cpu, unsigned int agg_id,
			      int kind, const void *key, unsigned int keylen, int unlink);
/* Adds slot `cpu`'s counters (every slot's with ~0u) to *out (zeroed by the caller). */
void tb_dvm_status(const struct tb_dvm_session *s, unsigned int cpu,
		   struct tb_kmod_dvm_status *out);

/* The host services the core calls (defined by the module; by a test in user space). */
unsigned long long tb_dif_host_timestamp(void);
unsigned long long tb_dif_host_vtimestamp(void);
unsigned long long tb_dif_host_walltimestamp(void);
unsigned long long tb_dif_host_cpu(void);
/* Copies len bytes of the current process's memory at src; 0 on a bad address (never faults). */
int tb_dif_host_copyin(void *dst, unsigned long long src, unsigned long long len);
/* Fills up to max return addresses of the current stack; returns how many. */
unsigned int tb_dif_host_stack(unsigned long *pcs, unsigned int max);
/* Zeroed memory for a session (enable time only); NULL when there is none. */
void *tb_dvm_host_zalloc(unsigned long long size);
void tb_dvm_host_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
