// The directory of one `tracebench ab` session, claimed atomically
// (ab_session_dir.h).
#include "ab_session_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "tracebench/util.h"

namespace tracebench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kClaim = "ab.json";

// Why `dir`, holding our claim, holds something else too ("" when not).
std::string other_entry(const std::string& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != kClaim) return it->path().filename().string();
  return ec ? ec.message() : std::string();
}

// EEXIST: another session (or a finished one) holds it.
Status create_claim(const std::string& dir, int* err) {
  const std::string claim = dir + "/" + kClaim;
  const int fd = open(claim.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  *err = fd < 0 ? errno : 0;
  if (fd < 0) {
    if (errno == EEXIST)
      return Status::error(
          fmt::format("--out {} is another session's ({} is there): give a new directory", dir, claim));
    return errno_status("--out " + dir + ": create " + claim, errno);
  }
  const std::string text = fmt::format("{{\"stopped\": \"running\", \"pid\": {}}}\n", getpid());
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) {
    unlink(claim.c_str());
    return errno_status("--out " + dir + ": write " + claim, errno);
  }
  return Status::ok();
}

}  // namespace

Status claim_session_dir(const std::string& dir, bool* made, bool* taken) {
  if (taken) *taken = false;
  std::error_code ec;
  const fs::path parent = fs::path(dir).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return Status::error(fmt::format("--out {}: {}", dir, ec.message()));
  *made = mkdir(dir.c_str(), 0755) == 0;
  if (!*made && errno != EEXIST) return errno_status("--out " + dir, errno);
  struct stat sb {};
  if (stat(dir.c_str(), &sb) != 0) return errno_status("--out " + dir, errno);
  if (!S_ISDIR(sb.st_mode)) return Status::error(fmt::format("--out {} is not a directory", dir));
  int err = 0;
  if (Status s = create_claim(dir, &err); !s) {
    if (*made && err != EEXIST) rmdir(dir.c_str());
    *made = false;  // another session's, or nothing of ours in it
    if (taken) *taken = err == EEXIST;
    return s;
  }
  if (std::string other = other_entry(dir); !other.empty()) {
    release_session_dir(dir, *made);
    if (taken) *taken = true;
    return Status::error(fmt::format("--out {} is not empty (it holds {}): give a new directory", dir, other));
  }
  return Status::ok();
}

Status claim_default_session_dir(std::string* dir, bool* made) {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  const std::string base = std::string("results/ab-") + stamp;
  Status last = Status::ok();
  for (int n = 1; n <= 100; ++n) {
    *dir = n == 1 ? base : fmt::format("{}-{}", base, n);
    bool taken = false;
    last = claim_session_dir(*dir, made, &taken);
    if (last || !taken) return last;
  }
  return Status::error(fmt::format("no free session directory after 100 names: {}", last.message()));
}

void release_session_dir(const std::string& dir, bool made) {
  unlink((dir + "/" + kClaim).c_str());
  if (made) rmdir(dir.c_str());
}

}  // namespace tracebench
