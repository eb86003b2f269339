// What adapters keep until exit (tracer.h keep_until_exit) is released on
// every way out of the process: a normal exit, a signal that stops a run
// (the watcher's path), an uncaught exception (the terminate handler).  Each
// case runs in a forked child; the release writes a byte to a pipe.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <string>

#include "tracebench/runner.h"
#include "tracebench/tracer.h"

namespace tracebench {
namespace {

int g_pipe = -1;
void write_r() { (void)!::write(g_pipe, "r", 1); }
void write_s() { (void)!::write(g_pipe, "s", 1); }

struct Outcome {
  int exit_code = -1;
  std::string released;  // the bytes the releases wrote, in order
};

template <class Body>
Outcome in_child(Body body) {
  int p[2];
  if (::pipe(p) != 0) return {};
  pid_t child = ::fork();
  if (child == 0) {
    ::close(p[0]);
    g_pipe = p[1];
    body();
    ::_exit(99);  // the body was to leave through the path under test
  }
  ::close(p[1]);
  Outcome o;
  char buf[16];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0) o.released.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  return o;
}

TEST(KeptUntilExit, ReleasedAtANormalExitLastKeptFirstAndOnce) {
  Outcome o = in_child([] {
    keep_until_exit(write_r);
    keep_until_exit(write_s);
    keep_until_exit(write_r);  // again: still once
    std::exit(0);
  });
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.released, "sr");
}

TEST(KeptUntilExit, NothingKeptNothingReleased) {
  Outcome o = in_child([] { std::exit(0); });
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.released, "");
}

TEST(KeptUntilExit, ReleasedWhenSignalsStopTheProcess) {
  // The first signal asks the run to stop; a second one makes the watcher
  // tear down at once and _exit(130), which skips atexit.
  Outcome o = in_child([] {
    install_signal_watcher();
    keep_until_exit(write_r);
    ::kill(::getpid(), SIGTERM);
    ::usleep(200 * 1000);
    ::kill(::getpid(), SIGTERM);
    for (int i = 0; i < 100; ++i) ::usleep(100 * 1000);
  });
  EXPECT_EQ(o.exit_code, 130);
  EXPECT_EQ(o.released, "r");
}

TEST(KeptUntilExit, ReleasedOnAnUncaughtException) {
  Outcome o = in_child([] {
    install_signal_watcher();
    keep_until_exit(write_r);
    std::terminate();
  });
  EXPECT_EQ(o.exit_code, 70);
  EXPECT_EQ(o.released, "r");
}

}  // namespace
}  // namespace tracebench
