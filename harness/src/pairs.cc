#include "tracebench/pairs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "tracebench/power.h"

namespace tracebench {

Status paired_result_files(const std::string& dir, std::vector<std::string>* files, std::vector<std::string>* pair_ids,
                           bool* paired) {
  namespace fs = std::filesystem;
  *paired = false;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::ok();
  std::vector<fs::path> pairs;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.rfind("pair-", 0) == 0) pairs.push_back(e.path());
  }
  if (pairs.empty()) return Status::ok();
  std::sort(pairs.begin(), pairs.end());
  std::vector<std::string> f, ids;
  for (const auto& p : pairs) {
    std::vector<std::string> runs;
    for (const auto& e : fs::directory_iterator(p, ec)) {
      if (e.is_directory() && fs::exists(e.path() / "result.json")) runs.push_back((e.path() / "result.json").string());
    }
    if (runs.size() != 1)
      return Status::error(fmt::format("{}: a pair directory holds {} runs, not one (remove the extra, or the pair)",
                                       p.string(), runs.size()));
    f.push_back(runs[0]);
    ids.push_back(p.filename().string());
  }
  files->insert(files->end(), f.begin(), f.end());
  pair_ids->insert(pair_ids->end(), ids.begin(), ids.end());
  *paired = true;
  return Status::ok();
}

PairedT paired_log_t(const std::vector<double>& a, const std::vector<double>& b) {
  PairedT r;
  std::vector<double> d;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] > 0 && b[i] > 0) d.push_back(std::log(b[i] / a[i]));
  }
  r.n = d.size();
  if (r.n == 0) return r;
  double sum = 0;
  for (double x : d) sum += x;
  r.mean_log = sum / static_cast<double>(r.n);
  if (r.n < 2) return r;
  r.sd_log = sample_sd(d);
  r.df = static_cast<double>(r.n - 1);
  const double se = r.sd_log / std::sqrt(static_cast<double>(r.n));
  if (se == 0) {
    r.p_value = r.mean_log == 0 ? 1 : 0;
    r.t = r.mean_log == 0 ? 0 : (r.mean_log > 0 ? INFINITY : -INFINITY);
    return r;
  }
  r.t = r.mean_log / se;
  boost::math::students_t dist(r.df);
  r.p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(r.t))));
  return r;
}

}  // namespace tracebench
