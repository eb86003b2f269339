#include "other_process.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

namespace tracebench::common {

namespace {

bool read_full(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// MSG_NOSIGNAL: a child that died is an error here, not a SIGPIPE.
bool send_full(int fd, const void* buf, std::size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// The child: no handler of the parent's (a teardown run in a copy of it
// would close what the parent still uses), nothing blocked; calls on
// request until its socket closes.  Only async-signal-safe calls after fork.
[[noreturn]] void serve(pid_t parent, int sock, std::uintptr_t function) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);
  for (int s = 1; s < NSIG; ++s) signal(s, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  auto* fn = reinterpret_cast<void (*)()>(function);
  for (;;) {
    std::uint64_t n = 0;
    if (!read_full(sock, &n, sizeof n)) _exit(0);
    for (std::uint64_t i = 0; i < n; ++i) fn();
    const char done = 1;
    if (!send_full(sock, &done, 1)) _exit(0);
  }
}

Status errno_error(const std::string& what, int err) {
  return Status::error("the other process: " + what + ": " + std::strerror(err));
}

}  // namespace

Status OtherProcess::start(std::uintptr_t function) {
  stop();
  if (function == 0) return Status::error("the other process: no function to call (the probe has no address)");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return errno_error("socketpair", errno);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(sv[0]);
    close(sv[1]);
    return errno_error("fork", err);
  }
  if (pid == 0) {
    close(sv[0]);
    serve(parent, sv[1], function);
  }
  close(sv[1]);
  pid_ = pid;
  sock_ = sv[0];
  return Status::ok();
}

Status OtherProcess::call(std::uint64_t n) {
  if (!running()) return Status::error("the other process is not running");
  char done = 0;
  if (!send_full(sock_, &n, sizeof n) || !read_full(sock_, &done, 1))
    return Status::error("the other process (pid " + std::to_string(pid_) + ") ended before making its calls");
  return Status::ok();
}

void OtherProcess::stop() noexcept {
  if (sock_ >= 0) close(sock_);
  sock_ = -1;
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
  }
  pid_ = -1;
}

}  // namespace tracebench::common
