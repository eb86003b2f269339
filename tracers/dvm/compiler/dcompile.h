// The D subset compiler: `probe-descriptions /predicate/ { statements }`
// compiled to D-VM DIF.  Errors name the line and column.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "tracers/dvm/program.h"

namespace tbdvm {

struct CompileResult {
  std::shared_ptr<CompiledProgram> program;  // null on error
  std::string error;  // "line L, column C: message"
  int line = 0, column = 0;
  // `#pragma D option name=value` lines, in order.
  std::map<std::string, std::string> options;
};

CompileResult compile_d(const std::string& source);

}  // namespace tbdvm
