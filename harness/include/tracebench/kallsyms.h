// Kernel symbols from /proc/kallsyms, for the adapters that probe kernel
// functions (kprobes, LTTng's kernel domain).
#pragma once

#include <cstdint>
#include <string>

#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench {

// True when /proc/kallsyms lists `symbol` (the kernel's or a module's).
// *address is its address, 0 when kptr_restrict hides addresses.
bool kallsyms_lookup(const std::string& symbol, std::uint64_t* address = nullptr);

// The kernel function a probe point maps to: a kKernelFunction's target, or a
// kSyscall's entry function ("__x64_sys_getpid" for syscall:getpid).  An
// error names what is missing from /proc/kallsyms.
Status kernel_function_for(const ProbePoint& probe, std::string* symbol);

}  // namespace tracebench
