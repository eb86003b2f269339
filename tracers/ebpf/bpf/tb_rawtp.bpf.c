/* Raw tracepoints on raw_syscalls:sys_enter, untyped (raw_tp) and BTF-typed
 * (tp_btf).  They fire for every syscall, so the syscall number is filtered
 * here as well as the process. */
#include "tb_common.bpf.h"

TB_ACTIONS("raw_tp", tb_rtp, struct bpf_raw_tracepoint_args *ctx, ctx,
           ctx->args[1] == tb_sys_nr && tb_ours())

TB_BTF_ACTIONS("tp_btf/sys_enter", tb_btf, id == tb_sys_nr && tb_ours(),
               struct pt_regs *regs, long id)
