// `tracebench dvm -o FILE`: dtrace appends the traced data to FILE.  Here the
// old content and the new are written to a temp file beside it, which
// replaces FILE only once every write, the fsync and the close succeeded: a
// full disk, a failed run or a crash leaves FILE as it was, never cut short.
// A FILE that is not a regular file (a FIFO, /dev/stdout) cannot be replaced
// and is appended to directly, its writes still checked.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace tracebench {

class AppendOutput {
 public:
  AppendOutput() = default;
  AppendOutput(const AppendOutput&) = delete;
  AppendOutput& operator=(const AppendOutput&) = delete;
  ~AppendOutput() {
    if (f_) std::fclose(f_);
    if (!tmp_.empty()) unlink(tmp_.c_str());  // not committed
  }

  std::FILE* file() const { return f_; }

  bool open(const std::string& path, std::string* err) {
    path_ = path;
    struct stat sb {};
    const bool exists = stat(path.c_str(), &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode)) {
      f_ = std::fopen(path.c_str(), "a");
      if (!f_) return fail(path, errno, err);
      return true;
    }
    tmp_ = path + ".tmp." + std::to_string(getpid());
    const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, exists ? (sb.st_mode & 07777) : 0644);
    if (fd < 0) {
      const int e = errno;
      tmp_.clear();
      return fail(path, e, err);
    }
    f_ = fdopen(fd, "w");
    if (!f_) {
      close(fd);
      return fail(tmp_, errno, err);
    }
    if (exists && !copy_old(err)) return false;
    return true;
  }

  // Flushes, syncs and puts the file in place; false (and `err`) when any step failed.
  bool commit(std::string* err) {
    if (!f_) return true;
    std::FILE* f = f_;
    f_ = nullptr;
    errno = 0;
    if (std::fflush(f) != 0 || std::ferror(f)) {
      const int e = errno ? errno : EIO;
      std::fclose(f);
      return fail(path_, e, err);
    }
    if (!tmp_.empty() && fsync(fileno(f)) != 0) {
      const int e = errno;
      std::fclose(f);
      return fail(path_, e, err);
    }
    if (std::fclose(f) != 0) return fail(path_, errno, err);
    if (tmp_.empty()) return true;
    if (rename(tmp_.c_str(), path_.c_str()) != 0) return fail(path_, errno, err);
    tmp_.clear();
    return true;
  }

 private:
  bool copy_old(std::string* err) {
    const int in = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (in < 0) return fail(path_, errno, err);
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = read(in, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int e = errno;
        close(in);
        return fail(path_, e, err);
      }
      if (n == 0) break;
      if (std::fwrite(buf, 1, static_cast<std::size_t>(n), f_) != static_cast<std::size_t>(n)) {
        const int e = errno;
        close(in);
        return fail(tmp_, e, err);
      }
    }
    close(in);
    return true;
  }
  bool fail(const std::string& what, int e, std::string* err) {
    *err = "-o " + path_ + ": " + (what == path_ ? "" : what + ": ") + std::strerror(e);
    return false;
  }

  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
};

}  // namespace tracebench
