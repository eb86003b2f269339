#include "tracebench/task_clock.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "tracebench/system.h"

namespace tracebench {

std::vector<int> threads_of(int pid, int tid) { return tid > 0 ? std::vector<int>{tid} : process_threads(pid); }

namespace {
// -errno on failure.
int open_sw(std::uint64_t config, int tid) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  return fd < 0 ? -errno : fd;
}

std::uint64_t sum_of(const std::vector<int>& fds) {
  std::uint64_t sum = 0;
  for (int fd : fds) {
    std::uint64_t v = 0;
    if (::read(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v)) sum += v;
  }
  return sum;
}
}  // namespace

Status TaskClocks::open(const std::vector<int>& tids) {
  close();
  for (int tid : tids) {
    const int fd = open_sw(PERF_COUNT_SW_TASK_CLOCK, tid);
    if (fd == -ESRCH) continue;  // it ended meanwhile: nothing to count
    const int sw = fd < 0 ? fd : open_sw(PERF_COUNT_SW_CONTEXT_SWITCHES, tid);
    if (fd < 0 || sw < 0) {
      if (fd >= 0) ::close(fd);
      close();
      return Status::error(fmt::format("perf_event_open(task-clock/context-switches, tid {}): {}", tid,
                                       std::strerror(fd < 0 ? -fd : -sw)));
    }
    fds_.push_back(fd);
    switch_fds_.push_back(sw);
  }
  return Status::ok();
}

double TaskClocks::read_ns() const { return static_cast<double>(sum_of(fds_)); }

std::uint64_t TaskClocks::read_switches() const { return sum_of(switch_fds_); }

void TaskClocks::close() {
  for (int fd : fds_) ::close(fd);
  for (int fd : switch_fds_) ::close(fd);
  fds_.clear();
  switch_fds_.clear();
}

}  // namespace tracebench
