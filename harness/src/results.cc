// A run's directory: its id, and the files the reporters write into it.
#include "tracebench/results.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "tracebench/report.h"
#include "tracebench/result_check.h"
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
  // Parsed is not believed: every reader refuses an inconsistent result.
  TB_TRY(check_result(*run, path));
  if (!with_samples) return Status::ok();
  std::string samples = (std::filesystem::path(path).parent_path() / "samples.csv").string();
  std::error_code ec;
  if (!std::filesystem::exists(samples, ec)) return Status::ok();  // written with --no-samples
  return read_samples_csv(samples, run);
}

Status result_files(const std::string& arg, std::vector<std::string>* files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (arg.size() > 5 && arg.substr(arg.size() - 5) == ".json") {
    files->push_back(arg);
    return Status::ok();
  }
  if (!fs::is_directory(arg, ec)) return Status::error(fmt::format("{}: not a result.json or a directory", arg));
  if (fs::exists(fs::path(arg) / "result.json", ec)) {
    files->push_back((fs::path(arg) / "result.json").string());
    return Status::ok();
  }
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(arg, ec)) {
    if (e.is_directory() && fs::exists(e.path() / "result.json")) found.push_back((e.path() / "result.json").string());
  }
  std::sort(found.begin(), found.end());
  if (found.empty()) return Status::error(fmt::format("{}: no result.json in it or in its subdirectories", arg));
  files->insert(files->end(), found.begin(), found.end());
  return Status::ok();
}

}  // namespace tracebench
