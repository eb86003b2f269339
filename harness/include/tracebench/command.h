// Subcommands of the `tracebench` CLI register themselves, so a tracer folder
// can add its own (`tracebench dvm`, `tracebench vm`) without editing main.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tracebench/register.h"

namespace CLI {
class App;
}

namespace tracebench {

struct Command {
  std::string name;
  // Adds the subcommand to `app` and returns a pointer to an int that holds
  // the exit status after the subcommand ran; the callback runs the command.
  std::function<void(CLI::App& app, int* exit_status)> install;
};

bool register_command(Command c);
const std::vector<Command>& command_registry();

}  // namespace tracebench

#define TRACEBENCH_REGISTER_COMMAND(id, ...)                                         \
  [[maybe_unused]] static const bool TRACEBENCH_CONCAT(tb_registered_command_, id) = \
      ::tracebench::register_command(__VA_ARGS__)
