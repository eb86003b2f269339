/* Classic tracepoints (perf_event attach): syscalls/sys_enter_<name>.  The
 * event is already per-syscall, so only the process is filtered. */
#define TB_UPDATE_RET 1 /* as bpftrace's tracepoint programs (action `update`) */
#include "tb_common.bpf.h"

/* A syscalls:sys_enter_<name> record: the common fields, the syscall
 * number, then the six arguments (struct trace_event_raw_sys_enter's
 * layout).  Read only for syscall probes (tb_payload_arg >= 0).  Through
 * bpf_probe_read_kernel(): the verifier refuses a ctx load at a computed
 * offset, which is what the compiler makes of a switch over the index. */
static __always_inline int tb_probe_arg(void *ctx, int i, __u64 *out) {
  if (i < 0 || i > 5) return -1;
  struct trace_event_raw_sys_enter *e = ctx;
  return bpf_probe_read_kernel(out, sizeof(*out), &e->args[i]) == 0 ? 0 : -1;
}

TB_ACTIONS("tracepoint", tb_tp, void *ctx, ctx, tb_ours())
