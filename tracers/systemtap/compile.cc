#include "compile.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include "stap_spawn.h"
#include "tracers/common/proc.h"

namespace fs = std::filesystem;

namespace tracebench::systemtap {
namespace {

constexpr const char* kStapRuntime = "/usr/share/systemtap/runtime";

// The tail of a log: the compiler's error is at its end.
std::string tail_of(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "\n  " + all[i];
  return out;
}

// The common headers a Debian build tree's Makefile includes ("" when none).
std::string debian_common_tree(const std::string& build) {
  std::ifstream mk(build + "/Makefile");
  std::string line;
  static const std::regex inc(R"(^include\s+(\S+)/Makefile\s*$)");
  std::smatch m;
  while (std::getline(mk, line))
    if (std::regex_match(line, m, inc) && fs::is_directory(m[1].str())) return m[1].str();
  return {};
}

Status copy_runtime(const std::string& build, const std::string& common, const std::string& dest) {
  std::error_code ec;
  if (fs::exists(dest + "/stp_task_work.c", ec)) return Status::ok();
  const std::string tmp = dest + ".tmp" + std::to_string(getpid());
  fs::remove_all(tmp, ec);
  fs::copy(kStapRuntime, tmp, fs::copy_options::recursive, ec);
  if (ec)
    return Status::error("copy " + std::string(kStapRuntime) + ": " + ec.message() + " (apt-get install systemtap)");
  std::string task_work = common::read_text(build + "/include/linux/task_work.h");
  if (task_work.empty() && !common.empty()) task_work = common::read_text(common + "/include/linux/task_work.h");
  if (task_work.find("task_work_cancel_func") != std::string::npos) {
    std::string c = common::read_text(tmp + "/stp_task_work.c");
    const std::string from1 = "typeof(&task_work_cancel)", to1 = "typeof(&task_work_cancel_func)";
    const std::string from2 = "kallsyms_lookup_name(\"task_work_cancel\")",
                      to2 = "kallsyms_lookup_name(\"task_work_cancel_func\")";
    auto p1 = c.find(from1), p2 = c.find(from2);
    if (p1 == std::string::npos || p2 == std::string::npos)
      return Status::error(
          "SystemTap's runtime stp_task_work.c is not the one this adapter knows how to patch for "
          "task_work_cancel_func()");
    c.replace(p1, from1.size(), to1);
    c.replace(c.find(from2), from2.size(), to2);
    std::ofstream(tmp + "/stp_task_work.c", std::ios::trunc) << c;
  }
  fs::rename(tmp, dest, ec);
  if (ec && !fs::exists(dest + "/stp_task_work.c")) return Status::error("rename " + tmp + ": " + ec.message());
  fs::remove_all(tmp, ec);
  return Status::ok();
}

}  // namespace

std::string cache_root() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = xdg && *xdg ? xdg : std::string(home && *home ? home : "/root") + "/.cache";
  return base + "/tracebench/systemtap";
}

Status prepare_tree(const std::string& headers, CompileTree* out) {
  std::error_code ec;
  const fs::path real = fs::canonical(headers, ec);
  if (ec || !fs::exists(real / ".config"))
    return Status::error("'" + headers +
                         "' is not a kernel build tree (no .config): apt-get install linux-headers-<release>");
  const std::string dir = cache_root() + "/" + real.filename().string();
  const std::string build = dir + "/build";
  const std::string common = debian_common_tree(real.string());
  if (!fs::exists(build + "/.config")) {
    const std::string tmp = build + ".tmp" + std::to_string(getpid());
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) return Status::error("mkdir " + tmp + ": " + ec.message());
    for (const auto& e : fs::directory_iterator(real, ec))
      fs::create_symlink(e.path(), tmp + "/" + e.path().filename().string(), ec);
    if (!common.empty() && !fs::exists(real / "source")) fs::create_symlink(common, tmp + "/source", ec);
    fs::rename(tmp, build, ec);
    if (ec && !fs::exists(build + "/.config")) return Status::error("rename " + tmp + ": " + ec.message());
    fs::remove_all(tmp, ec);
  }
  TB_TRY(copy_runtime(real.string(), common, dir + "/runtime"));
  fs::create_directories(dir + "/modules", ec);
  out->build = build;
  out->runtime = dir + "/runtime";
  out->modules = dir + "/modules";
  return Status::ok();
}

Status run_logged(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log, int* status) {
  pid_t pid = 0;
  TB_TRY(spawn({.argv = argv, .stdout_path = log, .cwd = cwd}, &pid));
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return Status::error("waitpid " + argv[0] + ": " + std::strerror(errno));
  *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  return Status::ok();
}

Status compile_module(const CompileTree& tree, const StapScript& script, const std::string& kmod, double* seconds,
                      bool* cached) {
  const std::string ko = tree.modules + "/" + compiled_file(script);
  *seconds = 0;
  *cached = access(ko.c_str(), R_OK) == 0;
  if (*cached) return Status::ok();
  char tmpl[] = "/tmp/tracebench-stap-XXXXXX";
  if (!mkdtemp(tmpl)) return Status::error(std::string("mkdtemp: ") + std::strerror(errno));
  const std::string work = tmpl;
  std::string text = script.text;
  if (script.needs_kmod) {
    if (kmod.empty()) {
      fs::remove_all(work);
      return Status::error("systemtap: " + script.module +
                           " probes the companion module: its .ko is needed to compile it");
    }
    const auto at = text.find(kKmodPathToken);
    if (at != std::string::npos) text.replace(at, std::string(kKmodPathToken).size(), fs::absolute(kmod).string());
  }
  std::ofstream(work + "/script.stp") << text;
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  // The BPF runtime: its tracepoint probes need --compatible=4.1 for the
  // guest's headers ("new BPF TRACEPOINT behavior not supported by target
  // kernel"); the module runtime's -R and overload define do not apply.
  const std::vector<std::string> argv =
      script.runtime == Runtime::kBpf
          ? std::vector<std::string>{"stap", "-r", tree.build,    "--runtime=bpf", "--compatible=4.1",
                                     "-p4",  "-m", script.module, "script.stp"}
          : std::vector<std::string>{"stap",         "-r",  tree.build, "-R",          tree.runtime,
                                     kCompileDefine, "-p4", "-m",       script.module, "script.stp"};
  Status st = run_logged(argv, work, work + "/stap.log", &status);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  if (st && status != 0)
    st = Status::error("stap -p4 of " + script.module + " against " + tree.build + " failed (status " +
                       std::to_string(status) + "):" + tail_of(work + "/stap.log", 12));
  if (st) {
    fs::copy_file(work + "/" + compiled_file(script), ko + ".tmp", fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(ko + ".tmp", ko, ec);
    if (ec) st = Status::error("keep " + ko + ": " + ec.message());
  }
  fs::remove_all(work, ec);
  return st;
}

}  // namespace tracebench::systemtap
