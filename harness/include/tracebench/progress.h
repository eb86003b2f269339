// The run's progress line: `[n/N]`, the time elapsed, and an estimate of the
// time left from what the finished benchmarks took.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace tracebench {

// Seconds left for `total - done` benchmarks when `done` took `elapsed_s`:
// their mean time per benchmark times those left; none before the first one
// finished (nothing measured to go on).
std::optional<double> time_left_s(double elapsed_s, std::size_t done, std::size_t total);

// "1:05", "12:00", "1:02:03".
std::string clock_text(double seconds);

// "[3/12 0:42 elapsed, ~2:10 left] name" (no estimate: "[1/12 0:00 elapsed] name").
std::string progress_line(std::size_t index, std::size_t total, double elapsed_s, std::optional<double> left_s,
                          const std::string& name);

}  // namespace tracebench
