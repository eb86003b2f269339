// The handler-count sweep's two options, declared once for every tracer that
// takes them: `ecbs`, the handlers the tracer puts on the probe point, and
// `extra_predicate`, whether the extra handlers' filter holds (they record
// every event) or never holds (each evaluates it and records nothing).
// `tracebench model suite` asks for them by these names, and `model fit`
// reads back what a run enabled from the tracer's details() under the same
// names, to fit the cost of one more handler.  Each tracer's help says what a
// handler is for it (an instance, a program, a perf event, a channel, a
// clause).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tracebench/options.h"

namespace tracebench {

inline constexpr const char* kEcbsOption = "ecbs";
inline constexpr const char* kExtraPredicateOption = "extra_predicate";

// `ecbs`: 1..max handlers; 1 by default, or, with `default_help`, a default
// the tracer computes and says.
inline OptionSpec ecbs_option(std::string help, std::uint64_t max, std::string default_help = {}) {
  OptionSpec o{.name = kEcbsOption, .type = OptionSpec::Type::kUint, .help = std::move(help), .min = 1, .max = max};
  if (default_help.empty())
    o.default_value = "1";
  else
    o.default_help = std::move(default_help);
  return o;
}

// `extra_predicate`: true (the default) or false.
inline OptionSpec extra_predicate_option(std::string help) {
  return {.name = kExtraPredicateOption,
          .type = OptionSpec::Type::kChoice,
          .help = std::move(help),
          .default_value = "true",
          .words = {"true", "false"}};
}

// Whether a tracer's schema has the sweep.
inline bool has_handler_count(const OptionSchema& schema) {
  return std::any_of(schema.begin(), schema.end(), [](const OptionSpec& o) { return o.name == kEcbsOption; });
}

// What a run enabled, in its details(): `ecbs` always, `extra_predicate`
// where there are extra handlers.
inline void put_handler_count(nlohmann::json* details, std::uint64_t handlers, bool extra_holds) {
  (*details)[kEcbsOption] = handlers;
  if (handlers > 1) (*details)[kExtraPredicateOption] = extra_holds ? "true" : "false";
}

}  // namespace tracebench
