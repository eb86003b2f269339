// The built-in commands that cli_dispatch() declares itself, in a fixed
// order on the command line (list, env, compare; run and cleanup are in
// cli.cc): one file each, declared here for cli.cc only.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tracebench::builtin {

// `tracebench list [--json] [--options [tracer...] [--markdown]]` (list_command.cc).
struct ListArgs {
  bool json = false, options = false, markdown = false;
  std::vector<std::string> tracers;
};

CLI::App* add_list_command(CLI::App& app, ListArgs* la);
int cmd_list_parsed(const ListArgs& la);

// `tracebench env [--json]` (env_command.cc).
int cmd_env(bool as_json);

// `tracebench compare A B` (compare_command.cc).
struct CompareArgs {
  std::string a, b;
  double threshold = 0.05, alpha = 0.05;
  bool json = false, fail_on_regression = false, fail_on_inconclusive = false, sequential = false;
  std::string junit;  // a file for the JUnit XML
};

CLI::App* add_compare_command(CLI::App& app, CompareArgs* ca);
int cmd_compare(const CompareArgs& c);

}  // namespace tracebench::builtin
