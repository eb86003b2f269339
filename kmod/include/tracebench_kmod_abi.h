/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * User-space <-> kernel ABI of the tracebench companion module.
 *
 * Shared verbatim by kmod/tracebench_main.c and by user space (C and C++).
 * Every ioctl carries its struct size in the number (_IOWR), and INFO reports
 * TB_KMOD_ABI_VERSION: user space refuses a module whose version differs.
 *
 * Device: /dev/tracebench (misc device, root only, mode 0600).
 *
 * Payload pattern (what the payload tracepoint records, so a tracer can be
 * verified byte for byte): byte i of the payload of the event with sequence
 * number `seq` is
 *     i < 8 : byte i of `seq` in little-endian order
 *     i >= 8: tb_kmod_pattern_byte(i), the suite's payload pattern
 *             (tracebench_payload_pattern.h)
 * tb_kmod_expected_byte() computes exactly that.
 */
#ifndef TRACEBENCH_KMOD_ABI_H
#define TRACEBENCH_KMOD_ABI_H

#ifdef __KERNEL__
#include <linux/ioctl.h>
#include <linux/types.h>
#else
#include <linux/ioctl.h>
#include <linux/types.h>
#include <stdint.h>
#endif

#include "tracebench_payload_pattern.h"

/* 2: the payload pattern is the suite's one pattern (tracebench_payload_pattern.h).
 * 3: DIF_VERIFY and DIF_EXEC (the D-VM's DIF core in the module), TB_KMOD_CAP_DIF.
 * 4: the D-VM as a tracer (DVM_ENABLE, DVM_GO, DVM_STOP, DVM_BUFSNAP, DVM_AGGSNAP,
 *    DVM_STATUS), TB_KMOD_CAP_DVM.
 * 5: DVM_AGGRESET (D's clear() and trunc()), the dtrace:::ERROR probe kind, llquantize;
 *    INFO's nr_syscalls (was reserved0).
 * 6: DVM_STATUS's stage sums per probe kind (the paper's Table 6 per provider).
 * 7: the pid provider (uprobes on a process's functions): probe kinds PID_ENTRY and
 *    PID_RETURN, struct tb_kmod_dvm_probe's path_ptr and offset; stage 1 measured
 *    (TB_KMOD_DVM_TIMED_TRAP, DVM_STATUS's kind_trap_*).
 * 8: the usdt provider (uprobes on a process's SDT notes): probe kind USDT, struct
 *    tb_kmod_dvm_probe's ref_ctr_offset and usdt_args (the probe is 400 bytes).
 * 9: DVM_ENABLE's TB_KMOD_DVM_SYSCALL_KPROBE (syscall probes on the syscall's own
 *    function, not the raw syscall tracepoints).
 * 10: the delay probe on tracebench_fixed (DELAY_SET, DELAY_ENABLE, DELAY_STATUS),
 *    TB_KMOD_CAP_DELAY. */
#define TB_KMOD_ABI_VERSION 10u
#define TB_KMOD_DEVICE_NAME "tracebench"
#define TB_KMOD_DEVICE_PATH "/dev/tracebench"
#define TB_KMOD_MODULE_NAME "tracebench"

/* Limits: anything above them is rejected with EINVAL. */
#define TB_KMOD_MAX_PAYLOAD 4096u
#define TB_KMOD_MAX_COUNT   (1ull << 32) /* events per FIRE */
#define TB_KMOD_MAX_BATCH   65536u	 /* events per sample / per non-preemptible chunk */
#define TB_KMOD_MAX_SAMPLES (1u << 20)	 /* samples per FIRE */
#define TB_KMOD_MAX_EVENTS  8u
#define TB_KMOD_NAME_LEN    64u

/* Event ids accepted by FIRE.  Every FIRE also calls the target function
 * (tracebench_kmod_target) once per event, so kprobes/fentry/function tracer
 * attach there whatever the id. */
enum tb_kmod_event_id {
	TB_KMOD_EV_FIXED = 0,	/* tracepoint tracebench:tracebench_fixed (two u64) */
	TB_KMOD_EV_PAYLOAD = 1, /* tracepoint tracebench:tracebench_payload (dyn array 0..4096) */
	TB_KMOD_EV_TARGET = 2,	/* no tracepoint: only the target function call */
	TB_KMOD_EV_COUNT = 3,
};

/* Kinds reported in tb_kmod_event_desc.kind */
#define TB_KMOD_KIND_TRACEPOINT 1u
#define TB_KMOD_KIND_FUNCTION	2u

/* Capabilities (tb_kmod_info.caps) */
#define TB_KMOD_CAP_TSC		(1u << 0) /* samples are TSC cycles (else ns) */
#define TB_KMOD_CAP_IRQS_OFF	(1u << 1) /* TB_KMOD_FIRE_IRQS_OFF supported */
#define TB_KMOD_CAP_PAYLOAD	(1u << 2) /* payload tracepoint present */
#define TB_KMOD_CAP_DIF		(1u << 3) /* the D-VM's DIF core: DIF_VERIFY, DIF_EXEC */
#define TB_KMOD_CAP_DVM		(1u << 4) /* the D-VM as a tracer: DVM_* */
#define TB_KMOD_CAP_DELAY	(1u << 5) /* the delay probe: DELAY_* */

/* FIRE flags */
#define TB_KMOD_FIRE_IRQS_OFF	(1u << 0) /* also disable local interrupts per chunk */
#define TB_KMOD_FIRE_FLAGS_ALL	(TB_KMOD_FIRE_IRQS_OFF)

/* The fixed event's second field: value = seq ^ TB_KMOD_FIXED_MAGIC. */
#define TB_KMOD_FIXED_MAGIC	0x7472616365626e63ull /* "tracebnc" */

/* Name of the noinline attach point (kprobe / fentry / function tracer). */
#define TB_KMOD_TARGET_SYMBOL	"tracebench_kmod_target"
#define TB_KMOD_TRACE_SYSTEM	"tracebench"

struct tb_kmod_event_desc {
	__u32 id;	   /* enum tb_kmod_event_id */
	__u32 kind;	   /* TB_KMOD_KIND_* */
	__u32 max_payload; /* bytes; 0 = no payload */
	__u32 reserved;
	char name
		[TB_KMOD_NAME_LEN]; /* "tracebench:tracebench_fixed", "function:tracebench_kmod_target" */
};

struct tb_kmod_info {
	__u32 abi_version; /* out: TB_KMOD_ABI_VERSION */
	__u32 caps;	   /* out: TB_KMOD_CAP_* */
	__u32 n_events;	   /* out: valid entries in events[] */
	__u32 max_payload; /* out */
	__u64 max_count;   /* out */
	__u32 max_batch;   /* out */
	__u32 max_samples; /* out */
	__u32 tsc_khz;	   /* out: 0 when unknown */
	__u32 nr_syscalls; /* out: the kernel's syscall table size (the D-VM's syscall probes' bound) */
	__u64 seq_next; /* out: sequence number the next event will get */
	char target_symbol[TB_KMOD_NAME_LEN];
	char kernel_release[TB_KMOD_NAME_LEN];
	struct tb_kmod_event_desc events[TB_KMOD_MAX_EVENTS];
};

struct tb_kmod_fire {
	/* in */
	__u32 event_id;	    /* enum tb_kmod_event_id */
	__u32 flags;	    /* TB_KMOD_FIRE_* */
	__u64 count;	    /* events to fire, 1..TB_KMOD_MAX_COUNT */
	__u32 payload_size; /* 0..TB_KMOD_MAX_PAYLOAD (payload event and target arg) */
	__u32 batch;	    /* events per sample, 1..TB_KMOD_MAX_BATCH; 0 = 1 */
	__u64 samples_ptr;  /* user pointer to __u64[samples_cap], or 0 for none */
	__u32 samples_cap;  /* must be >= ceil(count / batch) when samples_ptr != 0 */
	__u32 reserved_in;  /* must be 0 */
	/* out */
	__u32 samples_written;
	__u32 cpu;	   /* CPU of the last chunk */
	__u64 fired;	   /* events fired (== count unless interrupted by a fatal signal) */
	__u64 seq_first;   /* sequence number of the first event */
	__u64 loop_cycles; /* TSC cycles inside non-preemptible chunks, summed */
	__u64 wall_ns;	   /* ktime from first to last event (including reschedules) */
	__u32 tsc_khz;
	__u32 migrations; /* chunks that ran on a different CPU than the first */
	__u64 reserved_out[4];
};

/*
 * DIF_VERIFY: one D-VM DIF object (the user-space compiler's output: the
 * instructions, the integer table, the string table) checked by the same
 * verifier the user-space D-VM runs (kmod/dvm/core/verify.cc), compiled
 * into the module.  Accepted: 0.  Rejected: EINVAL with err_pc and err_rule
 * (the verifier's rule, or what in the request is wrong) copied back.
 */
#define TB_KMOD_DIF_MAX_INSNS	   8192u      /* the verifier's limit; more: "program too long" */
#define TB_KMOD_DIF_MAX_INTS	   65536u     /* integer-table entries per object */
#define TB_KMOD_DIF_MAX_STRTAB	   (1u << 20) /* string-table bytes per object */
#define TB_KMOD_DIF_RULE_LEN	   64u
#define TB_KMOD_DIF_RETURNS_STRING (1u << 0) /* the object's result is a string (by reference) */
#define TB_KMOD_DIF_FLAGS_ALL	   (TB_KMOD_DIF_RETURNS_STRING)

/* The core's instruction, byte for byte (tbdvm::Insn). */
struct tb_kmod_dif_insn {
	__u8 op;
	__u8 rd;
	__u8 r1;
	__u8 r2;
	__u32 imm;
};

struct tb_kmod_dif_verify {
	/* in */
	__u64 insns_ptr;  /* user pointer to n_insns struct tb_kmod_dif_insn */
	__u64 ints_ptr;	  /* user pointer to n_ints __u64, or 0 when n_ints is 0 */
	__u64 strtab_ptr; /* user pointer to strtab_len bytes, or 0 when strtab_len is 0 */
	__u32 n_insns;
	__u32 n_ints;	   /* 0..TB_KMOD_DIF_MAX_INTS */
	__u32 strtab_len;  /* 0..TB_KMOD_DIF_MAX_STRTAB */
	__u32 flags;	   /* TB_KMOD_DIF_* */
	__u64 reserved_in; /* must be 0 */
	/* out (on EINVAL) */
	__u32 err_pc;
	__u32 reserved_out;
	char err_rule[TB_KMOD_DIF_RULE_LEN]; /* NUL-terminated; empty when accepted */
};

/*
 * DIF_EXEC: one DIF object verified as above, then run once in the module
 * as a probe action's value would be, in a world of its own (empty
 * variables; the probe tracebench:dif:exec:run; arg0..arg9 = args; pid, tid
 * and execname the caller's), with preemption disabled.  Out: the result,
 * the fault (tbdvm::Fault, 0 = none) and, for an object that returns a
 * string, the string.  A rejected object: EINVAL as for DIF_VERIFY.
 */
#define TB_KMOD_DIF_MAX_ARGS 10u
#define TB_KMOD_DIF_STR_LEN  256u

struct tb_kmod_dif_exec {
	struct tb_kmod_dif_verify object; /* in: the object; out (on EINVAL): why it was rejected */
	__u64 args[TB_KMOD_DIF_MAX_ARGS]; /* in */
	/* out */
	__u64 result;	  /* the value (for a string, its address in the module) */
	__u32 fault;	  /* 0, or the fault that ended the run */
	__u32 result_len; /* bytes of result_str, without its NUL */
	char result_str[TB_KMOD_DIF_STR_LEN];
};

/*
 * The D-VM as a tracer in the module, DTrace's way: the user-space D compiler
 * hands over DIF objects, actions, ECBs (enabled probe descriptions) and
 * buffer sizes (DVM_ENABLE); every object is verified again and every
 * action checked against its ECB's record before anything is armed, and a
 * refusal (EINVAL with err, err_object, err_pc) leaves nothing behind.
 * DVM_GO arms the probes (dtrace:::BEGIN fires first, on the caller's CPU,
 * at the first GO), DVM_STOP disarms them (with TB_KMOD_DVM_STOP_END,
 * dtrace:::END fires after every other probe is quiet; the session then
 * cannot be armed again).  A firing runs with local interrupts off on its
 * CPU's slot: its scratch, principal buffer (two halves) and aggregation
 * buffer.  DVM_BUFSNAP switches one CPU's halves (on that CPU) and copies
 * the now-inactive one out; DVM_AGGSNAP copies a CPU's aggregation buffer
 * out; DVM_STATUS reads the counters.  The session belongs to the open
 * file: closing it disarms and frees everything.  One session at a time
 * (EBUSY).  Record and aggregation layouts are the core's
 * (dvm/core/vm.h: RecordHeader, AggEntry).
 */
#define TB_KMOD_DVM_VERSION	1u
#define TB_KMOD_DVM_ERR_LEN	128u
#define TB_KMOD_DVM_NAMES_LEN	192u /* "provider\0module\0function\0name\0" */
#define TB_KMOD_DVM_MAX_OBJECTS 4096u
#define TB_KMOD_DVM_MAX_ACTIONS 4096u
#define TB_KMOD_DVM_MAX_ECBS	4096u
#define TB_KMOD_DVM_MAX_PROBES	4096u
#define TB_KMOD_DVM_MAX_BUFSIZE (64u << 20) /* principal half, aggregation, dynamic variables */
#define TB_KMOD_DVM_MAX_SCRATCH (1u << 20)
#define TB_KMOD_DVM_MIN_STRSIZE 16u
#define TB_KMOD_DVM_MAX_STRSIZE 4096u
#define TB_KMOD_DVM_FAULTS	16u

enum tb_kmod_dvm_probe_kind {
	TB_KMOD_DVM_PROBE_BEGIN = 1, /* dtrace:::BEGIN */
	TB_KMOD_DVM_PROBE_END = 2,   /* dtrace:::END */
	TB_KMOD_DVM_PROBE_SYSCALL_ENTRY =
		3, /* syscall::<arg>:entry, arg = syscall number; arg0..5 = its arguments */
	TB_KMOD_DVM_PROBE_SYSCALL_RETURN =
		4,		   /* syscall::<arg>:return; arg0 = arg1 = the return value */
	TB_KMOD_DVM_PROBE_SDT = 5, /* sdt:tracebench::<event>, arg = TB_KMOD_EV_FIXED (arg0 = seq,
					       * arg1 = value) or TB_KMOD_EV_PAYLOAD (arg0 = seq, arg1 = the
					       * payload's address, readable for arg2 = its length) */
	TB_KMOD_DVM_PROBE_FBT_ENTRY =
		6, /* fbt:<module>:<function>:entry, a kprobe on the function the
					       * names' third field gives; arg0..arg5 = its arguments */
	TB_KMOD_DVM_PROBE_FBT_RETURN = 7, /* fbt:<module>:<function>:return, a kretprobe; arg1 = the
					       * return value (arg0 = 0) */
	TB_KMOD_DVM_PROBE_PROFILE =
		8,		    /* profile:::profile-<arg>: an hrtimer at arg Hz on every online
					       * CPU; arg0 = the interrupted kernel pc (0 in user mode), arg1 =
					       * the interrupted user pc (0 in the kernel) */
	TB_KMOD_DVM_PROBE_TICK = 9, /* profile:::tick-<arg>: an hrtimer at arg Hz on one CPU */
	TB_KMOD_DVM_PROBE_ERROR = 10, /* dtrace:::ERROR: fired by the VM after a fault, on the
					       * faulting CPU (arg1 = epid, arg2 = 0 predicate / k action #k,
					       * arg3 = DIF offset or -1, arg4 = fault, arg5 = address) */
	TB_KMOD_DVM_PROBE_PID_ENTRY =
		11, /* pid<arg>:<module>:<function>:entry, a uprobe at the probe's
					       * file (path_ptr) and offset; fires only in process arg (its
					       * tgid); arg0..arg5 = the function's arguments */
	TB_KMOD_DVM_PROBE_PID_RETURN =
		12,		     /* pid<arg>:<module>:<function>:return, a uretprobe; arg1 = the
					       * return value (arg0 = 0) */
	TB_KMOD_DVM_PROBE_USDT = 13, /* <provider><arg>:<module>:<function>:<name>, an SDT note's
					       * site: a uprobe at path_ptr + offset, the note's semaphore
					       * (ref_ctr_offset, 0: none) raised while it is registered; fires
					       * only in process arg; arg0.. read as usdt_args say */
};
#define TB_KMOD_DVM_MAX_HZ 10000u
#define TB_KMOD_DVM_KINDS  16u /* stage sums per kind: indexed by enum tb_kmod_dvm_probe_kind */

/* A USDT argument: "-4@%edi" is REG DI size -4, "8@$5" IMM 5 size 8,
 * "-4@-20(%rbp)" MEM BP value -20 size -4 (read from the traced process's
 * memory at the register plus value), "8@16(%rax,%rdx,8)" MEM AX index DX
 * scale 8 value 16.  A rip-relative operand is MEM IP
 * with value relative to the probe's own address (the uprobe's ip). */
enum tb_kmod_dvm_usdt_arg_kind {
	TB_KMOD_USDT_ARG_IMM = 1,
	TB_KMOD_USDT_ARG_REG = 2,
	TB_KMOD_USDT_ARG_MEM = 3,
};
/* x86-64 registers as pt_regs holds them (sub-registers name their register). */
enum tb_kmod_dvm_usdt_reg {
	TB_KMOD_USDT_REG_AX,
	TB_KMOD_USDT_REG_BX,
	TB_KMOD_USDT_REG_CX,
	TB_KMOD_USDT_REG_DX,
	TB_KMOD_USDT_REG_SI,
	TB_KMOD_USDT_REG_DI,
	TB_KMOD_USDT_REG_BP,
	TB_KMOD_USDT_REG_SP,
	TB_KMOD_USDT_REG_R8,
	TB_KMOD_USDT_REG_R9,
	TB_KMOD_USDT_REG_R10,
	TB_KMOD_USDT_REG_R11,
	TB_KMOD_USDT_REG_R12,
	TB_KMOD_USDT_REG_R13,
	TB_KMOD_USDT_REG_R14,
	TB_KMOD_USDT_REG_R15,
	TB_KMOD_USDT_REG_IP,
};
#define TB_KMOD_DVM_USDT_ARGS 10u
struct tb_kmod_dvm_usdt_arg {
	__s64 value;	  /* IMM: the value; MEM: the displacement */
	__u8 kind;	  /* enum tb_kmod_dvm_usdt_arg_kind */
	__s8 size;	  /* bytes: 1, 2, 4 or 8; negative: sign-extended */
	__u8 reg;	  /* enum tb_kmod_dvm_usdt_reg (REG, MEM's base) */
	__u8 index;	  /* MEM with a scale: the index register (not IP) */
	__u8 scale;	  /* MEM: 0 (no index), or 1, 2, 4, 8: base + index * scale + value */
	__u8 reserved[3]; /* must be 0 */
};

struct tb_kmod_dvm_probe {
	__u32 kind; /* enum tb_kmod_dvm_probe_kind */
	__u32 arg;
	__u32 id; /* the probe's id as D reads it */
	__u32 names_len;
	char names[TB_KMOD_DVM_NAMES_LEN];
	/* pid and usdt probes only (0 for every other kind): the file to
	 * probe, a NUL-terminated path up to PATH_MAX in the caller's memory,
	 * and the instruction's offset in it (a file offset, not an
	 * address). */
	__u64 path_ptr;
	__u64 offset;
	/* usdt probes only (0 for every other kind): the semaphore's file
	 * offset (0: the note has none) and where each of the first
	 * usdt_nargs arguments is (the note's argument specs, x86-64). */
	__u64 ref_ctr_offset;
	__u32 usdt_nargs;
	__u32 reserved; /* must be 0 */
	struct tb_kmod_dvm_usdt_arg usdt_args[TB_KMOD_DVM_USDT_ARGS];
};

/* Object indices are 1-based; 0 = none. */
struct tb_kmod_dvm_action {
	__u16 kind;	  /* tbdvm::ActionKind */
	__u16 agg_kind;	  /* tbdvm::AggKind (aggregations) */
	__u32 value;	  /* object index, or 0 */
	__u32 keys_first; /* aggregation keys: key_objects[keys_first .. keys_first + nkeys) */
	__u32 nkeys;
	__u32 agg_id;
	__u32 offset; /* data offset in the ECB's record */
	__u32 size;   /* data bytes in the record */
	__u32 format_id;
	__u32 arg_index;
	__u32 reserved; /* must be 0 */
	__s64 lq_base, lq_limit, lq_step;
};

struct tb_kmod_dvm_ecb {
	__u32 epid;	     /* 1-based, == index + 1 */
	__u32 probe;	     /* index into probes */
	__u32 predicate;     /* object index, or 0 */
	__u32 actions_first; /* actions[actions_first .. actions_first + nactions) */
	__u32 nactions;
	__u32 record_size; /* 0: records nothing; else a multiple of 8, <= bufsize */
};

/* DVM_ENABLE flags */
#define TB_KMOD_DVM_TIMED \
	(1u << 0) /* time the stages of every firing (DVM_STATUS): adds four TSC reads */
/* With TIMED, x86 only: the traced code hands the TSC it read just before the
 * call as the call's first argument (getpid(tsc), f(tsc, ...)), and the
 * module sums, for syscall entry, pid entry and usdt probes, its callback's first
 * read minus that arg0: stage 1 (the syscall entry or the breakpoint trap,
 * and the dispatch to the callback), measured rather than inferred.  A
 * firing whose arg0 is not a TSC up to 2^32 cycles before is not summed. */
#define TB_KMOD_DVM_TIMED_TRAP	   (1u << 1)
/* Syscall probes as kprobes (entry) and kretprobes (return) on each enabled
 * syscall's function (__x64_sys_<name>), DTrace's systrace way: a syscall
 * without an enabled probe runs untouched, where the raw syscall tracepoints
 * run the module's callback on every syscall once one probe is enabled.  A
 * firing then pays the kprobe (through ftrace where the kernel can) instead
 * of the tracepoint's call.  A syscall whose function cannot be probed is
 * refused at ENABLE. */
#define TB_KMOD_DVM_SYSCALL_KPROBE (1u << 2)
#define TB_KMOD_DVM_FLAGS_ALL \
	(TB_KMOD_DVM_TIMED | TB_KMOD_DVM_TIMED_TRAP | TB_KMOD_DVM_SYSCALL_KPROBE)

struct tb_kmod_dvm_enable {
	/* in */
	__u32 version;	   /* TB_KMOD_DVM_VERSION */
	__u32 flags;	   /* TB_KMOD_DVM_* */
	__u32 bufsize;	   /* principal buffer bytes per CPU, each half */
	__u32 aggsize;	   /* aggregation buffer bytes per CPU */
	__u32 dynvarsize;  /* dynamic variable bytes */
	__u32 strsize;	   /* D's string size */
	__u32 scratchsize; /* per CPU */
	__u32 n_objects;
	__u64 objects_ptr;     /* struct tb_kmod_dif_verify[n_objects] (in fields) */
	__u64 key_objects_ptr; /* __u32[n_key_objects], object indices */
	__u32 n_key_objects;
	__u32 n_actions;
	__u64 actions_ptr; /* struct tb_kmod_dvm_action[n_actions] */
	__u64 ecbs_ptr;	   /* struct tb_kmod_dvm_ecb[n_ecbs] */
	__u32 n_ecbs;
	__u32 n_probes;
	__u64 probes_ptr; /* struct tb_kmod_dvm_probe[n_probes] */
	/* out */
	__u32 ncpus;	  /* slots: BUFSNAP/AGGSNAP/STATUS take 0 .. ncpus - 1 */
	__u32 err_object; /* on EINVAL: the object (1-based) the verifier rejected, else 0 */
	__u32 err_pc;
	__u32 reserved_out;
	char err[TB_KMOD_DVM_ERR_LEN]; /* on EINVAL: why */
};

#define TB_KMOD_DVM_STOP_END (1u << 0) /* fire dtrace:::END: the session is over */
struct tb_kmod_dvm_stop {
	__u32 flags;
	__u32 reserved;
};

struct tb_kmod_dvm_snap {
	__u32 cpu;	/* in */
	__u32 buf_size; /* in: bytes at buf_ptr (BUFSNAP: >= bufsize; AGGSNAP: >= aggsize) */
	__u64 buf_ptr;	/* in */
	__u32 len;	/* out: bytes written */
	__u32 reserved;
	__u64 switch_ns; /* out: the switch / copy on that CPU, ns */
};

/* DVM_AGGRESET: D's clear() (values back to a new entry's) or trunc() (the
 * entries unlinked: firings make new ones) on every CPU's aggregation
 * buffer, on that CPU.  With TB_KMOD_DVM_AGGRESET_KEY only the entry of
 * key[0 .. keylen) (the core's encoding), else every key of agg_id. */
#define TB_KMOD_DVM_AGGRESET_TRUNC (1u << 0)
#define TB_KMOD_DVM_AGGRESET_KEY   (1u << 1)
#define TB_KMOD_DVM_AGG_KEY_MAX	   512u /* tbdvm::kAggKeyMax */
struct tb_kmod_dvm_aggreset {
	__u32 agg_id;  /* in: an aggregation some action of the session updates */
	__u32 flags;   /* in: TB_KMOD_DVM_AGGRESET_* */
	__u32 keylen;  /* in: with _KEY, a multiple of 8 up to TB_KMOD_DVM_AGG_KEY_MAX */
	__u32 changed; /* out: entries changed, over every CPU */
	__u8 key[TB_KMOD_DVM_AGG_KEY_MAX];
};

/*
 * Stage timing (TB_KMOD_DVM_TIMED), in TSC cycles (ns where the module has
 * no TSC: TB_KMOD_CAP_TSC), summed over timed firings of every probe, and per
 * probe kind:
 *   entry: the provider, from its callback's first instruction (tracepoint,
 *          kprobe handler, hrtimer) to the VM (probe lookup, arguments, who
 *          fired, interrupts masked): the paper's stage 2;
 *   vm:    the VM on the probe's ECBs (C_vm_prepare + every ECB's predicate
 *          and actions): stage 3;
 *   floor: two back-to-back reads, once per firing, so the reads' own cost
 *          can be subtracted from entry and vm.
 * What precedes the callback (syscall entry, the tracepoint's dispatch:
 * stage 1) is the traced overhead minus these.
 */
struct tb_kmod_dvm_status {
	__u32 cpu;	      /* in: a CPU, or ~0u for the sum over all */
	__u32 exit_requested; /* out: an exit() action ran */
	__u64 fired, ecb_fired, drops, agg_drops, errors; /* out */
	__u64 faults[TB_KMOD_DVM_FAULTS];		  /* out: by tbdvm::Fault */
	__u64 busy_drops;    /* out: firings dropped because their CPU was already firing (a probe
			      * reached from inside a firing, e.g. fbt on a function the VM calls) */
	__u64 timed_firings; /* out: firings timed (TB_KMOD_DVM_TIMED) */
	__u64 entry_cycles, vm_cycles, floor_cycles; /* out: sums over them */
	/* out: the same per probe kind (index = enum tb_kmod_dvm_probe_kind; the floor is the
	 * one above, a property of the clock, not of the provider) */
	__u64 kind_firings[TB_KMOD_DVM_KINDS];
	__u64 kind_entry_cycles[TB_KMOD_DVM_KINDS];
	__u64 kind_vm_cycles[TB_KMOD_DVM_KINDS];
	/* out, TB_KMOD_DVM_TIMED_TRAP: the firings whose arg0 was a TSC read before the call,
	 * and the sum of their stage 1 (callback's first read - arg0) */
	__u64 kind_trap_firings[TB_KMOD_DVM_KINDS];
	__u64 kind_trap_cycles[TB_KMOD_DVM_KINDS];
};

/*
 * The delay probe: a known cost on the traced path only.  The module's own
 * probe on its tracepoint tracebench_fixed busy-waits a calibrated `ns` per
 * firing while it is registered (DELAY_ENABLE 1) and is not registered at
 * all otherwise (the tracepoint's static key off: an untraced event pays
 * nothing for it).  One owner at a time (the open file that called
 * DELAY_SET; EBUSY for the others); closing it unregisters the probe.
 *
 * DELAY_SET calibrates in the kernel: the TSC's rate against
 * ktime_get_raw_ns() over TB_KMOD_DELAY_RATE_MS (tsc_hz), then the firing's
 * cost as FIRE meets it: FIRE's own loop for tracebench_fixed run with the
 * probe registered minus the same loop without it (preemption off, the lower
 * quartile of 61 windows of about 50 us each), with the shortest spin, and
 * the spin corrected twice until a firing costs `ns`.  A `ns` below the
 * shortest firing is refused with ERANGE, the out fields filled
 * (least_mcycles says what the shortest costs).  Calibration fires the
 * tracepoint (sequence numbers from TB_KMOD_DELAY_CALIB_SEQ, never FIRE's):
 * nothing else should be attached to it.
 */
#define TB_KMOD_DELAY_MAX_NS	100000u /* FIRE runs 4096 events with preemption off */
#define TB_KMOD_DELAY_RATE_MS	20u
#define TB_KMOD_DELAY_CALIB_SEQ (1ull << 63)
struct tb_kmod_delay_set {
	__u32 ns;		  /* in: 1..TB_KMOD_DELAY_MAX_NS */
	__u32 reserved;		  /* in: must be 0 */
	__u64 tsc_hz;		  /* out: TSC ticks per second of ktime_get_raw_ns(), measured */
	__u32 tsc_khz;		  /* out: the rate the kernel uses (tsc_khz; 0 when unknown) */
	__u32 calib_windows;	  /* out: windows per cost measurement */
	__u64 spin_cycles;	  /* out: the spin chosen, clock cycles */
	__u64 least_mcycles;	  /* out: one firing with the shortest spin, 1/1000 cycles */
	__u64 firing_mcycles;	  /* out: one firing with the spin chosen, 1/1000 cycles */
	__u64 firing_iqr_mcycles; /* out: the interquartile range of the windows behind it,
				   * per event (how steady the clock and the CPU were) */
	__u64 untraced_mcycles;	  /* out: one event of FIRE's loop without the probe */
};

/* DELAY_ENABLE's argument: 1 registers the probe, 0 unregisters it (and waits
 * out firings in flight); the owner's enabled intervals are timed. */
struct tb_kmod_delay_enable {
	__u32 on;
	__u32 reserved;
};

/* What the probe did since DELAY_SET: firings, the clock cycles they spent
 * from the probe's first read to its last (the spin and its overshoot; the
 * dispatch before it is not in them) in all and in the shortest firing (what
 * every firing spent: an interrupt, or time a hypervisor or emulator took,
 * lengthens some firings, never all), and the enabled intervals by both
 * clocks (the TSC against ktime_get_raw_ns(): a clock whose rate changed
 * since DELAY_SET shows here). */
struct tb_kmod_delay_status {
	__u64 firings;
	__u64 spent_cycles;
	__u64 min_spent_cycles; /* 0 when nothing fired */
	__u64 enabled_cycles;
	__u64 enabled_ns;
	__u32 enabled; /* the probe is registered now */
	__u32 reserved;
};

#define TB_KMOD_IOC_MAGIC	 0xB6
#define TB_KMOD_IOC_INFO	 _IOR(TB_KMOD_IOC_MAGIC, 0x01, struct tb_kmod_info)
#define TB_KMOD_IOC_FIRE	 _IOWR(TB_KMOD_IOC_MAGIC, 0x02, struct tb_kmod_fire)
#define TB_KMOD_IOC_DIF_VERIFY	 _IOWR(TB_KMOD_IOC_MAGIC, 0x03, struct tb_kmod_dif_verify)
#define TB_KMOD_IOC_DIF_EXEC	 _IOWR(TB_KMOD_IOC_MAGIC, 0x04, struct tb_kmod_dif_exec)
#define TB_KMOD_IOC_DVM_ENABLE	 _IOWR(TB_KMOD_IOC_MAGIC, 0x05, struct tb_kmod_dvm_enable)
#define TB_KMOD_IOC_DVM_GO	 _IO(TB_KMOD_IOC_MAGIC, 0x06)
#define TB_KMOD_IOC_DVM_STOP	 _IOW(TB_KMOD_IOC_MAGIC, 0x07, struct tb_kmod_dvm_stop)
#define TB_KMOD_IOC_DVM_BUFSNAP	 _IOWR(TB_KMOD_IOC_MAGIC, 0x08, struct tb_kmod_dvm_snap)
#define TB_KMOD_IOC_DVM_AGGSNAP	 _IOWR(TB_KMOD_IOC_MAGIC, 0x09, struct tb_kmod_dvm_snap)
#define TB_KMOD_IOC_DVM_STATUS	 _IOWR(TB_KMOD_IOC_MAGIC, 0x0a, struct tb_kmod_dvm_status)
#define TB_KMOD_IOC_DVM_AGGRESET _IOWR(TB_KMOD_IOC_MAGIC, 0x0b, struct tb_kmod_dvm_aggreset)
#define TB_KMOD_IOC_DELAY_SET	 _IOWR(TB_KMOD_IOC_MAGIC, 0x0c, struct tb_kmod_delay_set)
#define TB_KMOD_IOC_DELAY_ENABLE _IOW(TB_KMOD_IOC_MAGIC, 0x0d, struct tb_kmod_delay_enable)
#define TB_KMOD_IOC_DELAY_STATUS _IOR(TB_KMOD_IOC_MAGIC, 0x0e, struct tb_kmod_delay_status)

static inline __u8 tb_kmod_pattern_byte(__u32 i)
{
	return (__u8)tb_payload_byte(i);
}

static inline __u8 tb_kmod_expected_byte(__u64 seq, __u32 i)
{
	return i < 8 ? (__u8)(seq >> (8 * i)) : tb_kmod_pattern_byte(i);
}

#endif /* TRACEBENCH_KMOD_ABI_H */
