#include "ctl_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fmt/format.h>
#include <lttng/lttng.h>

#include "ctl_status.h"
#include "sessiond.h"
#include "tracers/common/proc.h"

namespace tracebench::lttng {
namespace {

using Clock = std::chrono::steady_clock;

// The daemon that did not answer a call of this process (-1: one whose pid
// was unknown), so that later calls do not wait for it again.
std::atomic<pid_t> g_silent{0};

std::string daemon_name(pid_t pid) {
  return pid > 0 ? fmt::format("LTTng session daemon (pid {})", pid)
                 : std::string("LTTng session daemon (pid unknown)");
}

// The state letter of /proc/<pid>/stat ('R', 'S', 'T', ...), 0 when unknown.
char process_state(pid_t pid) {
  const std::string stat = common::read_text("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');  // comm may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : 0;
}

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// In the child: the body's Status and output, as
// [ok:1][message length:4][message][output length:4][output].
[[noreturn]] void child_main(int fd, const std::function<Status(std::string*)>& body) {
  std::string out;
  Status s = body(&out);
  const char ok = s ? 1 : 0;
  const std::string msg = s ? std::string() : s.message();
  const std::uint32_t mlen = static_cast<std::uint32_t>(msg.size()), olen = static_cast<std::uint32_t>(out.size());
  bool done = write_all(fd, &ok, 1) && write_all(fd, &mlen, 4) && write_all(fd, msg.data(), mlen) &&
              write_all(fd, &olen, 4) && write_all(fd, out.data(), olen);
  ::_exit(done ? 0 : 1);  // no atexit handlers, no stdio flush: they are the parent's
}

// Reads the child's pipe until it closes or the deadline passes; false on timeout.
bool read_until(int fd, Clock::time_point deadline, std::string* got) {
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();  // the whole limit
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? true : false;  // a poll error: read what there is
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // EOF: the child is done
    got->append(buf, static_cast<std::size_t>(n));
  }
}

Status decode(const std::string& what, const std::string& got, std::string* out) {
  std::uint32_t mlen = 0, olen = 0;
  if (got.size() < 5) return Status::error(what + ": the process making the call died without an answer");
  std::memcpy(&mlen, got.data() + 1, 4);
  if (got.size() < 9 + std::size_t{mlen}) return Status::error(what + ": truncated answer");
  std::memcpy(&olen, got.data() + 5 + mlen, 4);
  if (got.size() != 9 + std::size_t{mlen} + olen) return Status::error(what + ": truncated answer");
  if (out) out->assign(got, 9 + mlen, olen);
  if (got[0] == 1) return Status::ok();
  return Status::error(got.substr(5, mlen));
}

}  // namespace

pid_t sessiond_pid() {
  pid_t pid = 0;
  std::istringstream(common::read_text(kSessiondPidFile)) >> pid;
  return pid > 0 && common::pid_alive(pid) ? pid : 0;
}

Status sessiond_responsive() {
  const pid_t pid = sessiond_pid();
  if (pid > 0) {
    const char state = process_state(pid);
    if (state == 'T' || state == 't')
      return Status::error(
          fmt::format("{} is stopped (state {} in /proc/{}/stat: SIGSTOP?) and cannot answer; "
                      "resume it (kill -CONT {}) or end it",
                      daemon_name(pid), state, pid, pid));
  }
  const pid_t silent = g_silent.load();
  if (silent != 0 && (silent == pid || silent == -1))
    return Status::error(daemon_name(pid) + " did not answer earlier in this process (stopped?); not asked again");
  return Status::ok();
}

Status bounded_call(const std::string& what, milliseconds limit, const std::function<Status(std::string*)>& body,
                    std::string* out) {
  TB_TRY(sessiond_responsive());
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno_status(what + ": pipe", errno);
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return errno_status(what + ": fork", e);
  }
  if (child == 0) {
    ::close(fds[0]);
    child_main(fds[1], body);
  }
  ::close(fds[1]);
  std::string got;
  const bool finished = read_until(fds[0], Clock::now() + limit, &got);
  ::close(fds[0]);
  if (!finished) ::kill(child, SIGKILL);
  int ws = 0;
  while (::waitpid(child, &ws, 0) < 0 && errno == EINTR) {}
  if (!finished) {
    const pid_t pid = sessiond_pid();
    g_silent.store(pid > 0 ? pid : -1);
    return Status::error(fmt::format("{}: {} did not answer within {:g} s (stopped?)", what, daemon_name(pid),
                                     std::chrono::duration<double>(limit).count()));
  }
  return decode(what, got, out);
}

Status ctl_call(const std::string& what, const std::function<int()>& call, milliseconds limit) {
  return bounded_call(what, limit, [&](std::string*) { return ctl_status(what, call()); });
}

Status probe_sessiond(bool* alive, milliseconds limit) {
  *alive = false;
  std::string answer;
  TB_TRY(bounded_call(
      "lttng: is a session daemon running", limit,
      [](std::string* out) {
        *out = lttng_session_daemon_alive() == 1 ? "1" : "0";
        return Status::ok();
      },
      &answer));
  *alive = answer == "1";
  return Status::ok();
}

Status list_channels(const std::string& what, lttng_handle* handle, std::vector<ChannelFacts>* out) {
  std::string bytes;
  TB_TRY(bounded_call(
      what, kCtlTimeout,
      [&](std::string* o) {
        lttng_channel* chans = nullptr;
        int n = lttng_list_channels(handle, &chans);
        if (n < 0) return ctl_status(what, n);
        for (int i = 0; i < n; ++i) {
          ChannelFacts f;
          std::snprintf(f.name, sizeof f.name, "%s", chans[i].name);
          f.counters = lttng_channel_get_discarded_event_count(&chans[i], &f.discarded_events) >= 0 &&
                       lttng_channel_get_lost_packet_count(&chans[i], &f.lost_packets) >= 0;
          f.subbuf_size = chans[i].attr.subbuf_size;
          f.num_subbuf = chans[i].attr.num_subbuf;
          f.switch_timer_us = chans[i].attr.switch_timer_interval;
          f.read_timer_us = chans[i].attr.read_timer_interval;
          o->append(reinterpret_cast<const char*>(&f), sizeof f);
        }
        std::free(chans);
        return Status::ok();
      },
      &bytes));
  out->assign(bytes.size() / sizeof(ChannelFacts), ChannelFacts{});
  std::memcpy(out->data(), bytes.data(), out->size() * sizeof(ChannelFacts));
  return Status::ok();
}

void forget_silent_sessiond() { g_silent.store(0); }

}  // namespace tracebench::lttng
