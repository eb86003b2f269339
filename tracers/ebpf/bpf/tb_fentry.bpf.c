/* BPF trampolines on a kernel function; the target (e.g. __do_sys_getpid) is
 * set with bpf_program__set_attach_target() before load. */
#include "tb_common.bpf.h"

/* Kernel functions: no user buffer to copy here (records are generated). */
static __always_inline int tb_probe_arg(void *ctx, int i, __u64 *out) { return -1; }

TB_BTF_ACTIONS("fentry", tb_fen, tb_ours())
TB_BTF_ACTIONS("fexit", tb_fex, tb_ours())
