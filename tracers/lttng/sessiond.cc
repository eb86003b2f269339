#include "sessiond.h"

#include "tracers/common/proc.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <lttng/lttng.h>

#include "ctl_call.h"
#include "tracebench/tracer.h"

extern char** environ;

namespace tracebench::lttng {
namespace {

bool gone(pid_t pid) { return !common::pid_alive(pid); }

// Children of `pid` (the consumer daemons and run-as helper of a sessiond):
// every thread's children file, as a daemon forks from whichever of its
// threads handles the request (the consumer daemons come from a client
// thread, not the main one).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;  // a daemon that exits meanwhile has no children
  std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const auto& e = *it;
    std::istringstream in(common::read_text(e.path().string() + "/children"));
    pid_t k;
    while (in >> k) out.push_back(k);
  }
  return out;
}

// The daemon this process started (use_sessiond()), kept until it exits.
std::mutex g_own_mu;
pid_t g_own = 0;
pid_t g_own_owner = 0;  // the process that started it: a forked child does not stop its parent's
bool g_own_kernel = false;

void release_at_exit() { (void)release_own_sessiond(); }

bool wait_gone(pid_t pid, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!gone(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace

bool process_gone(pid_t pid) { return pid <= 0 || gone(pid); }

bool sessiond_alive() {
  bool alive = false;
  return probe_sessiond(&alive) && alive;
}

bool process_is(pid_t pid, const std::string& comm) {
  if (pid <= 0 || gone(pid)) return false;
  std::string c = common::read_text("/proc/" + std::to_string(pid) + "/comm");
  while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.pop_back();
  return c == comm;
}

std::vector<DaemonTask> sessiond_family() {
  pid_t daemon = 0;
  std::istringstream(common::read_text(kSessiondPidFile)) >> daemon;
  if (daemon <= 0 || !process_is(daemon, "lttng-sessiond")) return {};
  std::vector<DaemonTask> out{{daemon, "lttng-sessiond"}};
  for (pid_t k : children_of(daemon)) {
    std::string c = common::read_text("/proc/" + std::to_string(k) + "/comm");
    while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.pop_back();
    if (!c.empty()) out.push_back({k, c});
  }
  return out;
}

std::string find_sessiond_binary() {
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  std::istringstream in(dirs);
  std::string dir;
  while (std::getline(in, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/lttng-sessiond";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// Long (~85 lines): starting the daemon is one sequence of steps that each
// wait on the last (spawn with the signals reset, the daemonizing parent's
// exit, the pid file, the daemon's answer), each failure said with what the
// daemon had done by then.
Status start_sessiond(pid_t* pid, bool kernel) {
  *pid = 0;
  std::string bin = find_sessiond_binary();
  if (bin.empty()) return Status::error("lttng-sessiond is not installed (apt-get install lttng-tools)");
  if (::geteuid() != 0) {
    return Status::error(
        "no root lttng-sessiond is running and only root can start one "
        "(run `sudo lttng-sessiond --daemonize` or run tracebench as root)");
  }
  // The harness blocks SIGINT/SIGTERM in its threads; the daemon must not
  // inherit that mask, or stop_sessiond()'s SIGTERM would never arrive.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> args = {bin, "--daemonize"};
  // The kernel tracer also loads LTTng's probe for the companion module's
  // tracepoints when it is installed (kmod/lttng; optional to the daemon).
  args.push_back(kernel ? "--extra-kmod-probes=tracebench" : "--no-kernel");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Remove a stale pid file so the one read below is the new daemon's.
  ::unlink(kSessiondPidFile);
  // The calling thread may be pinned to the measured CPU (the harness pins
  // it before attach()); a child inherits that mask, and a session and
  // consumer daemon confined to the measured CPU would compete with the
  // workload there.  Spawn with every online CPU and restore the pin.
  cpu_set_t pinned, every;
  bool restore = ::sched_getaffinity(0, sizeof pinned, &pinned) == 0;
  CPU_ZERO(&every);
  long ncpu = ::sysconf(_SC_NPROCESSORS_CONF);
  for (long c = 0; c < ncpu && c < CPU_SETSIZE; ++c) CPU_SET(c, &every);
  if (restore) (void)::sched_setaffinity(0, sizeof every, &every);
  pid_t child = 0;
  int rc = posix_spawn(&child, bin.c_str(), &fa, &attr, argv.data(), environ);
  if (restore) (void)::sched_setaffinity(0, sizeof pinned, &pinned);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return errno_status("spawn " + bin, rc);
  // With --daemonize the spawned process exits once the daemon is ready.
  int wstatus = 0;
  while (::waitpid(child, &wstatus, 0) < 0) {
    if (errno != EINTR) return errno_status("waitpid lttng-sessiond", errno);
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Status::error("lttng-sessiond " + args[1] + " " + args[2] + " failed (exit status " +
                         std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) +
                         "); run it by hand to see why");
  }
  pid_t daemon = 0;
  for (int i = 0; i < 200 && daemon <= 0; ++i) {
    std::istringstream(common::read_text(kSessiondPidFile)) >> daemon;
    if (daemon <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (daemon <= 0 || !process_is(daemon, "lttng-sessiond")) {
    return Status::error(std::string("lttng-sessiond started but ") + kSessiondPidFile +
                         " names no running lttng-sessiond");
  }
  bool ready = false;
  for (int i = 0; i < 500 && !ready; ++i) {
    if (Status s = probe_sessiond(&ready); !s) {
      (void)stop_sessiond(daemon);
      return Status::error("lttng-sessiond started (pid " + std::to_string(daemon) + ") but: " + s.message());
    }
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!ready) {
    (void)stop_sessiond(daemon);
    return Status::error("lttng-sessiond started (pid " + std::to_string(daemon) + ") but does not answer");
  }
  {
    std::ofstream marker(kMarkerFile, std::ios::trunc);
    marker << daemon << ' ' << ::getpid() << '\n';
  }
  *pid = daemon;
  return Status::ok();
}

Status stop_sessiond(pid_t pid) {
  if (pid <= 0) return Status::ok();
  if (!process_is(pid, "lttng-sessiond")) {
    ::unlink(kMarkerFile);
    return Status::ok();  // already gone
  }
  std::vector<pid_t> kids = children_of(pid);
  if (::kill(pid, SIGTERM) != 0 && errno != ESRCH) return errno_status("kill lttng-sessiond", errno);
  ::kill(pid, SIGCONT);  // a stopped daemon handles the SIGTERM only once it runs
  if (!wait_gone(pid, std::chrono::seconds(10))) {
    ::kill(pid, SIGKILL);
    if (!wait_gone(pid, std::chrono::seconds(5))) {
      return Status::error("lttng-sessiond pid " + std::to_string(pid) + " does not exit");
    }
  }
  // Its consumer daemons exit with it; make sure.
  for (pid_t k : kids) {
    if (process_is(k, "lttng-consumerd") || process_is(k, "lttng-sessiond")) {
      if (!wait_gone(k, std::chrono::seconds(5))) {
        ::kill(k, SIGKILL);
        (void)wait_gone(k, std::chrono::seconds(2));
      }
    }
  }
  ::unlink(kMarkerFile);
  return Status::ok();
}

Status use_sessiond(bool kernel, pid_t* own) {
  std::lock_guard<std::mutex> lock(g_own_mu);
  *own = 0;
  if (g_own && g_own_owner != ::getpid()) g_own = 0;  // the parent's, in a forked child
  if (g_own && !process_is(g_own, "lttng-sessiond")) {
    (void)stop_sessiond(g_own);  // gone already: removes the marker
    g_own = 0;
  }
  if (g_own && kernel && !g_own_kernel) {
    // Started for the user-space domain (--no-kernel): start one that loads
    // the kernel tracer instead.
    TB_TRY(stop_sessiond(g_own));
    g_own = 0;
  }
  if (g_own) {
    *own = g_own;
    return Status::ok();
  }
  bool alive = false;
  TB_TRY(probe_sessiond(&alive));  // one that does not answer is not replaced: its socket is in use
  if (alive) return Status::ok();  // someone else's
  pid_t pid = 0;
  Status s = start_sessiond(&pid, kernel);
  // Another process may have started one in between: use it, not ours.
  if (!s) return probe_sessiond(&alive) && alive ? Status::ok() : s;
  g_own = pid;
  g_own_owner = ::getpid();
  g_own_kernel = kernel;
  keep_until_exit(release_at_exit);
  *own = pid;
  return Status::ok();
}

pid_t own_sessiond() {
  std::lock_guard<std::mutex> lock(g_own_mu);
  return g_own && g_own_owner == ::getpid() && process_is(g_own, "lttng-sessiond") ? g_own : 0;
}

Status release_own_sessiond() {
  std::lock_guard<std::mutex> lock(g_own_mu);
  if (!g_own || g_own_owner != ::getpid()) return Status::ok();
  Status s = stop_sessiond(g_own);
  g_own = 0;
  return s;
}

std::string stop_orphaned_sessiond(bool stop) {
  std::istringstream in(common::read_text(kMarkerFile));
  pid_t daemon = 0, owner = 0;
  if (!(in >> daemon >> owner)) return {};
  if (owner > 0 && !gone(owner)) return {};  // its owner still runs and will stop it
  std::string what;
  if (!stop) {
    return process_is(daemon, "lttng-sessiond") ? "lttng-sessiond pid " + std::to_string(daemon) +
                                                      " (started by tracebench pid " + std::to_string(owner) + ")"
                                                : "";
  }
  if (process_is(daemon, "lttng-sessiond")) {
    Status s = stop_sessiond(daemon);
    what = s ? "lttng-sessiond pid " + std::to_string(daemon) + " (started by tracebench pid " + std::to_string(owner) +
                   ")"
             : "failed to stop lttng-sessiond pid " + std::to_string(daemon) + ": " + s.message();
  }
  ::unlink(kMarkerFile);
  return what;
}

}  // namespace tracebench::lttng
