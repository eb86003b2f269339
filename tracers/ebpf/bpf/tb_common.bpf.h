/* Maps, load-time constants and the per-event actions every program family
 * shares.  Each x.bpf.c includes this once and stamps out one program per
 * action with TB_ACTIONS(); the adapter loads exactly one of them. */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tb_shared.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set in .rodata before load, so the verifier sees them as constants. */
const volatile __u32 tb_tgid = 0;          /* only events of this process */
const volatile __s64 tb_sys_nr = -1;       /* raw_tp/tp_btf: syscall number */
const volatile __u32 tb_record_bytes = 64; /* ringbuf/perfbuf record size */
const volatile __u64 tb_wakeup_flags = 0;  /* bpf_ringbuf_submit() flags */
const volatile __u32 tb_hash_shared = 0;   /* 1: BPF_MAP_TYPE_HASH, 0: PERCPU_HASH */

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} tb_count SEC(".maps");

/* Events the program saw but could not record (ring full, hash full). */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} tb_drops SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, 10240);
  __type(key, __u32);
  __type(value, __u64);
} tb_hash_pc SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 10240);
  __type(key, __u32);
  __type(value, __u64);
} tb_hash_sh SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096); /* resized by the adapter before load */
} tb_rb SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, sizeof(__u32));
} tb_pb SEC(".maps");

struct tb_scratch {
  __u64 w[TB_MAX_RECORD_WORDS];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct tb_scratch);
} tb_scratch SEC(".maps");

static __always_inline int tb_ours(void) {
  return (bpf_get_current_pid_tgid() >> 32) == tb_tgid;
}

static __always_inline void tb_bump(void *map) {
  __u32 k = 0;
  __u64 *v = bpf_map_lookup_elem(map, &k);
  if (v) *v += 1;
}

static __always_inline int tb_do_count(void) {
  tb_bump(&tb_count);
  return 0;
}

/* @ = count() as bpftrace (0.17) compiles it: look the counter up, add one
 * and store it back through the bpf_map_update_elem() helper (the `count`
 * action increments in place, without the helper call).  The programs of
 * this action return what bpftrace's return: 1 for tracepoints (the kernel
 * then also takes the perf event's sample path; tb_tp.bpf.c sets
 * TB_UPDATE_RET), 0 elsewhere (kprobe/uprobe; BTF-typed programs must). */
#ifndef TB_UPDATE_RET
#define TB_UPDATE_RET 0
#endif
static __always_inline void tb_do_update(void) {
  __u32 k = 0;
  __u64 v = 1, *p = bpf_map_lookup_elem(&tb_count, &k);
  if (p) v = *p + 1;
  bpf_map_update_elem(&tb_count, &k, &v, BPF_ANY);
}

/* @[tid] = count() */
static __always_inline int tb_do_hash(void) {
  __u32 tid = (__u32)bpf_get_current_pid_tgid();
  __u64 one = 1, *v;
  if (tb_hash_shared) {
    v = bpf_map_lookup_elem(&tb_hash_sh, &tid);
    if (v) {
      __sync_fetch_and_add(v, 1);
      return 0;
    }
    if (bpf_map_update_elem(&tb_hash_sh, &tid, &one, BPF_NOEXIST) == 0) return 0;
    v = bpf_map_lookup_elem(&tb_hash_sh, &tid); /* lost a race with another CPU */
    if (v) {
      __sync_fetch_and_add(v, 1);
      return 0;
    }
  } else {
    v = bpf_map_lookup_elem(&tb_hash_pc, &tid);
    if (v) {
      *v += 1;
      return 0;
    }
    if (bpf_map_update_elem(&tb_hash_pc, &tid, &one, BPF_NOEXIST) == 0) return 0;
    v = bpf_map_lookup_elem(&tb_hash_pc, &tid);
    if (v) {
      *v += 1;
      return 0;
    }
  }
  tb_bump(&tb_drops); /* map full */
  return 0;
}

static __always_inline void tb_fill(__u64 *w, __u32 tid, __u32 nwords) {
  w[0] = ((__u64)tid << 32) | (nwords * 8);
  for (__u32 i = 1; i < TB_MAX_RECORD_WORDS; i++) {
    if (i >= nwords) break;
    w[i] = ((__u64)tid * TB_PATTERN_MUL) ^ i;
  }
}

static __always_inline int tb_do_ringbuf(void) {
  __u64 *w = bpf_ringbuf_reserve(&tb_rb, tb_record_bytes, 0);
  if (!w) {
    tb_bump(&tb_drops);
    return 0;
  }
  tb_fill(w, (__u32)bpf_get_current_pid_tgid(), tb_record_bytes / 8);
  bpf_ringbuf_submit(w, tb_wakeup_flags);
  return 0;
}

static __always_inline int tb_do_perfbuf(void *ctx) {
  __u32 k = 0;
  struct tb_scratch *s = bpf_map_lookup_elem(&tb_scratch, &k);
  if (!s) return 0;
  __u32 n = tb_record_bytes;
  if (n > sizeof(s->w)) n = sizeof(s->w);
  tb_fill(s->w, (__u32)bpf_get_current_pid_tgid(), n / 8);
  if (bpf_perf_event_output(ctx, &tb_pb, BPF_F_CURRENT_CPU, s->w, n) < 0) tb_bump(&tb_drops);
  return 0;
}

/* One program per action.  `empty` is the bare dispatch cost: no filter,
 * nothing recorded (the adapter counts its runs from the kernel's stats). */
#define TB_ACTIONS(sec, prefix, ctx_decl, ctx, keep)                              \
  SEC(sec) int prefix##_empty(ctx_decl) { return 0; }                            \
  SEC(sec) int prefix##_count(ctx_decl) { return (keep) ? tb_do_count() : 0; }   \
  SEC(sec) int prefix##_hash(ctx_decl) { return (keep) ? tb_do_hash() : 0; }     \
  SEC(sec) int prefix##_update(ctx_decl) {                                        \
    if (keep) tb_do_update();                                                     \
    return TB_UPDATE_RET;                                                         \
  }                                                                               \
  SEC(sec) int prefix##_ringbuf(ctx_decl) { return (keep) ? tb_do_ringbuf() : 0; } \
  SEC(sec) int prefix##_perfbuf(ctx_decl) { return (keep) ? tb_do_perfbuf(ctx) : 0; }

/* Same for BTF-typed programs (tp_btf, fentry, fexit), whose arguments come
 * through BPF_PROG; `keep` may use the named arguments. */
#define TB_BTF_ACTIONS(sec, prefix, keep, ...)                                         \
  SEC(sec) int BPF_PROG(prefix##_empty, ##__VA_ARGS__) { return 0; }                  \
  SEC(sec) int BPF_PROG(prefix##_count, ##__VA_ARGS__) { return (keep) ? tb_do_count() : 0; } \
  SEC(sec) int BPF_PROG(prefix##_hash, ##__VA_ARGS__) { return (keep) ? tb_do_hash() : 0; }   \
  SEC(sec) int BPF_PROG(prefix##_update, ##__VA_ARGS__) {                                     \
    if (keep) tb_do_update();                                                                 \
    return 0; /* BTF-typed programs must return 0 */                                          \
  }                                                                                           \
  SEC(sec) int BPF_PROG(prefix##_ringbuf, ##__VA_ARGS__) { return (keep) ? tb_do_ringbuf() : 0; } \
  SEC(sec) int BPF_PROG(prefix##_perfbuf, ##__VA_ARGS__) { return (keep) ? tb_do_perfbuf(ctx) : 0; }
