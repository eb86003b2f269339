#include "tracebench/suggest.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tracebench/tracer.h"
#include "tracebench/workload.h"

namespace tracebench {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Three rows of the table: the one before last, the last, this one.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

std::vector<std::string> closest_names(const std::string& wrong, const std::vector<std::string>& known,
                                       std::size_t max) {
  // (rank, distance, name): rank 0 for a name containing the typed one (or
  // contained in it), 1 for a near spelling.
  std::vector<std::tuple<int, std::size_t, std::string>> near;
  for (const auto& k : known) {
    const std::size_t d = edit_distance(wrong, k);
    const bool contains = !wrong.empty() && (k.find(wrong) != std::string::npos || wrong.find(k) != std::string::npos);
    if (contains)
      near.emplace_back(0, d, k);
    else if (3 * d <= std::max(wrong.size(), k.size()))
      near.emplace_back(1, d, k);
  }
  std::sort(near.begin(), near.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < near.size() && i < max; ++i) out.push_back(std::get<2>(near[i]));
  return out;
}

std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& known) {
  const std::vector<std::string> near = closest_names(wrong, known);
  return near.empty() ? std::string() : fmt::format("; did you mean: {}?", fmt::join(near, ", "));
}

std::string unknown_tracer_message(const std::string& name) {
  std::vector<std::string> known;
  for (const auto& t : tracer_registry()) known.push_back(t.name);
  return fmt::format("unknown tracer '{}'{} (see `tracebench list`)", name, did_you_mean(name, known));
}

std::string unknown_workload_message(const std::string& name) {
  std::vector<std::string> known;
  for (const auto& w : workload_registry()) known.push_back(w.name);
  return fmt::format("unknown workload '{}'{} (see `tracebench list`)", name, did_you_mean(name, known));
}

}  // namespace tracebench
