// The D-VM's Tracer adapter, in either home: this process (tracer "dvm",
// registered in dvm_tracer.cc) or the tracebench module (tracer
// "dvm_kernel", registered in tracers/dvm_kernel).
#pragma once

#include <memory>
#include <set>
#include <string>

#include "tracebench/tracer.h"

namespace tracebench {

// `model`: what the cost model needs to know of the tracer in this home
// (Tracer::model()): dvm_model() here (model.cc), dvm_kernel_model() in
// tracers/dvm_kernel.
std::unique_ptr<Tracer> make_dvm_tracer(bool kernel_home, ModelDescription model);
ModelDescription dvm_model();
ModelDescription dvm_kernel_model();
// What both homes' consumers share: the options that set how often it
// passes (its timer), and the runs that vary them, in words.
std::set<std::string> dvm_wakeup_knobs();
std::string dvm_wakeup_hint(const std::string& tracer);

}  // namespace tracebench
