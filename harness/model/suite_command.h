// `tracebench model suite`'s subcommand, installed under `tracebench model`.
#pragma once

#include <CLI/CLI.hpp>

namespace tracebench::model {
void install_suite(CLI::App* model, int* exit_status);
}  // namespace tracebench::model
