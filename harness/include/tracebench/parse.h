// Small parsers shared by the tracer adapters' option handling.
#pragma once

#include <cstddef>
#include <string>

namespace tracebench {

// x86-64 syscall number of a syscall the workloads use, or -1.
long syscall_number(const std::string& name);

// A plain decimal size ("4096"); false on anything else.
bool parse_size(const std::string& s, std::size_t* out);

}  // namespace tracebench
