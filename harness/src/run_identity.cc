// Runs counted by identity, not by path (tracebench/run_identity.h).
#include "tracebench/run_identity.h"

#include <ctime>
#include <map>

#include <fmt/format.h>

#include "tracebench/util.h"

namespace tracebench {

RunIdentity identify_run(const std::string& file, const RunResult& run) {
  return {run.context.run_id, sha256_file(file, false), file};
}

Status count_each_run_once(std::vector<std::string>* files, std::vector<RunResult>* runs,
                           std::vector<std::string>* dropped) {
  std::map<std::string, RunIdentity> seen;  // by run id
  std::vector<std::string> kept_files;
  std::vector<RunResult> kept_runs;
  for (std::size_t i = 0; i < files->size(); ++i) {
    RunIdentity id = identify_run((*files)[i], (*runs)[i]);
    auto it = seen.find(id.run_id);
    if (it == seen.end()) {
      seen.emplace(id.run_id, id);
      kept_files.push_back(std::move((*files)[i]));
      kept_runs.push_back(std::move((*runs)[i]));
      continue;
    }
    if (it->second.sha256 != id.sha256)
      return Status::error(
          fmt::format("{} and {} both carry run id {} with different contents: an edited copy, or two runs whose older "
                      "ids collide; one run is counted once, so give only the one that counts",
                      it->second.file, id.file, id.run_id));
    dropped->push_back(fmt::format("{}: the run of {} ({}), counted once", id.file, it->second.file, id.run_id));
  }
  *files = std::move(kept_files);
  *runs = std::move(kept_runs);
  return Status::ok();
}

Status check_distinct_runs(const std::vector<RunIdentity>& runs, const std::string& what) {
  std::map<std::string, const RunIdentity*> seen;
  for (const auto& r : runs) {
    auto [it, fresh] = seen.emplace(r.run_id, &r);
    if (!fresh)
      return Status::error(fmt::format(
          "{} and {} are one run ({}{}): {} are distinct runs, each counted once (a copied or linked run "
          "would give the test a certainty it does not have); remove the repeat",
          it->second->file, r.file, r.run_id, it->second->sha256 == r.sha256 ? "" : ", its contents edited", what));
  }
  return Status::ok();
}

std::optional<double> run_id_time(const std::string& run_id) {
  std::tm tm{};
  const char* rest = strptime(run_id.c_str(), "%Y%m%dT%H%M%S", &tm);
  if (!rest) return std::nullopt;
  double fraction = 0;
  if (*rest == '.') {
    double scale = 0.1;
    for (++rest; *rest >= '0' && *rest <= '9'; ++rest, scale /= 10) fraction += scale * (*rest - '0');
  }
  if (*rest != 'Z') return std::nullopt;
  return static_cast<double>(timegm(&tm)) + fraction;
}

}  // namespace tracebench
