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

}  // namespace tracebench
