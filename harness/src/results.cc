// A run's directory: its id, and the files the reporters write into it.
#include "tracebench/results.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "tracebench/report.h"
#include "tracebench/reporter.h"
#include "tracebench/result_check.h"
#include "tracebench/util.h"

namespace tracebench {

namespace {

std::string utc_now_compact_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  gmtime_r(&ts.tv_sec, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%S", &tm);
  return fmt::format("{}.{:06}Z", buf, ts.tv_nsec / 1000);
}

std::uint32_t random_u32() {
  std::uint32_t v = 0;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof v)) return v;
  // No entropy yet (early boot): the pid and the clock still differ between processes.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint32_t>(ts.tv_nsec) ^ (static_cast<std::uint32_t>(getpid()) << 12);
}

}  // namespace

std::string make_run_id(const RunContext& ctx) {
  // A name component stays far below NAME_MAX whatever the host is called.
  std::string host;
  for (char ch : ctx.host.substr(0, 64)) host += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-') ? ch : '_';
  std::string sha;
  for (char ch : ctx.git_sha.substr(0, 40)) sha += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return fmt::format("{}-{}-{}-{:08x}", utc_now_compact_us(), host.empty() ? "host" : host, sha.empty() ? "nosha" : sha,
                     random_u32());
}

Status make_run_dir(const std::string& base, RunContext* ctx, std::string* dir) {
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  if (ec) return Status::error(fmt::format("--out {}: {}", base, ec.message()));
  for (int attempt = 0; attempt < 16; ++attempt) {
    ctx->run_id = make_run_id(*ctx);
    *dir = base + "/" + ctx->run_id;
    if (mkdir(dir->c_str(), 0755) == 0) return Status::ok();
    if (errno != EEXIST) return errno_status("mkdir " + *dir, errno);
  }
  return Status::error(fmt::format("--out {}: no unused run directory name after 16 tries", base));
}

Status write_run(const std::string& dir, const RunResult& run) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return errno_status("mkdir " + dir, errno);
  for (const auto& [file, format] : {std::pair{"/result.json", "json"}, std::pair{"/summary.csv", "csv"}}) {
    Report r;
    TB_TRY(run_reporters().write(format, RunReport{run}, &r));
    TB_TRY(write_file_atomic(dir + file, r.text));
  }
  return Status::ok();
}

Status read_run(const std::string& path, RunResult* run, bool with_samples) {
  TB_TRY(read_result_json(path, run));
  // Parsed is not believed: every reader refuses an inconsistent result.
  TB_TRY(check_result(*run, path));
  if (!with_samples) return Status::ok();
  std::string samples = (std::filesystem::path(path).parent_path() / "samples.csv").string();
  struct stat sb {};
  if (lstat(samples.c_str(), &sb) != 0 && errno == ENOENT) return Status::ok();  // written with --no-samples
  return read_samples_csv(samples, run);
}

namespace {

// stat() of `p` as a Status: "no such file" is `*exists = false`, every
// other failure (a symlink loop, a name too long, no permission) an error.
Status stat_path(const std::filesystem::path& p, bool* exists, bool* is_dir) {
  struct stat sb {};
  *exists = *is_dir = false;
  if (stat(p.c_str(), &sb) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::ok();
    return errno_status(p.string(), errno);
  }
  *exists = true;
  *is_dir = S_ISDIR(sb.st_mode);
  return Status::ok();
}

// The runs under `dir`, its own run aside: a directory holding a result.json
// is a run (not looked into further); others are looked into down to
// kRunSearchDepth levels (`ab` keeps its runs at ab-*/pair-*/<run>/).  A
// symlinked directory may be a run but is not looked into (no loops); an
// entry that cannot be looked at is not a run; a run's result.json that
// cannot be is an error.
constexpr int kRunSearchDepth = 4;

Status find_runs(const std::filesystem::path& dir, int depth, std::vector<std::string>* found) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return Status::error(fmt::format("{}: {}", dir.string(), ec.message()));
  for (; it != end; it.increment(ec)) {
    bool sub_exists = false, sub_dir = false, r_exists = false, r_dir = false;
    if (!stat_path(it->path(), &sub_exists, &sub_dir) || !sub_dir) continue;
    TB_TRY(stat_path(it->path() / "result.json", &r_exists, &r_dir));
    if (r_exists)
      found->push_back((it->path() / "result.json").string());
    else if (depth > 1 && !it->is_symlink(ec))
      TB_TRY(find_runs(it->path(), depth - 1, found));
  }
  if (ec) return Status::error(fmt::format("{}: {}", dir.string(), ec.message()));
  return Status::ok();
}

}  // namespace

Status result_files(const std::string& arg, std::vector<std::string>* files, bool none_is_ok) {
  namespace fs = std::filesystem;
  if (arg.size() > 5 && arg.substr(arg.size() - 5) == ".json") {
    files->push_back(arg);
    return Status::ok();
  }
  bool exists = false, dir = false;
  TB_TRY(stat_path(arg, &exists, &dir));
  if (!dir) return Status::error(fmt::format("{}: not a result.json or a directory", arg));
  const fs::path own = fs::path(arg) / "result.json";
  TB_TRY(stat_path(own, &exists, &dir));
  if (exists) {
    files->push_back(own.string());
    return Status::ok();
  }
  std::vector<std::string> found;
  TB_TRY(find_runs(arg, kRunSearchDepth, &found));
  std::sort(found.begin(), found.end());
  if (found.empty() && !none_is_ok)
    return Status::error(
        fmt::format("{}: no result.json in it or in its subdirectories ({} levels down)", arg, kRunSearchDepth));
  files->insert(files->end(), found.begin(), found.end());
  return Status::ok();
}

std::vector<std::string> run_files(const std::vector<std::string>& result_jsons) {
  namespace fs = std::filesystem;
  std::vector<std::string> all;
  for (const auto& file : result_jsons) {
    all.push_back(file);
    std::error_code ec;
    const fs::path dir = fs::path(file).parent_path();
    for (fs::directory_iterator it(dir.empty() ? fs::path(".") : dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && it->path() != fs::path(file)) all.push_back(it->path().string());
  }
  return all;
}

}  // namespace tracebench
