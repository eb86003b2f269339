/* Classic tracepoints (perf_event attach): syscalls/sys_enter_<name>.  The
 * event is already per-syscall, so only the process is filtered. */
#define TB_UPDATE_RET 1 /* as bpftrace's tracepoint programs (action `update`) */
#include "tb_common.bpf.h"

TB_ACTIONS("tracepoint", tb_tp, void *ctx, ctx, tb_ours())
