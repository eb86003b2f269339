/* Raw tracepoints on raw_syscalls:sys_enter, untyped (raw_tp) and BTF-typed
 * (tp_btf).  They fire for every syscall, so the syscall number is filtered
 * here as well as the process. */
#include "tb_common.bpf.h"

/* raw_syscalls:sys_enter(regs, id), untyped and BTF-typed alike: the
 * syscall's arguments are in the user registers `regs` points to. */
static __always_inline int tb_probe_arg(void *ctx, int i, __u64 *out) {
  struct pt_regs *regs = (struct pt_regs *)((__u64 *)ctx)[0];
  switch (i) {
    case 0: *out = PT_REGS_PARM1_CORE_SYSCALL(regs); return 0;
    case 1: *out = PT_REGS_PARM2_CORE_SYSCALL(regs); return 0;
    case 2: *out = PT_REGS_PARM3_CORE_SYSCALL(regs); return 0;
    case 3: *out = PT_REGS_PARM4_CORE_SYSCALL(regs); return 0;
    case 4: *out = PT_REGS_PARM5_CORE_SYSCALL(regs); return 0;
  }
  return -1;
}

TB_ACTIONS("raw_tp", tb_rtp, struct bpf_raw_tracepoint_args *ctx, ctx, ctx->args[1] == tb_sys_nr && tb_ours())

TB_BTF_ACTIONS("tp_btf/sys_enter", tb_btf, id == tb_sys_nr && tb_ours(), struct pt_regs *regs, long id)
