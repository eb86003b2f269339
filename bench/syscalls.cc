// Syscall workloads: getpid (the cheapest syscall with its own tracepoint),
// a 1-byte read from a regular file (the workload of Tao & Yang's
// validation), and a write of N bytes (the payload pattern) to /dev/null.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "tracebench/workload.h"
#include "tracebench/payload_pattern.h"

namespace tracebench {
namespace {

// syscall() rather than the libc wrappers: no caching, one real syscall each.
template <long Nr>
class SyscallLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) syscall(Nr);
  }
};

// Reads one byte at a time through a 4 MiB file; rewinds with lseek (not a
// read event) before the end is reached.
class ReadLoop final : public WorkloadState {
 public:
  static constexpr std::size_t kFileBytes = 4 << 20;
  ~ReadLoop() override {
    if (fd_ >= 0) close(fd_);
  }
  Status open_file() {
    char path[] = "/tmp/tracebench-read-XXXXXX";
    fd_ = mkstemp(path);
    if (fd_ < 0) return errno_status("mkstemp /tmp/tracebench-read-*", errno);
    unlink(path);  // nothing is left behind, whatever happens next
    std::vector<char> chunk(1 << 16, 'r');
    for (std::size_t off = 0; off < kFileBytes; off += chunk.size()) {
      if (write(fd_, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) {
        return errno_status("fill read workload file", errno);
      }
    }
    lseek(fd_, 0, SEEK_SET);
    return Status::ok();
  }
  void fire(std::uint64_t n) override {
    char c;
    for (std::uint64_t i = 0; i < n; ++i) {
      // Rewind before the end so every read(2) is one event that returns 1.
      if (pos_ == kFileBytes) {
        lseek(fd_, 0, SEEK_SET);
        pos_ = 0;
      }
      if (read(fd_, &c, 1) != 1) std::abort();
      ++pos_;
    }
  }

 private:
  int fd_ = -1;
  std::size_t pos_ = 0;
};

class WriteNullLoop final : public WorkloadState {
 public:
  // The suite's payload pattern, so a tracer that copies the buffer at the
  // write syscall can check it.
  explicit WriteNullLoop(std::size_t bytes) : buf_(bytes ? bytes : 1, 'w'), bytes_(bytes) {
    fill_payload(buf_.data(), bytes);
  }
  ~WriteNullLoop() override {
    if (fd_ >= 0) close(fd_);
  }
  Status open_null() {
    fd_ = open("/dev/null", O_WRONLY | O_CLOEXEC);
    return fd_ < 0 ? errno_status("open /dev/null", errno) : Status::ok();
  }
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (write(fd_, buf_.data(), bytes_) < 0) std::abort();
    }
  }

 private:
  std::vector<char> buf_;
  std::size_t bytes_;
  int fd_ = -1;
};

}  // namespace

TRACEBENCH_REGISTER_WORKLOAD(getpid, Workload{"getpid", "syscalls", "syscall(SYS_getpid)",
                                              ProbePoint{"syscall:getpid", ProbeKind::kSyscall, "getpid", 0,
                                                         "entry of the getpid syscall"},
                                              false, [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
                                                *out = std::make_unique<SyscallLoop<SYS_getpid>>();
                                                return Status::ok();
                                              }});

// What `perf bench syscall basic` times, for the cross-check against it.
TRACEBENCH_REGISTER_WORKLOAD(
    getppid, Workload{"getppid", "syscalls", "syscall(SYS_getppid), the loop of `perf bench syscall basic`",
                      ProbePoint{"syscall:getppid", ProbeKind::kSyscall, "getppid", 0, "entry of the getppid syscall"},
                      false, [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
                        *out = std::make_unique<SyscallLoop<SYS_getppid>>();
                        return Status::ok();
                      }});

TRACEBENCH_REGISTER_WORKLOAD(read, Workload{"read", "syscalls", "read(2) of 1 byte from a regular file",
                                            ProbePoint{"syscall:read", ProbeKind::kSyscall, "read", 0,
                                                       "entry of the read syscall"},
                                            false, [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
                                              auto w = std::make_unique<ReadLoop>();
                                              TB_TRY(w->open_file());
                                              *out = std::move(w);
                                              return Status::ok();
                                            }});

TRACEBENCH_REGISTER_WORKLOAD(write_null,
                             Workload{"write_null", "syscalls", "write(2) of N payload bytes to /dev/null",
                                      ProbePoint{"syscall:write", ProbeKind::kSyscall, "write", 0,
                                                 "entry of the write syscall",
                                                 /*payload_addr_arg=*/1, /*payload_len_arg=*/2},
                                      true, [](const WorkloadParams& p, std::unique_ptr<WorkloadState>* out) {
                                        auto w = std::make_unique<WriteNullLoop>(p.payload_bytes);
                                        TB_TRY(w->open_null());
                                        *out = std::move(w);
                                        return Status::ok();
                                      }});

}  // namespace tracebench
