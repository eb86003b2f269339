// Files in shared directories opened without following a planted name
// (tracebench/shared_file.h).
#include "tracebench/shared_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace tracebench {
namespace {

std::string link_target(const std::string& path) {
  char buf[512];
  const ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("?");
}

Status planted(const std::string& path, const std::string& what) {
  return Status::error(
      fmt::format("{} is {}, not the plain file tracebench keeps there: refused (its directory is writable by "
                  "anyone, so the name may have been planted to make this process write elsewhere); remove it "
                  "and run again",
                  path, what));
}

// After open: a regular file with one link, made blocking again.
int checked(int fd, const std::string& path, Status* st) {
  struct stat sb {};
  if (fstat(fd, &sb) != 0) {
    *st = errno_status("fstat " + path, errno);
  } else if (!S_ISREG(sb.st_mode)) {
    *st = planted(path, S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISDIR(sb.st_mode) ? "a directory" : "a device or socket");
  } else if (sb.st_nlink != 1) {
    *st = planted(path, fmt::format("a file with {} hard links (another name of some other file)", sb.st_nlink));
  } else {
    const int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0) return fd;
    *st = errno_status("fcntl " + path, errno);
  }
  close(fd);
  return -1;
}

int refused_open(const std::string& path, int err, Status* st) {
  if (err == ELOOP) {
    *st = planted(path, "a symbolic link (to " + link_target(path) + ")");
  } else {
    *st = errno_status("open " + path, err);
  }
  errno = err;
  return -1;
}

}  // namespace

int open_shared_file(const std::string& path, Status* st) {
  constexpr int kSafe = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | kSafe, 0644);
  if (fd < 0 && errno == EACCES) fd = open(path.c_str(), O_RDONLY | kSafe);
  if (fd < 0) return refused_open(path, errno, st);
  return checked(fd, path, st);
}

int open_shared_file_readonly(const std::string& path, Status* st) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? -1 : refused_open(path, errno, st);
  return checked(fd, path, st);
}

}  // namespace tracebench
