#include "tracebench/env_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace tracebench {
namespace {

using nlohmann::json;

// A reason as a person reads it: the library log a probe appends in
// brackets (" [libbpf: ...]") is for --json and bug reports.
std::string short_reason(const std::string& r) {
  const auto cut = r.find(" [libbpf:");
  return cut == std::string::npos ? r : r.substr(0, cut);
}

std::string scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.dump();
}

// {"fentry": {"ok": false, "reason": ...}, "raw_tp": {"ok": true}}: a
// feature map, as what works and what does not (with why).
bool is_feature_map(const json& v) {
  if (!v.is_object() || v.empty()) return false;
  for (const auto& [k, x] : v.items())
    if (!x.is_object() || !x.contains("ok") || !x["ok"].is_boolean()) return false;
  return true;
}

std::vector<std::string> detail_lines(const std::string& key, const json& v) {
  std::vector<std::string> out;
  if (is_feature_map(v)) {
    std::vector<std::string> yes;
    for (const auto& [k, x] : v.items())
      if (x["ok"].get<bool>()) yes.push_back(k);
    std::string name = key;
    std::replace(name.begin(), name.end(), '_', ' ');
    out.push_back(
        fmt::format("{} that work: {}", name, yes.empty() ? "none" : fmt::format("{}", fmt::join(yes, ", "))));
    for (const auto& [k, x] : v.items())
      if (!x["ok"].get<bool>())
        out.push_back(
            fmt::format("  {} does not: {}", k, x.contains("reason") ? short_reason(scalar(x["reason"])) : "—"));
    return out;
  }
  if (v.is_object()) {
    std::vector<std::string> kv;
    for (const auto& [k, x] : v.items()) kv.push_back(fmt::format("{} {}", k, scalar(x)));
    out.push_back(fmt::format("{}: {}", key, fmt::join(kv, ", ")));
    return out;
  }
  if (v.is_array()) {
    std::vector<std::string> items;
    for (const auto& x : v) items.push_back(scalar(x));
    out.push_back(fmt::format("{}: {}", key, fmt::join(items, ", ")));
    return out;
  }
  out.push_back(fmt::format("{}: {}", key, scalar(v)));
  return out;
}

}  // namespace

std::string tracers_table(const json& tracers) {
  constexpr const char* kIndent = "                           ";  // under the third column
  std::string out = fmt::format("{:<12} {:<12} {}\n", "tracer", "status", "what it can do here, versions");
  for (const auto& t : tracers) {
    const bool ok = t.value("available", false);
    std::vector<std::string> lines;
    if (!ok) lines.push_back(short_reason(t.value("reason", std::string("unavailable"))));
    if (t.contains("details") && t["details"].is_object()) {
      // Scalars (an adapter's settings) on one line, maps on their own.
      std::vector<std::string> settings;
      for (const auto& [k, v] : t["details"].items()) {
        if (v.is_object() || v.is_array()) {
          for (auto& l : detail_lines(k, v)) lines.push_back(std::move(l));
        } else {
          settings.push_back(fmt::format("{} {}", k, scalar(v)));
        }
      }
      if (!settings.empty()) lines.push_back(fmt::format("settings: {}", fmt::join(settings, ", ")));
    }
    if (t.contains("versions") && t["versions"].is_object() && !t["versions"].empty()) {
      std::vector<std::string> vs;
      for (const auto& [k, v] : t["versions"].items()) vs.push_back(fmt::format("{} {}", k, scalar(v)));
      lines.push_back(fmt::format("versions: {}", fmt::join(vs, ", ")));
    }
    if (lines.empty()) lines.push_back("—");
    out += fmt::format("{:<13} {:<12} {}\n", t.value("name", std::string("?")), ok ? "available" : "unavailable",
                       lines.front());
    for (std::size_t i = 1; i < lines.size(); ++i) out += kIndent + lines[i] + "\n";
  }
  out += "(everything, with the libraries' own messages: tracebench env --json)\n";
  return out;
}

}  // namespace tracebench
