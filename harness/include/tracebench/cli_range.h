// Range checks for the commands' numeric options (CLI11).
#pragma once

#include <cmath>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace tracebench {

// CLI::Range for a real number that also refuses NaN: every comparison with
// NaN is false, so CLI::Range lets "nan" through.
inline CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& in) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(in, v) || !std::isfinite(v) || v < lo || v > hi)
          return fmt::format("Value {} not in range {} to {}", in, lo, hi);
        return {};
      },
      fmt::format("FLOAT in [{} - {}]", lo, hi));
}

// Every real-number option of `app` and of its subcommands, whatever range
// check it was given (CLI::Range lets NaN through: every comparison with it
// is false), refuses "nan" and "inf": called once on the whole command line,
// so no option is left out by forgetting it (--wait-lock, selftest --budget).
inline void refuse_non_finite_reals(CLI::App* app) {
  const CLI::Validator finite(
      [](std::string& in) -> std::string {
        double v = 0;
        if (CLI::detail::lexical_cast(in, v) && !std::isfinite(v))
          return fmt::format("Value {} is not a finite number", in);
        return {};
      },
      "");
  for (CLI::Option* o : app->get_options())
    if (o->get_type_name().rfind("FLOAT", 0) == 0) o->check(finite);
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) refuse_non_finite_reals(sub);
}

}  // namespace tracebench
