#include "tracebench/util.h"

#include <fcntl.h>
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
  std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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
  if (fsync(fd) != 0 || close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return errno_status("sync " + tmp, err);
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

Status read_json_file(const std::string& path, nlohmann::json* j) {
  std::ifstream in(path);
  if (!in) return Status::error(path + ": cannot open");
  try {
    *j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return Status::error(path + ": " + e.what());
  }
  return Status::ok();
}

}  // namespace tracebench
