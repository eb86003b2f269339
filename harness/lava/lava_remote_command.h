// The server side of `tracebench lava`: submit, wait and fetch, added to the
// `lava` subcommand by the file that registers it (lava_command.cc).
#pragma once

namespace CLI {
class App;
}

namespace tracebench::lava {

// Adds `submit`, `wait` and `fetch` to `lava`; each sets *exit_status.
void install_remote_commands(CLI::App* lava, int* exit_status);

}  // namespace tracebench::lava
