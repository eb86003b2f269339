// The D-VM's Tracer adapter, in either home: this process (tracer "dvm",
// registered in dvm_tracer.cc) or the tracebench module (tracer
// "dvm_kernel", registered in tracers/dvm_kernel).
#pragma once

#include <memory>

#include "tracebench/tracer.h"

namespace tracebench {

std::unique_ptr<Tracer> make_dvm_tracer(bool kernel_home);

}  // namespace tracebench
