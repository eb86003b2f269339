/* kprobes on a kernel function (e.g. __x64_sys_getpid); target chosen at
 * attach time.  Needs CONFIG_KPROBES. */
#include "tb_common.bpf.h"

TB_ACTIONS("kprobe", tb_kp, struct pt_regs *ctx, ctx, tb_ours())
