// Starting stap and staprun/stapbpf: one posix_spawn set-up for the adapter.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench::systemtap {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH unless it names a path
  std::string stdout_path;        // created or truncated
  std::string stderr_path;        // empty: stderr goes where stdout goes
  std::string cwd;                // empty: this process's
  // Its own process group and every signal at its default, unblocked: for a
  // child that must get SIGTERM with its own handler (stapio: end probe,
  // unload) while the harness blocks and catches signals for its teardown,
  // and that a Ctrl-C of the terminal must not reach before tracebench.
  bool own_group_default_signals = false;
};

// Starts the child (stdin /dev/null); its pid in *pid.
Status spawn(const SpawnSpec& s, pid_t* pid);

}  // namespace tracebench::systemtap
