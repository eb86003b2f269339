// The D subset compiler: `probe-descriptions /predicate/ { statements }`
// compiled to D-VM DIF.  Errors name the line and column.
#pragma once

#include <map>
#include <memory>
#include <cstdint>
#include <string>
#include <vector>

#include "tracers/dvm/program.h"

namespace tbdvm {

struct CompileResult {
  std::shared_ptr<CompiledProgram> program;  // null on error
  std::string error;                         // "line L, column C: message"
  int line = 0, column = 0;
  // `#pragma D option name=value` lines, in order.
  std::map<std::string, std::string> options;
};

// dtrace's macro variables.  $0..$N are the macro arguments ($0 the script's
// name): an integer argument is an integer constant, an identifier an
// identifier, and $$N is the argument as a string.  $target is the -c/-p
// process; $pid, $ppid, $uid, $gid, $euid, $egid, $pgid, $sid are the
// compiling process's.  A description (`syscall::$1:entry`) takes them as text.
struct CompileOptions {
  std::vector<std::string> args;  // [0] = $0; empty = no macro arguments at all
  int64_t target = -1;            // -1: no -c/-p process ($target is an error)
};

CompileResult compile_d(const std::string& source);
CompileResult compile_d(const std::string& source, const CompileOptions& options);

}  // namespace tbdvm
