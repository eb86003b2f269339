// model.csv: one row per entry and parameter (the model reporters' "csv"
// format, model_reporters.h).
#include <fmt/format.h>

#include "tracebench/model.h"

namespace tracebench::model {

std::string to_csv(const Model& m) {
  std::string out = "tracer,probe_kind,action,options,parameter,cycles,ci_low,ci_high,n,ns,missing\n";
  const double ns = 1e9 / m.tsc_hz;
  auto row = [&](const Entry& e, const std::string& name, const Param& p) {
    std::string opts;
    for (const auto& [k, v] : e.options) opts += fmt::format("{}{}={}", opts.empty() ? "" : ";", k, v);
    for (char& ch : opts)
      if (ch == ',' || ch == '"' || ch == '\n') ch = ' ';
    std::string why = p.missing;
    for (char& ch : why)
      if (ch == ',' || ch == '"' || ch == '\n') ch = ' ';
    if (p.ok())
      out += fmt::format("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{},{:.3f},\n", e.tracer, e.probe_kind, e.action, opts,
                         name, *p.cycles, p.ci_low, p.ci_high, p.n, *p.cycles * ns);
    else
      out += fmt::format("{},{},{},{},{},,,,,,{}\n", e.tracer, e.probe_kind, e.action, opts, name, why);
  };
  for (const auto& e : m.entries) {
    for (const auto& [name, p] : named_params(e)) row(e, name, *p);
  }
  return out;
}

}  // namespace tracebench::model
