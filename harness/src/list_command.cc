// `tracebench list`: the tracers and workloads this build has (with the
// probe point each fires), and the tracers' option schemas (--options).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "builtin_commands.h"
#include "tracebench/options.h"
#include "tracebench/tracer.h"
#include "tracebench/workload.h"
#include "tracebench/suggest.h"

namespace tracebench::builtin {
namespace {

using nlohmann::json;

json schema_json(const OptionSchema& schema) {
  static const char* const kType[] = {"uint", "bool", "choice", "text"};
  json a = json::array();
  for (const auto& o : schema) {
    json e = {
        {"name", o.name}, {"type", kType[static_cast<int>(o.type)]}, {"values", describe_values(o)}, {"help", o.help}};
    e["default"] = o.default_value ? json(*o.default_value) : json(nullptr);
    if (!o.default_help.empty()) e["default_help"] = o.default_help;
    a.push_back(e);
  }
  return a;
}

// `tracebench list --options [tracer...] [--markdown]`: the tracers' option
// schemas, as text or as the Markdown table of their READMEs.
int cmd_list_options(const std::vector<std::string>& names, bool markdown) {
  for (const auto& n : names) {
    bool known = false;
    for (const auto& e : tracer_registry()) known |= e.name == n;
    if (!known) {
      std::cerr << "tracebench list: " << unknown_tracer_message(n) << "\n";
      return 2;
    }
  }
  if (markdown && names.size() != 1) {
    std::cerr << "tracebench list --options --markdown: name one tracer\n";
    return 2;
  }
  for (const auto& e : tracer_registry()) {
    if (!names.empty() && std::find(names.begin(), names.end(), e.name) == names.end()) continue;
    auto t = e.make();
    std::cout << (markdown ? options_markdown(t->option_schema()) : options_text(e.name, t->option_schema()));
  }
  return 0;
}

int cmd_list(bool as_json) {
  json j;
  j["tracers"] = json::array();
  for (const auto& e : tracer_registry()) {
    auto t = e.make();
    j["tracers"].push_back({{"name", e.name},
                            {"description", t->description()},
                            {"actions", t->actions()},
                            {"options", schema_json(t->option_schema())}});
  }
  j["workloads"] = json::array();
  for (const auto& w : workload_registry()) {
    j["workloads"].push_back({{"name", w.name},
                              {"family", w.family},
                              {"description", w.description},
                              {"probe", w.probe.name},
                              {"probe_kind", std::string(to_string(w.probe.kind))},
                              {"takes_payload", w.takes_payload},
                              {"only_when_named", w.only_when_named}});
  }
  if (as_json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "Tracers:\n";
  for (const auto& t : j["tracers"]) {
    std::cout << fmt::format("  {:<13} {} (actions: {})\n", t["name"].get<std::string>(),
                             t["description"].get<std::string>(),
                             fmt::join(t["actions"].get<std::vector<std::string>>(), ", "));
  }
  std::cout << "\nWorkloads (probe point each fires):\n";
  for (const auto& w : j["workloads"]) {
    std::cout << fmt::format("  {:<12} {:<24} {}{}{}\n", w["name"].get<std::string>(), w["probe"].get<std::string>(),
                             w["description"].get<std::string>(), w["takes_payload"].get<bool>() ? " [payload]" : "",
                             w["only_when_named"].get<bool>() ? " [only with -w]" : "");
  }
  return 0;
}

}  // namespace

CLI::App* add_list_command(CLI::App& app, ListArgs* la) {
  auto* list = app.add_subcommand("list", "List tracers and workloads (with the probe point each fires)");
  list->add_flag("--json", la->json, "Print JSON");
  list->add_flag("--options", la->options, "Print the tracers' --option keys (type, range, default, meaning)");
  list->add_flag("--markdown", la->markdown, "With --options and one tracer: the Markdown table of its README");
  list->add_option("tracer", la->tracers, "With --options: only these tracers");
  return list;
}

int cmd_list_parsed(const ListArgs& la) {
  if (la.options || la.markdown || !la.tracers.empty()) {
    if (!la.options || la.json) {
      std::cerr << "tracebench list: a tracer name and --markdown go with --options (and --json does not)\n";
      return 2;
    }
    return cmd_list_options(la.tracers, la.markdown);
  }
  return cmd_list(la.json);
}

}  // namespace tracebench::builtin
