#include "session.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "stap_spawn.h"
#include "tracers/common/proc.h"
#include "compile.h"
#include "script.h"

namespace fs = std::filesystem;

namespace tracebench::systemtap {
namespace {

std::uint64_t first_number(const std::string& text, const std::regex& re) {
  std::smatch m;
  return std::regex_search(text, m, re) ? std::stoull(m[1].str()) : 0;
}

bool wait_exit(pid_t pid, unsigned timeout_ms, int* ws) {
  for (unsigned waited = 0;; waited += 20) {
    const pid_t r = waitpid(pid, ws, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (waited >= timeout_ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

SessionOutput parse_output(const std::string& out, const std::string& err) {
  SessionOutput o;
  std::istringstream in(out);
  const std::string count = kCountPrefix;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(count, 0) == 0 && line.find_first_not_of("0123456789", count.size()) == std::string::npos &&
        line.size() > count.size()) {
      o.count_seen = true;
      o.count = std::stoull(line.substr(count.size()));
    }
    if (line.rfind(kRecordPrefix, 0) == 0) {
      const char* digits = line.c_str() + std::string(kRecordPrefix).size();
      char* end = nullptr;
      const unsigned long long n = std::strtoull(digits, &end, 10);
      if (end != digits && *end == '\0') o.records.push_back(n);
      continue;
    }
    // "tracebench_stap extra <k> <count>"
    if (line.rfind(kExtraPrefix, 0) == 0) {
      unsigned long long k = 0, n = 0;
      if (std::sscanf(line.c_str() + std::string(kExtraPrefix).size(), "%llu %llu", &k, &n) == 2 && k >= 1 &&
          k < kMaxHandlers) {
        if (o.extra.size() < k) o.extra.resize(k, kNoCount);
        o.extra[k - 1] = n;
      }
    }
  }
  const std::string all = err + "\n" + out;
  o.errors = first_number(all, std::regex(R"(Number of errors: (\d+))"));
  o.skipped = first_number(all, std::regex(R"(skipped probes: (\d+))"));
  o.transport_failures = first_number(all, std::regex(R"(There were (\d+) transport failures)"));
  // The module's own warnings (skipped probes, transport failures) go to
  // stderr; a script's runtime errors may come with its output.
  std::istringstream e(all);
  for (std::string line; std::getline(e, line);)
    if (line.find("WARNING") != std::string::npos || line.find("ERROR") != std::string::npos)
      o.warnings += (o.warnings.empty() ? "" : "; ") + line;
  return o;
}

bool module_loaded(const std::string& name) {
  std::error_code ec;
  return !name.empty() && fs::exists("/sys/module/" + name, ec);
}

void remove_module(const std::string& staprun, const std::string& name) noexcept {
  if (name.empty() || !module_loaded(name)) return;
  int status = 0;
  (void)run_logged({staprun.empty() ? "staprun" : staprun, "-d", name}, "", "/dev/null", &status);
}

Status StapSession::start(const std::string& staprun, const std::string& ko, const std::vector<std::string>& params,
                          const std::string& dir, unsigned timeout_s, Runtime runtime) {
  kill_now();
  runtime_ = runtime;
  // The BPF runtime loads no module: nothing to check or remove by name.
  module_ = runtime == Runtime::kBpf ? std::string() : fs::path(ko).stem().string();
  dir_ = dir;
  staprun_ = staprun;
  if (module_loaded(module_))
    return Status::error("systemtap: module " + module_ +
                         " is loaded already (another run of the same script, or a leftover: tracebench cleanup)");
  // A previous session's output must not pass for this one's ready line.
  std::error_code ec;
  fs::remove(dir + "/out.txt", ec);
  std::vector<std::string> argv = {staprun, "-o", dir + "/out.txt"};
  if (runtime == Runtime::kBpf) {
    argv.insert(argv.end(), params.begin(), params.end());
    argv.push_back(ko);
  } else {
    argv.push_back(ko);
    argv.insert(argv.end(), params.begin(), params.end());
  }
  // Its own process group: a Ctrl-C of the terminal reaches tracebench,
  // whose teardown stops stapio in order (end probe, unload).
  pid_t pid = 0;
  if (Status s = spawn({.argv = argv,
                        .stdout_path = dir + "/stdout.txt",
                        .stderr_path = dir + "/stderr.txt",
                        .own_group_default_signals = true},
                       &pid);
      !s)
    return Status::error("systemtap: " + s.message());
  pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (common::read_text(dir + "/out.txt").find(kReadyLine) == std::string::npos) {
    int ws = 0;
    if (waitpid(pid_, &ws, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::error("systemtap: " + fs::path(staprun).filename().string() + " " + ko +
                           " exited before the script started: " + common::read_text(dir + "/stderr.txt"));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill_now();
      return Status::error("systemtap: " + fs::path(staprun).filename().string() + " " + ko +
                           " did not start the script within " + std::to_string(timeout_s) +
                           " s (option ready_timeout_s): " + common::read_text(dir + "/stderr.txt"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::ok();
}

Status StapSession::stop(SessionOutput* out) {
  if (pid_ <= 0) return Status::error("systemtap: no session to stop");
  ::kill(pid_, SIGTERM);
  int ws = 0;
  const bool exited = wait_exit(pid_, 120000, &ws);
  if (!exited) {
    kill_now();
    return Status::error("systemtap: stapio did not exit within 120 s of SIGTERM; killed, module removed");
  }
  pid_ = -1;
  *out = parse_output(common::read_text(dir_ + "/out.txt"), common::read_text(dir_ + "/stderr.txt"));
  if (module_loaded(module_)) {
    remove_module(staprun_, module_);
    return Status::error("systemtap: module " + module_ + " was still loaded after stapio exited (removed)");
  }
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
    return Status::error("systemtap: " + fs::path(staprun_).filename().string() + " " +
                         (WIFEXITED(ws) ? "exited with status " + std::to_string(WEXITSTATUS(ws))
                                        : "was killed by signal " + std::to_string(WTERMSIG(ws))) +
                         ": " + common::read_text(dir_ + "/stderr.txt"));
  return Status::ok();
}

void StapSession::kill_now() noexcept {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int ws = 0;
    if (!wait_exit(pid_, 30000, &ws)) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, &ws, 0);
    }
    pid_ = -1;
  }
  remove_module(staprun_, module_);
}

}  // namespace tracebench::systemtap
