/* Profile probes: a perf event's overflow runs the program, as bpftrace's
 * profile:hz:N does; the adapter opens a software cpu-clock event on the
 * firing thread with a fixed sampling period. */
#include "tb_common.bpf.h"

/* A timer's sample: no user buffer to copy here (records are generated). */
static __always_inline int tb_probe_arg(void *ctx, int i, __u64 *out) { return -1; }

TB_ACTIONS("perf_event", tb_pe, struct bpf_perf_event_data *ctx, ctx, tb_ours())
