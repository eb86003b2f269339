#include "child.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tracebench/runner.h"

namespace tracebench::crosscheck {
namespace {

std::string resolve(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string p = (dir.empty() ? "." : dir) + "/" + program;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(const char* path, char* const* argv, int in, int out, int err, const cpu_set_t* cpus,
                             int fifo_priority, pid_t parent) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) sigaction(s, &dfl, nullptr);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (cpus) sched_setaffinity(0, sizeof *cpus, cpus);
  if (fifo_priority > 0) {
    sched_param p{};
    p.sched_priority = fifo_priority;
    if (sched_setscheduler(0, SCHED_FIFO, &p) != 0) _exit(126);
  }
  if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0) _exit(127);
  close_range(3, ~0U, 0);
  execv(path, argv);
  _exit(127);
}

int open_or_null(const std::string& path, int flags) {
  return open(path.empty() ? "/dev/null" : path.c_str(), flags | O_CLOEXEC, 0644);
}

}  // namespace

Child::~Child() { kill(); }

void Child::close_pipes() {
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
  in_ = out_ = -1;
}

Status Child::start(const ChildSpec& spec) {
  if (spec.argv.empty()) return Status::error("no command to start");
  name_ = spec.argv[0];
  const std::string path = resolve(spec.argv[0]);
  if (path.empty()) return Status::error(spec.argv[0] + " not found");
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1};
  if (spec.stdin_pipe && pipe2(in_pipe, O_CLOEXEC) != 0) return errno_status("pipe", errno);
  if (spec.stdout_pipe && pipe2(out_pipe, O_CLOEXEC) != 0) return errno_status("pipe", errno);
  const int in = spec.stdin_pipe ? in_pipe[0] : open_or_null("", O_RDONLY);
  const int out = spec.stdout_pipe ? out_pipe[1] : open_or_null(spec.stdout_path, O_WRONLY | O_CREAT | O_TRUNC);
  const int err = open_or_null(spec.stderr_path, O_WRONLY | O_CREAT | O_TRUNC);
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : spec.cpus) CPU_SET(c, &set);
  const pid_t parent = getpid();
  pid_t pid = (in < 0 || out < 0 || err < 0) ? -1 : fork();
  const int fork_errno = errno;
  if (pid == 0)
    exec_child(path.c_str(), argv.data(), in, out, err, spec.cpus.empty() ? nullptr : &set, spec.fifo_priority, parent);
  for (int fd : {in, out, err}) {
    if (fd >= 0) close(fd);
  }
  in_ = spec.stdin_pipe ? in_pipe[1] : -1;
  out_ = spec.stdout_pipe ? out_pipe[0] : -1;
  if (pid < 0) {
    close_pipes();
    return errno_status("start " + name_, fork_errno);
  }
  pid_ = pid;
  stderr_path_ = spec.stderr_path;
  undo_ = Undo([pid] {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
  });
  return Status::ok();
}

Status Child::write_line(const std::string& line) {
  const std::string s = line + "\n";
  if (in_ < 0 || write(in_, s.data(), s.size()) != static_cast<ssize_t>(s.size()))
    return Status::error(name_ + " did not take its input (exited?): " + stderr_text());
  return Status::ok();
}

Status Child::read_line(double timeout_s, std::string* line) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (auto nl = buffered_.find('\n'); nl != std::string::npos) {
      *line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return Status::ok();
    }
    if (g_stop_requested) return Status::error("interrupted");
    if (seconds_since(start) > timeout_s)
      return Status::error(name_ + " said nothing for " + std::to_string(static_cast<int>(timeout_s)) + " s");
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int st = 0;
      const std::string how = wait(2.0, &st) ? describe_wait_status(st) : "closed its output";
      const std::string err = stderr_text();
      return Status::error(name_ + " ended (" + how + ")" + (err.empty() ? "" : ": " + err));
    }
    buffered_.append(buf, static_cast<std::size_t>(n));
  }
}

Status Child::read_to_end(double timeout_s, std::string* text) {
  const auto start = std::chrono::steady_clock::now();
  *text = std::move(buffered_);
  buffered_.clear();
  while (out_ >= 0) {
    if (seconds_since(start) > timeout_s)
      return Status::error(name_ + " did not end its output within " + std::to_string(static_cast<int>(timeout_s)) +
                           " s");
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(out_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text->append(buf, static_cast<std::size_t>(n));
  }
  return Status::ok();
}

void Child::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

bool Child::wait(double timeout_s, int* status) {
  if (pid_ <= 0) {
    *status = status_;
    return true;
  }
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t r = waitpid(pid_, status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      status_ = r == pid_ ? *status : 0;
      undo_.dismiss();
      ::kill(-pid_, SIGKILL);  // what it left in its group
      pid_ = -1;
      close_pipes();
      return true;
    }
    if (seconds_since(start) > timeout_s) return false;
    usleep(10000);
  }
}

void Child::kill() {
  undo_.run();
  pid_ = -1;
  close_pipes();
}

std::string Child::stderr_text() const {
  if (stderr_path_.empty()) return "";
  std::ifstream f(stderr_path_);
  std::stringstream s;
  s << f.rdbuf();
  std::string t = s.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  if (t.size() > 600) t = "..." + t.substr(t.size() - 600);
  for (char& c : t) {
    if (c == '\n') c = ' ';
  }
  return t;
}

Status run_to_end(ChildSpec spec, double timeout_s, std::string* out) {
  spec.stdout_pipe = out != nullptr;
  // Its stderr, for the message when it fails.
  char tmpl[] = "/tmp/tracebench-crosscheck-stderr-XXXXXX";
  const int fd = spec.stderr_path.empty() ? mkstemp(tmpl) : -1;
  if (fd >= 0) {
    close(fd);
    spec.stderr_path = tmpl;
  }
  struct Remove {
    std::string path;
    ~Remove() {
      if (!path.empty()) unlink(path.c_str());
    }
  } remove{fd >= 0 ? tmpl : ""};
  Child c;
  TB_TRY(c.start(spec));
  std::string text;
  if (out) {
    std::string line;
    for (;;) {
      Status s = c.read_line(timeout_s, &line);
      if (!s) break;  // end of output (or the timeout: the wait below says)
      text += line + "\n";
    }
    *out = text;
  }
  int st = 0;
  if (!c.wait(out ? 2.0 : timeout_s, &st)) {
    c.kill();
    return Status::error(spec.argv[0] + " did not finish within " + std::to_string(static_cast<int>(timeout_s)) + " s");
  }
  if (g_stop_requested) return Status::error("interrupted");
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::string cmd;
    for (const auto& a : spec.argv) cmd += (cmd.empty() ? "" : " ") + a;
    const std::string err = c.stderr_text();
    return Status::error(cmd + ": " + describe_wait_status(st) + (err.empty() ? "" : ": " + err));
  }
  return Status::ok();
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by SIG") + sigabbrev_np(WTERMSIG(status));
  return "status " + std::to_string(status);
}

bool on_path(const std::string& program) { return !resolve(program).empty(); }

}  // namespace tracebench::crosscheck
