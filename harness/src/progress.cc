#include "tracebench/progress.h"

#include <cmath>

#include <fmt/format.h>

namespace tracebench {

std::optional<double> time_left_s(double elapsed_s, std::size_t done, std::size_t total) {
  if (done == 0 || done > total || !(elapsed_s >= 0) || !std::isfinite(elapsed_s)) return std::nullopt;
  return elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
}

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string progress_line(std::size_t index, std::size_t total, double elapsed_s, std::optional<double> left_s,
                          const std::string& name) {
  if (!left_s) return fmt::format("[{}/{} {} elapsed] {}", index, total, clock_text(elapsed_s), name);
  return fmt::format("[{}/{} {} elapsed, ~{} left] {}", index, total, clock_text(elapsed_s), clock_text(*left_s), name);
}

}  // namespace tracebench
