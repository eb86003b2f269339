// `tracebench completion bash`: a bash completion script made from the
// command line as CLI11 holds it (subcommands, their options, which options
// take a value), the tracer, workload and action names from the registries,
// and each tracer's `-o` keys and their words from its option schema;
// `tracebench completion --list` prints the subcommand paths (the man page's
// build reads them to include each subcommand's --help).
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tracebench/command.h"
#include "tracebench/options.h"
#include "tracebench/tracer.h"
#include "tracebench/workload.h"

namespace tracebench {
namespace {

struct Node {
  std::string path;                  // "model fit"; "" for the top level
  std::vector<std::string> subs;     // subcommand names
  std::vector<std::string> options;  // every option name, "-t" and "--tracer"
  std::vector<std::string> valued;   // those that take a value
  bool tracer_options = false;       // has -o/--option TRACER.KEY=VALUE
};

void walk(const CLI::App& app, const std::string& path, std::vector<Node>* out) {
  Node n{path, {}, {}, {}};
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional() || o->get_group().empty()) continue;  // (an empty group: hidden, not for users)
    std::vector<std::string> names;
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    n.options.insert(n.options.end(), names.begin(), names.end());
    if (o->get_type_size() > 0) n.valued.insert(n.valued.end(), names.begin(), names.end());
    if (o->check_lname("option")) n.tracer_options = true;
  }
  auto subs = app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); });
  for (const CLI::App* s : subs) n.subs.push_back(s->get_name());
  out->push_back(n);
  for (const CLI::App* s : subs) walk(*s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
}

std::string words(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, " ")); }

// The words a value of `spec` may be, where they are few: a choice's, a
// switch's, a number's words ("inf", "none"); none for numbers and text.
std::vector<std::string> value_words(const OptionSpec& spec) {
  if (spec.type == OptionSpec::Type::kBool) return {"on", "off"};
  if (spec.type == OptionSpec::Type::kChoice || spec.type == OptionSpec::Type::kUint) return spec.words;
  return {};
}

// Every tracer's `-o` keys ("ftrace.clock="), and the bash array entries of
// the keys whose values are words (["ftrace.clock"]="local global ...").
struct OptionKeys {
  std::vector<std::string> keys;
  std::string values;
};

OptionKeys option_keys() {
  OptionKeys k;
  for (const auto& e : tracer_registry()) {
    for (const OptionSpec& spec : e.make()->option_schema()) {
      if (!spec.refused.empty()) continue;
      const std::string key = e.name + "." + spec.name;
      k.keys.push_back(key + "=");
      if (auto w = value_words(spec); !w.empty()) k.values += fmt::format("    [\"{}\"]=\"{}\"\n", key, words(w));
    }
  }
  return k;
}

std::string bash_script(const std::vector<Node>& nodes) {
  std::set<std::string> actions;
  std::vector<std::string> tracers, workloads;
  for (const auto& e : tracer_registry()) {
    tracers.push_back(e.name);
    for (const auto& a : e.make()->actions()) actions.insert(a);
  }
  for (const auto& w : workload_registry()) workloads.push_back(w.name);
  const OptionKeys okeys = option_keys();
  std::string subs, opts, valued, with_options;
  // Keyed by the words typed so far ("tracebench model fit"): bash's
  // associative arrays take no empty key.
  for (const auto& n : nodes) {
    const std::string key = n.path.empty() ? "tracebench" : "tracebench " + n.path;
    subs += fmt::format("    [\"{}\"]=\"{}\"\n", key, words(n.subs));
    opts += fmt::format("    [\"{}\"]=\"{}\"\n", key, words(n.options));
    valued += fmt::format("    [\"{}\"]=\" {} \"\n", key, words(n.valued));
    if (n.tracer_options) with_options += fmt::format("    [\"{}\"]=1\n", key);
  }
  return fmt::format(R"(# bash completion for tracebench (made by `tracebench completion bash`:
# regenerate it after an upgrade).  Source it, or install it as
# /usr/share/bash-completion/completions/tracebench.
_tracebench() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} path=tracebench w i
  local -A subs=(
{}  )
  local -A opts=(
{}  )
  local -A valued=(
{}  )
  local -A with_options=(
{}  )
  local -A ovalues=(
{}  )
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${{COMP_WORDS[i]}}
    [ "$w" = "--" ] && return 0
    if [[ " ${{subs[$path]}} " == *" $w "* ]]; then path="$path $w"; fi
  done
  # -o TRACER.KEY=VALUE: bash splits the word at '=' (COMP_WORDBREAKS), so a
  # value is completed when the word before is '=' after -o KEY.
  if [ -n "${{with_options[$path]:-}}" ] && [ "$prev" = "=" ] && [ $COMP_CWORD -ge 3 ] && [[ "${{COMP_WORDS[COMP_CWORD-3]}}" =~ ^(-o|--option)$ ]]; then
    COMPREPLY=($(compgen -W "${{ovalues[${{COMP_WORDS[COMP_CWORD-2]}}]}}" -- "$cur"))
    return 0
  fi
  case "$prev" in
    -o|--option)
      if [ -n "${{with_options[$path]:-}}" ]; then
        COMPREPLY=($(compgen -W "{}" -- "$cur"))
        compopt -o nospace 2>/dev/null
        return 0
      fi ;;
    -t|--tracer) COMPREPLY=($(compgen -W "{}" -- "$cur")); return 0 ;;
    -w|--workload) COMPREPLY=($(compgen -W "{}" -- "$cur")); return 0 ;;
    -a|--action) COMPREPLY=($(compgen -W "{}" -- "$cur")); return 0 ;;
  esac
  if [[ "$prev" == -* && "${{valued[$path]}}" == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "${{opts[$path]}}" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "${{subs[$path]}}" -- "$cur"))
    [ ${{#COMPREPLY[@]}} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}}
complete -o filenames -F _tracebench tracebench
)",
                     subs, opts, valued, with_options, okeys.values, words(okeys.keys), words(tracers),
                     words(workloads), words(std::vector<std::string>(actions.begin(), actions.end())));
}

void install(CLI::App& app, int* exit_status) {
  auto shell = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  auto* c = app.add_subcommand("completion", "Print a shell completion script (bash; zsh via bashcompinit)");
  c->add_option("SHELL", *shell, "bash")->check(CLI::IsMember({"bash"}));
  c->add_flag("--list", *list, "Print every subcommand path, one a line (e.g. 'model fit'), instead");
  CLI::App* root = &app;
  c->callback([root, shell, list, exit_status] {
    std::vector<Node> nodes;
    walk(*root, "", &nodes);
    if (*list) {
      for (const auto& n : nodes)
        if (!n.path.empty()) std::cout << n.path << "\n";
      *exit_status = 0;
      return;
    }
    if (shell->empty()) {
      std::cerr << "tracebench completion: name the shell: `tracebench completion bash` (zsh: load bashcompinit "
                   "and source the same script)\n";
      *exit_status = 2;
      return;
    }
    std::cout << bash_script(nodes);
    *exit_status = 0;
  });
}

}  // namespace
}  // namespace tracebench

TRACEBENCH_REGISTER_COMMAND(completion, tracebench::Command{"completion", tracebench::install});
