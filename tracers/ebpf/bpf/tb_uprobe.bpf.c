/* User-space probes: uprobe/uretprobe on a function of the traced binary and
 * USDT (sys/sdt.h) sites.  Targets are chosen at attach time. */
#include "tb_common.bpf.h"
#include <bpf/usdt.bpf.h> /* maps libbpf's USDT attach needs */

/* A uprobe at a function's entry: its arguments are in the user registers
 * (the adapter copies only at uprobes, not at returns or USDT sites), read
 * with bpf_probe_read_kernel() from the saved registers: the verifier
 * refuses a ctx load at a computed offset, which is what the compiler makes
 * of a switch over the index. */
static __always_inline int tb_probe_arg(void *ctx, int i, __u64 *out) {
  struct pt_regs *regs = ctx;
  const void *p;
  switch (i) {
    case 0: p = &__PT_REGS_CAST(regs)->__PT_PARM1_REG; break;
    case 1: p = &__PT_REGS_CAST(regs)->__PT_PARM2_REG; break;
    case 2: p = &__PT_REGS_CAST(regs)->__PT_PARM3_REG; break;
    case 3: p = &__PT_REGS_CAST(regs)->__PT_PARM4_REG; break;
    case 4: p = &__PT_REGS_CAST(regs)->__PT_PARM5_REG; break;
    default: return -1;
  }
  return bpf_probe_read_kernel(out, sizeof(*out), p) == 0 ? 0 : -1;
}

TB_ACTIONS("uprobe", tb_up, struct pt_regs *ctx, ctx, tb_ours())
TB_ACTIONS("uretprobe", tb_urp, struct pt_regs *ctx, ctx, tb_ours())
TB_ACTIONS("usdt", tb_usdt, struct pt_regs *ctx, ctx, tb_ours())
