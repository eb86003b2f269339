#pragma once

namespace tracebench {

// Parses argv and runs the chosen subcommand; returns the exit status.
int cli_main(int argc, char** argv);

}  // namespace tracebench
