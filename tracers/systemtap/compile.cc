#include "compile.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

#include "stap_spawn.h"
#include "tracers/common/proc.h"

namespace fs = std::filesystem;

namespace tracebench::systemtap {
namespace {

constexpr const char* kStapRuntime = "/usr/share/systemtap/runtime";

// The tail of a log's text: the compiler's error is at its end.
std::string tail_of(const std::string& text, std::size_t lines) {
  std::istringstream in(text);
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

std::string release_of_headers(const std::string& headers) {
  fs::path p = fs::path(headers).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // a trailing '/'
  const std::string name = p.filename().string();
  const std::string prefix = "linux-headers-";
  if (name.rfind(prefix, 0) == 0) return name.substr(prefix.size());
  if (name == "build" && p.parent_path().parent_path().filename() == "modules")
    return p.parent_path().filename().string();
  return "";
}

bool is_real_system_map(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  int lines = 0;
  while (lines < 2 && std::getline(f, line)) {
    if (line.find("The real System.map is in") != std::string::npos) return false;
    ++lines;
  }
  return lines >= 2;
}

std::string real_system_map(const std::string& release) {
  if (release.empty()) return "";
  for (const std::string& path : {cache_root() + "/System.map-" + release, "/usr/lib/debug/boot/System.map-" + release,
                                  "/boot/System.map-" + release})
    if (is_real_system_map(path)) return path;
  return "";
}

std::string compile_hint(const std::string& log_text, const std::string& release) {
  if (log_text.find("process return probes not available") == std::string::npos) return "";
  const std::string rel = release.empty() ? "<release>" : release;
  return "SystemTap compiles a user function's return probe only when the kernel's System.map names "
         "arch_uretprobe_hijack_return_addr, and there is no real System.map for " +
         rel + " here (Debian's headers carry none; /boot's is a placeholder; the real one is in linux-image-" + rel +
         "-dbg): scripts/vm/fetch-system-map.sh " + rel + " keeps it in tracebench's cache (~35 s, no install)";
}

namespace {

// Links build/System.map to the kernel's real one when there is one and
// the link is not there yet (a tree made before it was fetched gets it now).
void link_system_map(const std::string& build, const std::string& release) {
  const std::string map = real_system_map(release);
  std::error_code ec;
  if (map.empty() || fs::exists(build + "/System.map", ec)) return;
  fs::remove(build + "/System.map", ec);  // a link left dangling
  fs::create_symlink(map, build + "/System.map", ec);
}

}  // namespace

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
  out->release = release_of_headers(headers);
  link_system_map(build, out->release);
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

namespace {

// A sysroot under `work` with `exe` at `path` (a hard link, else a copy):
// stap resolves process("<path>") in it and compiles <path> into the
// module, where the probed process runs the same build.
Status exe_sysroot(const std::string& work, const std::string& exe, const std::string& path, std::string* root) {
  std::error_code ec;
  const fs::path at = fs::path(work) / "sysroot" / fs::path(path).relative_path();
  fs::create_directories(at.parent_path(), ec);
  if (ec) return Status::error("mkdir " + at.parent_path().string() + ": " + ec.message());
  fs::create_hard_link(exe, at, ec);
  if (ec) {
    ec.clear();
    fs::copy_file(exe, at, ec);
  }
  if (ec) return Status::error("copy " + exe + " into stap's sysroot: " + ec.message());
  *root = work + "/sysroot";
  return Status::ok();
}

// The text stap compiles: the companion module's path in place of its token.
Status text_for(const StapScript& script, const CompileFiles& files, std::string* text) {
  *text = script.text;
  if (!script.needs_kmod) return Status::ok();
  if (files.kmod.empty())
    return Status::error("systemtap: " + script.module +
                         " probes the companion module: its .ko is needed to compile it");
  const auto at = text->find(kKmodPathToken);
  if (at != std::string::npos) text->replace(at, std::string(kKmodPathToken).size(), fs::absolute(files.kmod).string());
  return Status::ok();
}

// stap's command line for the script's runtime.  The BPF runtime: its
// tracepoint probes need --compatible=4.1 for the guest's headers ("new BPF
// TRACEPOINT behavior not supported by target kernel"); the module
// runtime's -R and overload define do not apply.
std::vector<std::string> stap_argv(const CompileTree& tree, const StapScript& script, const std::string& sysroot) {
  std::vector<std::string> argv = {"stap", "-r", tree.build};
  if (!sysroot.empty()) argv.push_back("--sysroot=" + sysroot);
  if (script.runtime == Runtime::kBpf)
    argv.insert(argv.end(), {"--runtime=bpf", "--compatible=4.1"});
  else
    argv.insert(argv.end(), {"-R", tree.runtime, kCompileDefine});
  argv.insert(argv.end(), {"-p4", "-m", script.module, "script.stp"});
  return argv;
}

}  // namespace

Status compile_module(const CompileTree& tree, const StapScript& script, const CompileFiles& files, double* seconds,
                      bool* cached) {
  const std::string ko = tree.modules + "/" + compiled_file(script);
  *seconds = 0;
  *cached = access(ko.c_str(), R_OK) == 0;
  if (*cached) return Status::ok();
  std::string text;
  TB_TRY(text_for(script, files, &text));
  if (!script.exe_path.empty() && files.exe.empty())
    return Status::error("systemtap: " + script.module + " probes " + script.exe_path +
                         ": the executable is needed to compile it");
  char tmpl[] = "/tmp/tracebench-stap-XXXXXX";
  if (!mkdtemp(tmpl)) return Status::error(std::string("mkdtemp: ") + std::strerror(errno));
  const std::string work = tmpl;
  std::error_code ec;
  std::string sysroot;
  Status st = Status::ok();
  if (!script.exe_path.empty() && !fs::equivalent(files.exe, script.exe_path, ec))
    st = exe_sysroot(work, files.exe, script.exe_path, &sysroot);
  std::ofstream(work + "/script.stp") << text;
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  if (st) st = run_logged(stap_argv(tree, script, sysroot), work, work + "/stap.log", &status);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (st && status != 0) {
    std::ifstream log(work + "/stap.log");
    const std::string text(std::istreambuf_iterator<char>(log), {});
    const std::string hint = compile_hint(text, tree.release);
    st = Status::error("stap -p4 of " + script.module + " against " + tree.build + " failed (status " +
                       std::to_string(status) + "):" + tail_of(text, 12) + (hint.empty() ? "" : "\n" + hint));
  }
  if (st) {
    fs::copy_file(work + "/" + compiled_file(script), ko + ".tmp", fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(ko + ".tmp", ko, ec);
    if (ec) st = Status::error("keep " + ko + ": " + ec.message());
  }
  fs::remove_all(work, ec);
  return st;
}

}  // namespace tracebench::systemtap
