#include "tracebench/util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <vector>

#include <fmt/format.h>

namespace tracebench {

std::string sha256_file(const std::string& path, bool gunzip) {
  gzFile gz = nullptr;
  FILE* plain = nullptr;
  if (gunzip) {
    gz = gzopen(path.c_str(), "rb");
    if (!gz) return {};
  } else {
    plain = std::fopen(path.c_str(), "rb");
    if (!plain) return {};
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<unsigned char> buf(1 << 16);
  for (;;) {
    int n = gz ? gzread(gz, buf.data(), static_cast<unsigned>(buf.size()))
               : static_cast<int>(std::fread(buf.data(), 1, buf.size(), plain));
    if (n <= 0) break;
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(n));
  }
  if (gz) gzclose(gz);
  if (plain) std::fclose(plain);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  std::string hex;
  for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

Status write_file_atomic(const std::string& path, const std::string& data) {
  // The temp name is the file's own name plus a suffix: a name already at
  // NAME_MAX is refused by open() with a message, never thrown about.
  std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {  // a temp file a killed process of this pid left
    unlink(tmp.c_str());
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  }
  if (fd < 0) return errno_status("create " + tmp, errno);
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return errno_status("write " + tmp, err);
    }
    off += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return errno_status("sync " + tmp, err);
  }
  if (close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return errno_status("close " + tmp, err);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return errno_status("rename " + tmp + " -> " + path, err);
  }
  return Status::ok();
}

static std::string utc_format(const char* f) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), f, &tm);
  return buf;
}

std::string utc_now_iso8601() { return utc_format("%Y-%m-%dT%H:%M:%SZ"); }
std::string utc_now_compact() { return utc_format("%Y%m%dT%H%M%SZ"); }

namespace {

const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// Opens `path` for reading without blocking and checks it; -1 and `st` set on refusal.
int open_input(const std::string& path, std::uint64_t max_bytes, std::uint64_t* size, Status* st) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *st = errno_status("open " + path, errno);
    return -1;
  }
  struct stat sb {};
  if (fstat(fd, &sb) != 0) {
    *st = errno_status("stat " + path, errno);
    close(fd);
    return -1;
  }
  if (!S_ISREG(sb.st_mode)) {
    *st = Status::error(fmt::format("{}: {}, not a regular file: give the file itself", path, file_kind(sb.st_mode)));
    close(fd);
    return -1;
  }
  if (static_cast<std::uint64_t>(sb.st_size) > max_bytes) {
    *st = Status::error(fmt::format("{}: {} bytes, more than the {} this command reads: not one of its input files",
                                    path, static_cast<std::uint64_t>(sb.st_size), max_bytes));
    close(fd);
    return -1;
  }
  if (size) *size = static_cast<std::uint64_t>(sb.st_size);
  return fd;
}

}  // namespace

Status check_input_file(const std::string& path, std::uint64_t max_bytes, std::uint64_t* size) {
  Status st = Status::ok();
  int fd = open_input(path, max_bytes, size, &st);
  if (fd >= 0) close(fd);
  return st;
}

Status read_input_file(const std::string& path, std::uint64_t max_bytes, std::string* text) {
  Status st = Status::ok();
  std::uint64_t size = 0;
  int fd = open_input(path, max_bytes, &size, &st);
  if (fd < 0) return st;
  text->clear();
  text->reserve(size);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return errno_status("read " + path, err);
    }
    if (n == 0) break;
    // A file that grows while read is still bounded.
    if (text->size() + static_cast<std::size_t>(n) > max_bytes) {
      close(fd);
      return Status::error(fmt::format("{}: grew past {} bytes while read", path, max_bytes));
    }
    text->append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return Status::ok();
}

Status read_json_file(const std::string& path, nlohmann::json* j) {
  std::string text;
  TB_TRY(read_input_file(path, kMaxInputBytes, &text));
  try {
    *j = nlohmann::json::parse(text);
  } catch (const std::exception& e) { return Status::error(path + ": " + e.what()); }
  return Status::ok();
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (stat(a.c_str(), &sa) != 0 || stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Status check_output_not_input(const std::string& flag, const std::string& out, const std::vector<std::string>& inputs) {
  for (const auto& in : inputs) {
    if (same_file(out, in))
      return Status::error(
          fmt::format("{} {} is {}, one of the inputs: writing it would destroy what it is computed "
                      "from; name another file",
                      flag, out, in));
  }
  return Status::ok();
}

}  // namespace tracebench
