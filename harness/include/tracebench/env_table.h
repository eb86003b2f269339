// `tracebench env`'s tracer table: one row per tracer (available or the
// reason not), what it can and cannot do here, and the versions it uses.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tracebench {

// `tracers` is env --json's "tracers" array; the text keeps every fact of
// it but the libraries' own log lines (those stay in --json).
std::string tracers_table(const nlohmann::json& tracers);

}  // namespace tracebench
