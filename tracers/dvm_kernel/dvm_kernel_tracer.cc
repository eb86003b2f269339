// Tracer "dvm_kernel": the in-tree D-VM in the tracebench module (its kernel
// home, kmod/dvm), on the kernel's probes.  The adapter is the dvm one
// (tracers/dvm/dvm_tracer.cc) with Options::kernel set: the same actions and
// options, the D program compiled here and enabled in the module; a syscall
// workload's entry is syscall::<name>:entry, the module's tracepoints
// sdt:tracebench::<event>, its target function fbt:tracebench:<function>:entry,
// a function of this binary (workload call, site_*) pid<this process>:a.out:<function>:entry,
// a USDT site of this binary (workload usdt) <provider><this process>:a.out::<name>;
// every counting clause is behind /pid == <this process>/.  Needs the module:
// `tracebench vm`.
#include "tracers/dvm/dvm_tracer.h"

namespace tracebench {

TRACEBENCH_REGISTER_TRACER(dvm_kernel, [] { return make_dvm_tracer(true, dvm_kernel_model()); });

}  // namespace tracebench
