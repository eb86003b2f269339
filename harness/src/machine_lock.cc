// The machine lock (tracebench/machine_lock.h): flock(2) on two files, the
// holder's record in the first, children inheriting the open file.
#include "tracebench/machine_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "tracebench/shared_file.h"
#include "tracebench/util.h"

namespace tracebench {
namespace {

constexpr const char* kLockName = "tracebench.lock";
constexpr const char* kConcurrentName = "tracebench.concurrent";
constexpr const char* kInheritEnv = "TRACEBENCH_LOCK_FD";
constexpr const char* kParentEnv = "TRACEBENCH_LOCK_PARENT";

std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

std::string read_link(const char* path) {
  char buf[256];
  ssize_t n = readlink(path, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

double now_s() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::string path_of(const char* name) { return lock_dir() + "/" + name; }

// The lock directories are writable by anyone: a name planted there is
// refused, never followed (shared_file.h).
Status open_lock_file(const std::string& path, const char* what, int* fd) {
  Status st = Status::ok();
  *fd = open_shared_file(path, &st);
  if (*fd < 0) return Status::error(fmt::format("{}: the machine lock: {}", what, st.message()));
  return Status::ok();
}

std::string read_fd_text(int fd) {
  std::string s(4096, '\0');
  ssize_t n = pread(fd, s.data(), s.size(), 0);
  s.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return s;
}

// Who holds the lock open in `fd`, in words.
std::string holder_of(int fd) {
  LockHolder h;
  // A holder writes its record right after it takes the lock: give it a moment.
  for (int i = 0; i < 20; ++i) {
    if (parse_lock_record(read_fd_text(fd), &h)) {
      LockHolder me = this_process();
      return describe_holder(h, me.pid_ns, me.boot_id);
    }
    usleep(10000);
  }
  return "a process that has not written its record (" + path_of(kLockName) + " is empty)";
}

bool same_file(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  return fstat(fd, &a) == 0 && lstat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void touch(int fd) {
  if (fd >= 0) (void)futimens(fd, nullptr);
}

// A child measuring under its parent's lock ends with its parent: killed
// (SIGKILL cannot be caught), the parent closes nothing, and the child would
// go on measuring under a lock that stays held though nobody waits for it.
// The kernel sends the child SIGTERM when the process that started it dies
// (the child tears down and exits 130).  A parent already gone before this
// point is refused: getppid() is no longer it, and it is not alive (a
// wrapper script between the two leaves the parent further up, alive).
// True when the parent lives.
bool end_with_parent() {
  const char* env = std::getenv(kParentEnv);
  long parent = 0;
  if (!env || std::from_chars(env, env + std::strlen(env), parent).ec != std::errc() || parent <= 0) return true;
  if (parent == getpid()) return true;  // handed to a command in the same process
  (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
  return getppid() == parent || kill(static_cast<pid_t>(parent), 0) == 0 || errno == EPERM;
}

}  // namespace

std::string format_lock_record(const LockHolder& h) {
  std::string cmd = h.command;
  for (char& c : cmd)
    if (c == '\n' || c == '\r') c = ' ';
  return fmt::format("pid={}\npid_ns={}\nstart_ticks={}\nsince={}\nboot_id={}\ncommand={}\n", h.pid, h.pid_ns,
                     h.start_ticks, h.started_utc, h.boot_id, cmd);
}

bool parse_lock_record(std::string_view text, LockHolder* out) {
  LockHolder h;
  bool have_pid = false;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    auto number = [&](auto* v) {
      auto r = std::from_chars(value.data(), value.data() + value.size(), *v);
      return r.ec == std::errc() && r.ptr == value.data() + value.size();
    };
    if (key == "pid") {
      have_pid = number(&h.pid) && h.pid > 0;
      if (!have_pid) return false;
    } else if (key == "pid_ns") {
      h.pid_ns = value;
    } else if (key == "start_ticks") {
      if (!number(&h.start_ticks)) h.start_ticks = 0;
    } else if (key == "since") {
      h.started_utc = value;
    } else if (key == "boot_id") {
      h.boot_id = value;
    } else if (key == "command") {
      h.command = value;
    }
  }
  if (!have_pid) return false;
  *out = h;
  return true;
}

std::string describe_holder(const LockHolder& h, const std::string& here_ns, const std::string& here_boot) {
  std::string s = fmt::format("pid {}", h.pid);
  if (!h.pid_ns.empty() && h.pid_ns != here_ns)
    s += fmt::format(" of another pid namespace ({}; that pid means nothing here)", h.pid_ns);
  if (!h.started_utc.empty()) s += ", since " + h.started_utc;
  if (!h.boot_id.empty() && !here_boot.empty() && h.boot_id != here_boot) s += " (recorded in an earlier boot)";
  s += ": " + (h.command.empty() ? std::string("command unknown") : h.command);
  return s;
}

LockHolder this_process() {
  LockHolder h;
  h.pid = getpid();
  h.pid_ns = read_link("/proc/self/ns/pid");
  h.boot_id = first_line("/proc/sys/kernel/random/boot_id");
  h.started_utc = utc_now_iso8601();
  // Field 22 of stat, counted after the command name's closing parenthesis.
  std::string stat = first_line("/proc/self/stat");
  if (std::size_t p = stat.rfind(')'); p != std::string::npos) {
    std::istringstream in(stat.substr(p + 2));
    std::string field;
    for (int i = 3; i <= 22 && in >> field; ++i) {
      if (i == 22) h.start_ticks = std::strtoull(field.c_str(), nullptr, 10);
    }
  }
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (char& c : raw)
    if (c == '\0') c = ' ';
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  h.command = raw;
  return h;
}

std::string lock_dir() {
  if (const char* d = std::getenv("TRACEBENCH_LOCK_DIR"); d && *d) return d;
  struct stat st {};
  if (stat("/run/lock", &st) == 0 && S_ISDIR(st.st_mode) && access("/run/lock", W_OK) == 0) return "/run/lock";
  return "/tmp";
}

MachineLock::~MachineLock() { release(); }

// The flock on fd_ is this object's: its holder record says who, since now.
void MachineLock::take_held_lock() {
  held_ = true;
  if (ftruncate(fd_, 0) == 0) {
    const std::string rec = format_lock_record(this_process());
    (void)!pwrite(fd_, rec.data(), rec.size(), 0);
  }
  since_ = now_s();
}

// A parent's lock, handed down: valid only if the descriptor is the lock
// file and flock on that very open file succeeds (it is the holder's), and
// only while the parent that handed it down lives.  *taken: it is this
// object's now.
Status MachineLock::take_inherited(const std::string& path, const std::string& cpath, const char* what, bool* taken) {
  *taken = false;
  const char* env = std::getenv(kInheritEnv);
  if (!env) return Status::ok();
  int fd = -1;
  auto r = std::from_chars(env, env + std::strlen(env), fd);
  if (r.ec == std::errc() && fd >= 0) {
    const bool exclusive = same_file(fd, path) && flock(fd, LOCK_EX | LOCK_NB) == 0;
    const bool shared = !exclusive && same_file(fd, cpath) && flock(fd, LOCK_SH | LOCK_NB) == 0;
    if ((exclusive || shared) && !end_with_parent())
      return Status::error(
          fmt::format("{}: the command that handed down its machine lock (pid {}) is gone: "
                      "nothing is measured under a lock nobody holds for it",
                      what, std::getenv(kParentEnv)));
    if (exclusive) {
      fd_ = fd;
      inherited_ = *taken = true;
      since_ = now_s();
      return Status::ok();
    }
    if (shared) {
      concurrent_fd_ = fd;
      inherited_ = concurrent_ = *taken = true;
      concurrent_with_ = "the command that started this one (run with --allow-concurrent)";
      touch(fd);
      return Status::ok();
    }
  }
  unsetenv(kInheritEnv);  // not ours to pass on
  unsetenv(kParentEnv);
  return Status::ok();
}

Status MachineLock::acquire(const LockRequest& req, const char* what, const std::atomic<bool>* stop) {
  release();
  const std::string path = path_of(kLockName), cpath = path_of(kConcurrentName);
  bool inherited = false;
  TB_TRY(take_inherited(path, cpath, what, &inherited));
  if (inherited) return Status::ok();
  TB_TRY(open_lock_file(path, what, &fd_));
  const double deadline = now_s() + req.wait_s;
  bool said_waiting = false;
  for (;;) {
    if (flock(fd_, LOCK_EX | LOCK_NB) == 0) {
      take_held_lock();
      return Status::ok();
    }
    if (errno != EWOULDBLOCK) {
      Status s = errno_status(fmt::format("{}: flock {}", what, path), errno);
      release();
      return s;
    }
    const std::string who = holder_of(fd_);
    if (req.mode == LockMode::kConcurrent) {
      close(fd_);
      fd_ = -1;
      TB_TRY(open_lock_file(cpath, what, &concurrent_fd_));
      // Only `cleanup` holds it exclusively, and briefly.
      for (int i = 0; flock(concurrent_fd_, LOCK_SH | LOCK_NB) != 0; ++i) {
        if (i == 100) {
          release();
          return Status::error(fmt::format("{}: {} stayed locked for 10 s (a `tracebench cleanup`?)", what, cpath));
        }
        usleep(100000);
      }
      touch(concurrent_fd_);
      concurrent_ = true;
      concurrent_with_ = who;
      std::fprintf(stderr,
                   "tracebench: warning: running beside %s (--allow-concurrent): each run's probes and load are in "
                   "the other's figures; the results are marked concurrent\n",
                   who.c_str());
      return Status::ok();
    }
    const bool waiting = req.mode == LockMode::kWait && now_s() < deadline && !(stop && stop->load());
    if (!waiting) {
      release();
      return Status::error(fmt::format(
          "{}: the machine lock {} is held by {}{}: one measuring run per machine at a time (a uprobe traps in "
          "every process that maps its file, and each run loads the CPUs the other measures on). Let it finish, "
          "or wait for it with --wait-lock[=SECONDS], or run beside it with --allow-concurrent (the results are "
          "then marked concurrent)",
          what, path, who, req.mode == LockMode::kWait ? fmt::format(" (waited {:g} s)", req.wait_s) : std::string()));
    }
    if (!said_waiting) {
      std::fprintf(stderr, "tracebench: waiting up to %g s for the machine lock %s, held by %s\n", req.wait_s,
                   path.c_str(), who.c_str());
      said_waiting = true;
    }
    usleep(100000);
  }
}

Status MachineLock::acquire_for_cleanup() {
  release();
  const std::string path = path_of(kLockName), cpath = path_of(kConcurrentName);
  TB_TRY(open_lock_file(path, "tracebench cleanup", &fd_));
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string who = holder_of(fd_);
    release();
    return Status::error(
        fmt::format("the machine lock {} is held by {}: a run is alive, so what tracebench "
                    "processes made is not left over, whatever pid namespace it was named in; "
                    "nothing removed (run cleanup when it has finished)",
                    path, who));
  }
  if (Status st = open_lock_file(cpath, "tracebench cleanup", &concurrent_fd_); !st) {
    release();
    return st;
  }
  if (flock(concurrent_fd_, LOCK_EX | LOCK_NB) != 0) {
    release();
    return Status::error(
        fmt::format("{} is held: a command run with --allow-concurrent is alive; nothing removed "
                    "(run cleanup when it has finished)",
                    cpath));
  }
  take_held_lock();
  return Status::ok();
}

bool MachineLock::others_ran_beside() const {
  if (concurrent_) return true;
  const std::string cpath = path_of(kConcurrentName);
  struct stat st {};
  if (lstat(cpath.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;  // never created: nobody ran beside
  const double touched = static_cast<double>(st.st_mtim.tv_sec) + 1e-9 * static_cast<double>(st.st_mtim.tv_nsec);
  if (touched >= since_) return true;
  // One that started before this lock was taken and still runs holds it shared.
  Status refused = Status::ok();
  int fd = open_shared_file_readonly(cpath, &refused);
  if (fd < 0) return false;
  bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
  close(fd);  // releases it at once if taken
  return held;
}

Status MachineLock::share_with_children() {
  const int fd = fd_ >= 0 ? fd_ : concurrent_fd_;
  if (fd < 0) return Status::error("no machine lock to share");
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) return errno_status("fcntl(F_SETFD)", errno);
  setenv(kInheritEnv, std::to_string(fd).c_str(), 1);
  setenv(kParentEnv, std::to_string(getpid()).c_str(), 1);
  return Status::ok();
}

void MachineLock::release() {
  if (concurrent_fd_ >= 0) {
    if (concurrent_) touch(concurrent_fd_);  // the holder learns someone ran beside it
    if (!inherited_) close(concurrent_fd_);
  }
  if (fd_ >= 0 && !inherited_) {
    if (held_) {
      // Cleared before it is released: a free lock has an empty record.
      (void)!ftruncate(fd_, 0);
      flock(fd_, LOCK_UN);
    }
    close(fd_);  // a refused command's open never touches the holder's record
  }
  fd_ = concurrent_fd_ = -1;
  inherited_ = concurrent_ = held_ = false;
}

}  // namespace tracebench
