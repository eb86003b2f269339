// What the reference side sets up outside this process (a tracefs instance,
// an LTTng session, a session daemon, a child process: bpftrace, perf, the
// loop) is undone on every way out: by its owner when the step ends, and on
// SIGINT/SIGTERM/SIGHUP or an uncaught exception by the harness's emergency
// path (keep_until_exit(), tracebench/tracer.h), which runs what is still
// registered, last registered first.  An Undo runs at most once.
#pragma once

#include <functional>
#include <string>

namespace tracebench::crosscheck {

class Undo {
 public:
  Undo() = default;
  // Registers `fn` (it must not throw) until run() or the destructor.
  explicit Undo(std::function<void()> fn);
  ~Undo() { run(); }
  Undo(Undo&& o) noexcept : id_(o.id_) { o.id_ = 0; }
  Undo& operator=(Undo&& o) noexcept;
  Undo(const Undo&) = delete;
  Undo& operator=(const Undo&) = delete;

  // Runs it now (if it has not run) and forgets it.
  void run();
  // Forgets it without running it (what it would undo is gone).
  void dismiss();
  bool armed() const { return id_ != 0; }

 private:
  unsigned long id_ = 0;
};

// Runs every registered undo, last registered first; for the emergency path
// and tests.  Returns how many ran.
std::size_t undo_all();

}  // namespace tracebench::crosscheck
