#include "tracebench/suggest.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace tracebench {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
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

}  // namespace tracebench
