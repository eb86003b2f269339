// Sends stdout and stderr to /dev/null for its lifetime, while a command's
// runs print their progress and Google Benchmark's table (unless the user
// asked for --verbose); the command's own lines come between the runs.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace tracebench {

class QuietOutput {
 public:
  explicit QuietOutput(bool on) {
    if (!on) return;
    std::cout.flush();
    std::fflush(nullptr);
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0) return;
    saved_out_ = dup(STDOUT_FILENO);
    saved_err_ = dup(STDERR_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    close(null);
  }
  ~QuietOutput() {
    std::cout.flush();
    std::fflush(nullptr);
    if (saved_out_ >= 0) dup2(saved_out_, STDOUT_FILENO), close(saved_out_);
    if (saved_err_ >= 0) dup2(saved_err_, STDERR_FILENO), close(saved_err_);
  }
  QuietOutput(const QuietOutput&) = delete;
  QuietOutput& operator=(const QuietOutput&) = delete;

 private:
  int saved_out_ = -1, saved_err_ = -1;
};

}  // namespace tracebench
