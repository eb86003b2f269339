/* User-space probes: uprobe/uretprobe on a function of the traced binary and
 * USDT (sys/sdt.h) sites.  Targets are chosen at attach time. */
#include "tb_common.bpf.h"
#include <bpf/usdt.bpf.h> /* maps libbpf's USDT attach needs */

TB_ACTIONS("uprobe", tb_up, struct pt_regs *ctx, ctx, tb_ours())
TB_ACTIONS("uretprobe", tb_urp, struct pt_regs *ctx, ctx, tb_ours())
TB_ACTIONS("usdt", tb_usdt, struct pt_regs *ctx, ctx, tb_ours())
