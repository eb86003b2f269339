// `tracebench vm --kernel <image> [--headers <dir>] -- <tracebench arguments>`
//
// Runs this very tracebench binary (plus every shared library it links) on
// another kernel under qemu, with the companion module built against that
// kernel's headers and loaded, and brings the result files back.  The work
// is done by scripts/vm/tracebench-vm.sh (module build, initramfs, qemu,
// result channel); this command finds the kernel, the headers and the
// scripts, and passes the acceleration qemu ended up with to `run`
// (--execution qemu-tcg|qemu-kvm) so emulated results are marked as such.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kmod_params.h"
#include "vm_scripts.h"
#include "tracebench/command.h"
#include "tracebench/reporter.h"
#include "tracebench/results.h"
#include "tracebench/setup_area.h"
#include "tracebench/status.h"

extern char** environ;

namespace tracebench {
namespace {

namespace fs = std::filesystem;

struct VmArgs {
  std::string kernel;
  std::string headers;
  std::string out_dir;
  std::string accel = "auto";
  std::string clock = "wall";  // icount: TCG whose clock counts instructions
  int timeout_s = 1800;
  int smp = 2;
  int mem_mb = 2048;
  bool no_kmod = false;
  bool lttng_modules = false;
  bool verbose = false;
  std::vector<std::string> files;        // extra SRC[:DEST] copied into the guest
  std::vector<std::string> bins;         // extra EXE[:DEST] copied with its shared libraries
  std::vector<std::string> kmod_params;  // NAME=VALUE for the guest's insmod
  std::vector<std::string> guest_args;
};

// Newest /boot/vmlinuz-* by version order ("6.1.0-9" < "6.1.0-56").
std::string newest_boot_kernel() {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/boot", ec)) {
    std::string n = e.path().filename().string();
    if (n.rfind("vmlinuz-", 0) == 0) found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end(),
            [](const std::string& a, const std::string& b) { return strverscmp(a.c_str(), b.c_str()) < 0; });
  return found.empty() ? std::string() : found.back();
}

volatile sig_atomic_t g_child = 0;

// The script's process group holds it, run-qemu.sh and qemu.
void forward_signal(int sig) {
  if (g_child > 0) kill(-static_cast<pid_t>(g_child), sig);
}

// Starts argv in a process group of its own that dies with this process:
// PR_SET_PDEATHSIG sends it SIGTERM when tracebench goes, even by SIGKILL
// (the scripts trap it and kill qemu, which has the same arrangement with
// its script).
Status spawn_group(const std::vector<std::string>& argv, pid_t* out) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return errno_status("fork", errno);
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(143);  // the parent died before the line above
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(cargv[0], cargv.data(), environ);
    _exit(127);
  }
  setpgid(pid, pid);  // also here: a signal may come before the child ran
  *out = pid;
  return Status::ok();
}

// Runs argv, waits, returns its exit status (128+signal when killed).
Status spawn_wait(const std::vector<std::string>& argv, int* status) {
  pid_t pid = 0;
  TB_TRY(spawn_group(argv, &pid));
  // INT/TERM/HUP go to the script's whole group (the script tears the VM
  // down and exits; qemu stops too); we wait for it instead of dying first.
  g_child = pid;
  struct sigaction fwd {
  }, old_int{}, old_term{}, old_hup{};
  fwd.sa_handler = forward_signal;
  sigemptyset(&fwd.sa_mask);
  sigaction(SIGINT, &fwd, &old_int);
  sigaction(SIGTERM, &fwd, &old_term);
  sigaction(SIGHUP, &fwd, &old_hup);
  int ws = 0;
  pid_t w;
  do { w = waitpid(pid, &ws, 0); } while (w < 0 && errno == EINTR);
  g_child = 0;
  kill(-pid, SIGKILL);  // anything of the group still there (nothing, normally)
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  if (w < 0) return errno_status("waitpid", errno);
  *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  return Status::ok();
}

// The guest's working directory is /results, and only /results comes back.
// `run --out DIR` with a relative DIR (or one under /results) lands there;
// an absolute DIR elsewhere would write where nothing comes back, so it is
// taken as the host directory the files come back to (as --out-dir) and the
// guest's run keeps its default.  Returns false with a message when that
// clashes with --out-dir, or --out has no value.
bool carry_out_to_host(VmArgs* a) {
  if (a->guest_args.empty() || a->guest_args[0] != "run") return true;
  auto& g = a->guest_args;
  for (std::size_t i = 1; i < g.size(); ++i) {
    if (g[i] == "--") break;  // Google Benchmark's flags from here
    std::string value;
    std::size_t n = 0;
    if (g[i] == "--out") {
      if (i + 1 >= g.size()) {
        std::cerr << "tracebench vm: run --out needs a directory\n";
        return false;
      }
      value = g[i + 1];
      n = 2;
    } else if (g[i].rfind("--out=", 0) == 0) {
      value = g[i].substr(6);
      n = 1;
    } else {
      continue;
    }
    if (value.empty()) {
      std::cerr << "tracebench vm: run --out is empty\n";
      return false;
    }
    fs::path p = fs::path(value).lexically_normal();
    bool comes_back = p.is_relative() ? *p.begin() != ".." : p.string().rfind("/results", 0) == 0;
    if (comes_back) continue;
    if (!a->out_dir.empty()) {
      std::cerr << "tracebench vm: run --out " << value << " is outside the guest's /results, so nothing would come "
                << "back from it; with --out-dir " << a->out_dir << ", give run a relative --out (or none)\n";
      return false;
    }
    a->out_dir = value;
    std::cerr << "tracebench vm: the guest's results come back to " << value
              << " on the host (an absolute run --out is taken as the host directory, like --out-dir)\n";
    g.erase(g.begin() + static_cast<std::ptrdiff_t>(i), g.begin() + static_cast<std::ptrdiff_t>(i + n));
    --i;
  }
  return true;
}

// Every --kmod-param names a parameter the module declares (checked against
// the module's source next to the scripts, when it is there).
bool kmod_params_known(const VmArgs& a, const std::string& scripts) {
  if (a.kmod_params.empty()) return true;
  const fs::path kmod = fs::path(scripts) / ".." / ".." / "kmod";
  const std::set<std::string> names = kmod_param_names(kmod);
  if (names.empty()) return true;  // no source here: insmod in the guest says it
  for (const auto& p : a.kmod_params) {
    const std::string name = p.substr(0, p.find('='));
    if (names.count(name)) continue;
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    std::cerr << "tracebench vm: --kmod-param " << p << ": the companion module has no parameter '" << name
              << "' (its parameters: " << known << "; " << fs::weakly_canonical(kmod).string()
              << "); nothing was built or booted\n";
    return false;
  }
  return true;
}

// Whether `name` is a tracebench command: cli.cc's own or a registered one.
bool is_command(const std::string& name) {
  for (const char* builtin : {"list", "env", "cleanup", "run", "compare"})
    if (name == builtin) return true;
  for (const auto& c : command_registry())
    if (c.name == name) return true;
  return false;
}

// The guest's command checked on the host before anything is built or
// booted: `run`'s arguments with the same plan (`run --check-for-guest`:
// names, numbers, option schemas, the benchmark filter; not what only the
// guest's kernel can tell), any other command for being one.
bool guest_command_ok(const VmArgs& a, const std::string& self) {
  if (a.guest_args[0] != "run") {
    if (is_command(a.guest_args[0])) return true;
    std::cerr << "tracebench vm: '" << a.guest_args[0]
              << "' is not a tracebench command (see tracebench --help); nothing was built or booted\n";
    return false;
  }
  std::vector<std::string> argv = {self, "run", "--check-for-guest", std::to_string(a.smp)};
  argv.insert(argv.end(), a.guest_args.begin() + 1, a.guest_args.end());
  std::vector<char*> cargv;
  for (const auto& s : argv) cargv.push_back(const_cast<char*>(s.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  int ws = 0;
  if (rc == 0) {
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
  }
  if (rc == 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) return true;
  if (rc != 0)
    std::cerr << "tracebench vm: cannot check the guest's command: spawn " << self << ": " << std::strerror(rc) << "\n";
  else
    std::cerr << "tracebench vm: the guest's run was refused on the host (above); nothing was built or booted\n";
  return false;
}

// Whether a result.json came back under `dir`.
bool results_came_back(const std::string& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() == "result.json") return true;
  }
  return false;
}

// The guest's summary on the host: the table `run` prints, from each
// result.json that came back (read with the results reader, not scraped
// from the guest's console output, which guest-output.txt keeps).
void print_guest_summaries(const std::string& dir) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() == "result.json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    RunResult run;
    if (Status s = read_run(f.string(), &run); !s) {
      std::cerr << "tracebench vm: cannot read the guest's " << f.string() << ": " << s.message() << "\n";
      continue;
    }
    Report summary;
    if (Status s = run_reporters().write("console", RunReport{run}, &summary); !s)
      std::cerr << "tracebench vm: " << s.message() << "\n";
    std::cout << "\nguest (kernel " << run.context.kernel_release << ", " << run.context.execution << "):\n"
              << summary.text << "results: " << f.string() << "\n";
  }
}

// The VM lab's own flags, each refused with what to give instead.
Status check_vm_flags(const VmArgs& a) {
  if (a.guest_args.empty())
    return Status::error(
        "nothing to run: give tracebench arguments after --, e.g.\n"
        "  tracebench vm --kernel /boot/vmlinuz-6.1.0-56-amd64 -- run --quick -w kmod_target -t kprobes");
  if (a.accel != "auto" && a.accel != "kvm" && a.accel != "tcg")
    return Status::error("--accel must be auto, kvm or tcg");
  if (a.clock == "icount" && a.accel == "kvm")
    return Status::error("--clock icount is TCG's (QEMU -icount): use --accel tcg or auto");
  for (std::size_t i = 0; i < a.kmod_params.size(); ++i) {
    const std::string& p = a.kmod_params[i];
    if (std::string why = kmod_param_problem(p); !why.empty()) return Status::error("--kmod-param '" + p + "': " + why);
    for (std::size_t k = 0; k < i; ++k) {
      if (a.kmod_params[k].substr(0, a.kmod_params[k].find('=')) == p.substr(0, p.find('=')))
        return Status::error("--kmod-param " + p.substr(0, p.find('=')) + " is given twice");
    }
  }
  if (!a.kmod_params.empty() && a.no_kmod)
    return Status::error("--kmod-param with --no-kmod: there is no module to give parameters to");
  return Status::ok();
}

// The kernel to boot (--kernel, else the newest in /boot) and its headers.
Status find_kernel(const VmArgs& a, std::string* kernel) {
  *kernel = a.kernel.empty() ? newest_boot_kernel() : a.kernel;
  if (kernel->empty())
    return Status::error(
        "no --kernel given and no /boot/vmlinuz-*; `scripts/setup.sh --area vm` installs Debian's "
        "(linux-image-amd64 linux-headers-amd64)");
  struct stat st {};
  if (stat(kernel->c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return Status::error("kernel image '" + *kernel + "' does not exist");
  if (!a.headers.empty() && access((a.headers + "/Makefile").c_str(), R_OK) != 0)
    return Status::error("--headers '" + a.headers + "' is not a kernel build directory (no Makefile)");
  return Status::ok();
}

// vm-results/<release>-<time>-<pid>: the script's default, named here so
// the files can be checked after.
std::string default_out_dir(const std::string& kernel) {
  std::string release = fs::path(kernel).filename().string();
  if (release.rfind("vmlinuz-", 0) == 0) release = release.substr(8);
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  // With the pid: two `vm` started in one second never share a folder.
  return "vm-results/" + release + "-" + stamp + "-" + std::to_string(getpid());
}

// --file and --bin for the script, each checked to exist on the host.
Status add_guest_files(const VmArgs& a, std::vector<std::string>* argv) {
  for (const auto& f : a.files) {
    std::string src = f.substr(0, f.find(':'));
    if (access(src.c_str(), R_OK) != 0) return Status::error("--file '" + src + "' does not exist");
    argv->insert(argv->end(), {"--file", f});
  }
  for (const auto& b : a.bins) {
    const std::string src = b.substr(0, b.find(':'));
    struct stat bst {};
    if (stat(src.c_str(), &bst) != 0 || !S_ISREG(bst.st_mode) || access(src.c_str(), X_OK) != 0)
      return Status::error("--bin '" + src + "' is not an executable file");
    argv->insert(argv->end(), {"--bin", b});
  }
  return Status::ok();
}

// tracebench-vm.sh's command line: the VM, what goes into it, and the
// guest's command after --.
Status script_argv(const VmArgs& a, const std::string& scripts, const std::string& kernel, const std::string& self,
                   std::vector<std::string>* argv) {
  *argv = {scripts + "/tracebench-vm.sh",
           "--kernel",
           kernel,
           "--accel",
           a.accel,
           "--clock",
           a.clock,
           "--timeout",
           std::to_string(a.timeout_s),
           "--smp",
           std::to_string(a.smp),
           "--mem",
           std::to_string(a.mem_mb),
           "--bin",
           self + ":/tb/bin/tracebench"};
  if (!a.headers.empty()) argv->insert(argv->end(), {"--headers", a.headers});
  argv->insert(argv->end(), {"--outdir", a.out_dir});
  TB_TRY(add_guest_files(a, argv));
  if (a.no_kmod) argv->push_back("--no-kmod");
  for (const auto& p : a.kmod_params) argv->insert(argv->end(), {"--kmod-param", p});
  if (a.lttng_modules) argv->push_back("--lttng-modules");
  if (a.verbose) argv->push_back("--verbose");
  argv->push_back("--");
  // In the guest: `tracebench <sub> [--execution qemu-<accel>] <rest>`; the
  // acceleration is only known once qemu booted, so the guest fills it in.
  argv->insert(argv->end(),
               {"sh", "-c",
                a.guest_args[0] == "run"
                    ? "sub=$1; shift; exec tracebench \"$sub\" --execution \"qemu-$TRACEBENCH_VM_ACCEL\" \"$@\""
                    : "exec tracebench \"$@\"",
                "tracebench"});
  argv->insert(argv->end(), a.guest_args.begin(), a.guest_args.end());
  return Status::ok();
}

// The exit status of `vm` once the guest is done: the guest's, unless a
// run that says it succeeded brought no results back.
int guest_outcome(const VmArgs& a, int status) {
  const bool is_run = a.guest_args[0] == "run";
  // A guest run that says it succeeded but whose result files did not come
  // back has lost its results: that is a failure, not a success.
  const bool plan_only = std::find(a.guest_args.begin(), a.guest_args.end(), "--plan") != a.guest_args.end();
  if (is_run && !plan_only && status == 0 && !results_came_back(a.out_dir)) {
    std::cerr << "tracebench vm: the guest's run finished but no result.json came back to " << a.out_dir << "\n";
    return 3;
  }
  if (is_run && !plan_only) print_guest_summaries(a.out_dir);
  return status;
}

int run_vm(VmArgs a) {
  if (!carry_out_to_host(&a)) return 2;
  if (Status s = check_vm_flags(a); !s) {
    std::cerr << "tracebench vm: " << s.message() << "\n";
    return 2;
  }
  if (a.clock == "icount" && a.smp != 1) {
    // QEMU's -icount brings up no second vCPU here (run-qemu.sh): the guest
    // has one, and the plan is checked for one.
    std::cerr << "tracebench vm: --clock icount: one vCPU (--smp " << a.smp << " asked)\n";
    a.smp = 1;
  }
  std::string scripts;
  if (Status s = find_vm_scripts(&scripts); !s) {
    std::cerr << "tracebench vm: " << s.message() << "\n";
    return 2;
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::cerr << "tracebench vm: cannot resolve /proc/self/exe: " << ec.message() << "\n";
    return 2;
  }
  if (!kmod_params_known(a, scripts) || !guest_command_ok(a, self.string())) return 2;
  if (Status s = require_area("vm", "the VM lab (qemu, a Debian kernel and its headers, busybox)",
                              {"qemu-system-x86_64", "busybox", "cpio"});
      !s) {
    std::cerr << "tracebench vm: " << s.message() << "\n";
    return 2;
  }
  std::string kernel;
  if (Status s = find_kernel(a, &kernel); !s) {
    std::cerr << "tracebench vm: " << s.message() << "\n";
    return 2;
  }
  if (a.out_dir.empty()) a.out_dir = default_out_dir(kernel);
  std::vector<std::string> argv;
  if (Status s = script_argv(a, scripts, kernel, self.string(), &argv); !s) {
    std::cerr << "tracebench vm: " << s.message() << "\n";
    return 2;
  }
  int status = 0;
  if (Status s = spawn_wait(argv, &status); !s) {
    std::cerr << "tracebench vm: " << s.message() << "\n";
    return 3;
  }
  return guest_outcome(a, status);
}

void install(CLI::App& app, int* exit_status) {
  auto args = std::make_shared<VmArgs>();
  auto* sub = app.add_subcommand(
      "vm", "Run tracebench on another kernel under qemu (VM lab): tracebench vm --kernel IMG -- run ...");
  sub->add_option("--kernel", args->kernel, "Kernel image (default: newest /boot/vmlinuz-*)");
  sub->add_option("--headers", args->headers,
                  "Kernel build/headers dir for the module (default: /usr/src/linux-headers-<release>)");
  sub->add_option("--out-dir", args->out_dir,
                  "Host directory for the guest's result files (default: vm-results/<release>-<time>)");
  sub->add_option("--accel", args->accel, "auto (KVM if it boots, else TCG), kvm or tcg")->capture_default_str();
  sub->add_option("--clock", args->clock,
                  "wall, or icount: TCG with a clock that counts instructions (QEMU -icount shift=0,sleep=off; one "
                  "vCPU): the same figure on every boot, in guest instructions per event (execution qemu-tcg-icount)")
      ->capture_default_str()
      ->check(CLI::IsMember({"wall", "icount"}));
  sub->add_option("--timeout", args->timeout_s, "Seconds before the VM is killed")
      ->capture_default_str()
      ->check(CLI::Range(10, 86400));
  sub->add_option("--smp", args->smp, "Guest CPUs")->capture_default_str()->check(CLI::Range(1, 64));
  sub->add_option("--mem", args->mem_mb, "Guest memory in MiB")->capture_default_str()->check(CLI::Range(256, 65536));
  sub->add_option("--file", args->files,
                  "Extra host file or directory for the guest, SRC[:DEST] (DEST defaults to SRC; e.g. "
                  "libraries the suite dlopen()s)")
      ->allow_extra_args(false);  // one value per --file: `--file X -- run ...` leaves `--` to the guest arguments
  sub->add_option("--bin", args->bins,
                  "Extra host program for the guest with the shared libraries it needs, EXE[:DEST] (DEST "
                  "defaults to /tb/bin/<name>, on the guest's PATH; e.g. a program to trace with dvm -c)")
      ->allow_extra_args(false);
  sub->add_flag("--no-kmod", args->no_kmod, "Do not build/load the companion module");
  sub->add_option("--kmod-param", args->kmod_params,
                  "Module parameter NAME=VALUE for the guest's insmod of the companion module (repeatable; "
                  "NAME [A-Za-z0-9_], VALUE [A-Za-z0-9_.,:+-]; e.g. inject_delay_ns=100, kmod/README.md)")
      ->allow_extra_args(false);
  sub->add_flag("--lttng-modules", args->lttng_modules,
                "Build LTTng's kernel tracer (lttng-modules) for the kernel and pack it with lttng-sessiond, for "
                "the lttng_kernel tracer (built once per kernel, then cached)");
  sub->add_flag("--verbose", args->verbose, "Show the guest console while it runs");
  sub->add_option("args", args->guest_args, "tracebench arguments for the guest, after --");
  sub->callback([args, exit_status] { *exit_status = run_vm(*args); });
  sub->footer("`run --out DIR` after -- names the host directory the results come back to (like --out-dir).");
}

}  // namespace

TRACEBENCH_REGISTER_COMMAND(vm, Command{"vm", install});

}  // namespace tracebench
