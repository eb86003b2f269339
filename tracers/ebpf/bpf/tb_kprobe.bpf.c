/* kprobes on a kernel function (e.g. __x64_sys_getpid); target chosen at
 * attach time.  Needs CONFIG_KPROBES. */
#include "tb_common.bpf.h"

/* Kernel functions: no user buffer to copy here (records are generated). */
static __always_inline int tb_probe_arg(void *ctx, int i, __u64 *out) { return -1; }

TB_ACTIONS("kprobe", tb_kp, struct pt_regs *ctx, ctx, tb_ours())
