// Where the reference side runs: the measured CPU (the loop's), the CPUs the
// tools run on, the command's scratch directory, the loop programs.
#pragma once

#include <string>
#include <vector>

#include "tracebench/status.h"
#include "tracebench/system.h"  // online_cpus()

namespace tracebench::crosscheck {

struct Env {
  int cpu = -1;             // the measured CPU: the loop programs are pinned there
  std::vector<int> others;  // the tools' CPUs: every online CPU but `cpu` (all of them on one CPU)
  std::string work;         // scratch files (traces, FIFOs, stderr), removed at exit
  std::string loop_dir;     // the loop programs' directory ("" when not found)
  std::string program(const std::string& name) const { return loop_dir + "/" + name; }
};

// The CPUs the tools get when the loop is on `cpu`.
std::vector<int> cpus_besides(int cpu);
// The directory holding the loop programs: beside this executable (the
// build tree's bench/), else its ../libexec/tracebench (an installed one);
// "" when neither holds tracebench-crosscheck-loop.
std::string find_loop_dir();
// The default measured CPU: the last online one, as `run`'s.
int last_online_cpu();

}  // namespace tracebench::crosscheck
