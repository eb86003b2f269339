// A child process of the reference side (the loop program, bpftrace, perf,
// the lttng CLI): started with fork/exec from the command's thread, in its
// own process group (a Ctrl-C of the terminal reaches tracebench, which then
// stops its children in order), every signal at its default and unblocked
// (the harness blocks them in its threads), on the CPUs it is given, killed
// by the kernel if tracebench dies (PR_SET_PDEATHSIG), and killed on every
// way out of the step that started it (undo.h).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "tracebench/status.h"
#include "undo.h"

namespace tracebench::crosscheck {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] looked up in PATH unless it holds a '/'
  std::vector<int> cpus;          // its affinity; empty: this thread's
  int fifo_priority = 0;          // > 0: SCHED_FIFO at this priority (other processes do not preempt it)
  bool stdin_pipe = false;        // else /dev/null
  bool stdout_pipe = false;       // else stdout_path, or /dev/null
  std::string stdout_path;
  std::string stderr_path;  // empty: /dev/null
};

class Child {
 public:
  Child() = default;
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  Status start(const ChildSpec& spec);
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  const std::string& name() const { return name_; }

  // One line to its stdin ("\n" added).
  Status write_line(const std::string& line);
  // The next line of its stdout, without "\n", within `timeout_s`; an error
  // on end of file (it exited: its stderr is quoted), on the timeout, or
  // when tracebench is asked to stop (SIGINT/SIGTERM).
  Status read_line(double timeout_s, std::string* line);
  // The rest of its stdout up to end of file (it closed it or exited),
  // within `timeout_s`.
  Status read_to_end(double timeout_s, std::string* text);
  // Sends `sig` to the child (not its group).
  void signal(int sig) const;
  // Waits up to `timeout_s` for it to exit: its wait status in *status;
  // false when it is still running.
  bool wait(double timeout_s, int* status);
  // SIGKILL to its process group, then reaped.
  void kill();
  // Its stderr as far as written ("" without a stderr file).
  std::string stderr_text() const;

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  int status_ = 0;  // its wait status, once reaped
  std::string name_, stderr_path_, buffered_;
  Undo undo_;
  void close_pipes();
};

// Runs a command to its end (stdout to `out`, if given) within `timeout_s`:
// an error names the command, its exit status and its stderr.
Status run_to_end(ChildSpec spec, double timeout_s, std::string* out = nullptr);

// The exit of a wait status in words ("exit 1", "killed by SIGKILL").
std::string describe_wait_status(int status);

// Whether `program` is found in PATH (or is an executable path).
bool on_path(const std::string& program);

}  // namespace tracebench::crosscheck
