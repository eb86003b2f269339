// `tracebench lava`: one registration; the subcommands come from the files
// that own them (lava_remote_command.h: submit, wait, fetch).
#include <CLI/CLI.hpp>

#include "lava_remote_command.h"
#include "tracebench/command.h"

namespace tracebench {
namespace {

void install(CLI::App& app, int* exit_status) {
  auto* lava = app.add_subcommand("lava", "tracebench on a LAVA server: submit jobs, wait for them, fetch their runs");
  lava->require_subcommand(1);
  lava::install_remote_commands(lava, exit_status);
}

}  // namespace

TRACEBENCH_REGISTER_COMMAND(lava, Command{"lava", install});

}  // namespace tracebench
