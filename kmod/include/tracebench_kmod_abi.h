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

/* 2: the payload pattern is the suite's one pattern (tracebench_payload_pattern.h). */
#define TB_KMOD_ABI_VERSION 2u
#define TB_KMOD_DEVICE_NAME "tracebench"
#define TB_KMOD_DEVICE_PATH "/dev/tracebench"
#define TB_KMOD_MODULE_NAME "tracebench"

/* Limits: anything above them is rejected with EINVAL. */
#define TB_KMOD_MAX_PAYLOAD 4096u
#define TB_KMOD_MAX_COUNT (1ull << 32)   /* events per FIRE */
#define TB_KMOD_MAX_BATCH 65536u         /* events per sample / per non-preemptible chunk */
#define TB_KMOD_MAX_SAMPLES (1u << 20)   /* samples per FIRE */
#define TB_KMOD_MAX_EVENTS 8u
#define TB_KMOD_NAME_LEN 64u

/* Event ids accepted by FIRE.  Every FIRE also calls the target function
 * (tracebench_kmod_target) once per event, so kprobes/fentry/function tracer
 * attach there whatever the id. */
enum tb_kmod_event_id {
	TB_KMOD_EV_FIXED = 0,   /* tracepoint tracebench:tracebench_fixed (two u64) */
	TB_KMOD_EV_PAYLOAD = 1, /* tracepoint tracebench:tracebench_payload (dyn array 0..4096) */
	TB_KMOD_EV_TARGET = 2,  /* no tracepoint: only the target function call */
	TB_KMOD_EV_COUNT = 3,
};

/* Kinds reported in tb_kmod_event_desc.kind */
#define TB_KMOD_KIND_TRACEPOINT 1u
#define TB_KMOD_KIND_FUNCTION 2u

/* Capabilities (tb_kmod_info.caps) */
#define TB_KMOD_CAP_TSC (1u << 0)      /* samples are TSC cycles (else ns) */
#define TB_KMOD_CAP_IRQS_OFF (1u << 1) /* TB_KMOD_FIRE_IRQS_OFF supported */
#define TB_KMOD_CAP_PAYLOAD (1u << 2)  /* payload tracepoint present */

/* FIRE flags */
#define TB_KMOD_FIRE_IRQS_OFF (1u << 0) /* also disable local interrupts per chunk */
#define TB_KMOD_FIRE_FLAGS_ALL (TB_KMOD_FIRE_IRQS_OFF)

/* The fixed event's second field: value = seq ^ TB_KMOD_FIXED_MAGIC. */
#define TB_KMOD_FIXED_MAGIC 0x7472616365626e63ull /* "tracebnc" */

/* Name of the noinline attach point (kprobe / fentry / function tracer). */
#define TB_KMOD_TARGET_SYMBOL "tracebench_kmod_target"
#define TB_KMOD_TRACE_SYSTEM "tracebench"

struct tb_kmod_event_desc {
	__u32 id;          /* enum tb_kmod_event_id */
	__u32 kind;        /* TB_KMOD_KIND_* */
	__u32 max_payload; /* bytes; 0 = no payload */
	__u32 reserved;
	char name[TB_KMOD_NAME_LEN]; /* "tracebench:tracebench_fixed", "function:tracebench_kmod_target" */
};

struct tb_kmod_info {
	__u32 abi_version;  /* out: TB_KMOD_ABI_VERSION */
	__u32 caps;         /* out: TB_KMOD_CAP_* */
	__u32 n_events;     /* out: valid entries in events[] */
	__u32 max_payload;  /* out */
	__u64 max_count;    /* out */
	__u32 max_batch;    /* out */
	__u32 max_samples;  /* out */
	__u32 tsc_khz;      /* out: 0 when unknown */
	__u32 reserved0;
	__u64 seq_next;     /* out: sequence number the next event will get */
	char target_symbol[TB_KMOD_NAME_LEN];
	char kernel_release[TB_KMOD_NAME_LEN];
	struct tb_kmod_event_desc events[TB_KMOD_MAX_EVENTS];
};

struct tb_kmod_fire {
	/* in */
	__u32 event_id;      /* enum tb_kmod_event_id */
	__u32 flags;         /* TB_KMOD_FIRE_* */
	__u64 count;         /* events to fire, 1..TB_KMOD_MAX_COUNT */
	__u32 payload_size;  /* 0..TB_KMOD_MAX_PAYLOAD (payload event and target arg) */
	__u32 batch;         /* events per sample, 1..TB_KMOD_MAX_BATCH; 0 = 1 */
	__u64 samples_ptr;   /* user pointer to __u64[samples_cap], or 0 for none */
	__u32 samples_cap;   /* must be >= ceil(count / batch) when samples_ptr != 0 */
	__u32 reserved_in;   /* must be 0 */
	/* out */
	__u32 samples_written;
	__u32 cpu;           /* CPU of the last chunk */
	__u64 fired;         /* events fired (== count unless interrupted by a fatal signal) */
	__u64 seq_first;     /* sequence number of the first event */
	__u64 loop_cycles;   /* TSC cycles inside non-preemptible chunks, summed */
	__u64 wall_ns;       /* ktime from first to last event (including reschedules) */
	__u32 tsc_khz;
	__u32 migrations;    /* chunks that ran on a different CPU than the first */
	__u64 reserved_out[4];
};

#define TB_KMOD_IOC_MAGIC 0xB6
#define TB_KMOD_IOC_INFO _IOR(TB_KMOD_IOC_MAGIC, 0x01, struct tb_kmod_info)
#define TB_KMOD_IOC_FIRE _IOWR(TB_KMOD_IOC_MAGIC, 0x02, struct tb_kmod_fire)

static inline __u8 tb_kmod_pattern_byte(__u32 i)
{
	return (__u8)tb_payload_byte(i);
}

static inline __u8 tb_kmod_expected_byte(__u64 seq, __u32 i)
{
	return i < 8 ? (__u8)(seq >> (8 * i)) : tb_kmod_pattern_byte(i);
}

#endif /* TRACEBENCH_KMOD_ABI_H */
