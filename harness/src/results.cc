// A run's directory: its id, and the files the reporters write into it.
#include "tracebench/results.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "tracebench/report.h"
#include "tracebench/util.h"

namespace tracebench {

std::string make_run_id(const RunContext& ctx) {
  std::string host;
  for (char ch : ctx.host) host += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-') ? ch : '_';
  return fmt::format("{}-{}-{}", utc_now_compact(), host.empty() ? "host" : host, ctx.git_sha);
}

Status write_run(const std::string& dir, const RunResult& run) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return errno_status("mkdir " + dir, errno);
  TB_TRY(write_file_atomic(dir + "/result.json", result_json_text(run)));
  TB_TRY(write_file_atomic(dir + "/summary.csv", summary_csv(run)));
  return Status::ok();
}

Status read_run(const std::string& path, RunResult* run, bool with_samples) {
  TB_TRY(read_result_json(path, run));
  if (!with_samples) return Status::ok();
  std::string samples = (std::filesystem::path(path).parent_path() / "samples.csv").string();
  std::error_code ec;
  if (!std::filesystem::exists(samples, ec)) return Status::ok();  // written with --no-samples
  return read_samples_csv(samples, run);
}

}  // namespace tracebench
