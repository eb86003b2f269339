/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The D-VM's DIF core inside the module: the C side's view of it.
 *
 * The core (tracers/dvm/core: dif.h, vm.h, verify.cc, vm.cc) is the same
 * source as in user space, compiled here as freestanding C++ with the
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
	const void *insns;          /* n_insns 8-byte instructions */
	unsigned int n_insns;
	const void *ints;            /* n_ints 64-bit integers */
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
	unsigned long long value;   /* the object's result (a string's address when it returns one) */
	unsigned int fault;         /* 0, else the core's fault code (tbdvm::Fault) */
	unsigned int str_len;       /* bytes in str (a string result, without its NUL) */
	char str[TB_DIF_STR_MAX];   /* NUL-terminated */
};

/* Bytes of memory tb_dif_exec builds its world in (zeroed by the caller). */
unsigned long tb_dif_exec_work_size(void);

/*
 * Runs a verified object once, as the value of a probe's action, in a world
 * of its own built in `work`: one slot, empty variables, the probe
 * "tracebench:dif:exec:run", arg0..arg9 = args, thread id `tid`, process id
 * `pid`, execname `execname`.  The host services below are the caller's.
 */
void tb_dif_exec(const struct tb_dif_object *o, void *work, const unsigned long long *args, unsigned long long pid,
		 unsigned long long tid, const char *execname, struct tb_dif_result *out);

/* The host services the core calls (defined by the module; by a test in user space). */
unsigned long long tb_dif_host_timestamp(void);
unsigned long long tb_dif_host_vtimestamp(void);
unsigned long long tb_dif_host_walltimestamp(void);
unsigned long long tb_dif_host_cpu(void);
/* Copies len bytes of the current process's memory at src; 0 on a bad address (never faults). */
int tb_dif_host_copyin(void *dst, unsigned long long src, unsigned long long len);

#ifdef __cplusplus
}
#endif

#endif
