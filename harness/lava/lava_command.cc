// `tracebench lava`: tracebench as a LAVA test, and its jobs on a LAVA server.
//
//   lava job --kernel IMG [...] -- run ...   writes a LAVA job (lava_job.h) and
//                                            the initramfs it deploys
//   lava cases RESULT.json                   (in the guest) benchmarks as test cases
//   lava submit|wait|fetch                   lava_remote_command.h
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>

#include "kmod_params.h"
#include "lava_cases.h"
#include "lava_job.h"
#include "lava_remote_command.h"
#include "vm_scripts.h"
#include "tracebench/command.h"
#include "tracebench/results.h"
#include "tracebench/setup_area.h"
#include "tracebench/util.h"

extern char** environ;

namespace tracebench {
namespace {

namespace fs = std::filesystem;

struct JobArgs {
  std::string kernel, modules_from, initramfs, out = "lava-job.yaml", artifacts, url_base, device_type = "qemu";
  std::string job_name;
  std::string job_timeout = "60m", test_timeout = "40m", boot_timeout = "10m";
  int smp = 2, mem = 2048;
  bool no_kmod = false;
  std::vector<std::string> kmod_params;  // NAME=VALUE for the guest's insmod of the module
  std::vector<std::string> command;
};

// Runs argv (stdout to stderr, so `--out -` keeps stdout for the job);
// returns its exit status, 128+signal when killed.
int run_child(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    dup2(STDERR_FILENO, STDOUT_FILENO);
    execve(cargv[0], cargv.data(), environ);
    _exit(127);
  }
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

std::string release_of(const std::string& kernel) {
  std::string name = fs::path(kernel).filename().string();
  return name.rfind("vmlinuz-", 0) == 0 ? name.substr(8) : std::string();
}

std::string file_url(const std::string& path) { return "file://" + fs::absolute(path).lexically_normal().string(); }

// The guest's command checked here first, as `tracebench vm` does: `run`
// with the same plan (`run --check-for-guest N`), nothing built if refused.
bool guest_command_ok(const JobArgs& a, const std::string& self) {
  if (a.command[0] != "run") return true;
  std::vector<std::string> argv = {self, "run", "--check-for-guest", std::to_string(a.smp)};
  argv.insert(argv.end(), a.command.begin() + 1, a.command.end());
  if (run_child(argv) == 0) return true;
  std::cerr << "tracebench lava job: the guest's run was refused (above); nothing was built or written\n";
  return false;
}

// The initramfs for LAVA (tracebench-vm.sh --initramfs-out --lava): this
// binary, the companion module built for the kernel, the guest's scripts.
Status build_initramfs(const JobArgs& a, const std::string& self, const std::string& out) {
  TB_TRY(require_area("vm", "the VM lab's initramfs (busybox, cpio; the module built against the kernel's headers)",
                      {"busybox", "cpio"}));
  std::string scripts;
  TB_TRY(find_vm_scripts(&scripts));
  std::vector<std::string> argv = {
      scripts + "/tracebench-vm.sh", "--kernel",        a.kernel, "--smp", std::to_string(a.smp), "--bin",
      self + ":/tb/bin/tracebench",  "--initramfs-out", out,      "--lava"};
  if (!a.modules_from.empty()) argv.insert(argv.end(), {"--headers", a.modules_from});
  if (a.no_kmod) argv.push_back("--no-kmod");
  for (const auto& p : a.kmod_params) argv.insert(argv.end(), {"--kmod-param", p});
  argv.push_back("--");
  for (const auto& w : lava::guest_argv(a.command)) argv.push_back(w);
  argv.insert(argv.end(), a.command.begin(), a.command.end());
  int rc = run_child(argv);
  if (rc != 0)
    return Status::error("building the initramfs failed (tracebench-vm.sh exit " + std::to_string(rc) + ", above)");
  return Status::ok();
}

// Where the job finds an artifact: URL_BASE/<name> (the file copied into
// the artifacts folder, which the lab serves), else a file:// URL.
Status publish(const JobArgs& a, const std::string& path, const std::string& artifacts, std::string* url) {
  if (a.url_base.empty()) {
    *url = file_url(path);
    return Status::ok();
  }
  const fs::path dest = fs::path(artifacts) / fs::path(path).filename();
  std::error_code ec;
  if (!fs::equivalent(path, dest, ec)) {
    fs::copy_file(path, dest, fs::copy_options::overwrite_existing, ec);
    if (ec) return Status::error("cannot copy " + path + " to " + dest.string() + ": " + ec.message());
  }
  std::string base = a.url_base;
  while (!base.empty() && base.back() == '/') base.pop_back();
  *url = base + "/" + dest.filename().string();
  return Status::ok();
}

// The module parameters: each of the form the guest's insmod takes, named
// once, one the module declares (its source beside the scripts, when there);
// none with --no-kmod or --initramfs (the parameters are in the initramfs).
bool kmod_params_ok(const JobArgs& a) {
  const std::string kRefused = "tracebench lava job: --kmod-param ";
  if (a.kmod_params.empty()) return true;
  if (a.no_kmod || !a.initramfs.empty()) {
    std::cerr << kRefused << "with "
              << (a.no_kmod ? "--no-kmod: there is no module to give parameters to"
                            : "--initramfs: the parameters are built into the initramfs")
              << "\n";
    return false;
  }
  std::string scripts;
  const std::set<std::string> names =
      find_vm_scripts(&scripts) ? kmod_param_names(fs::path(scripts) / ".." / ".." / "kmod") : std::set<std::string>{};
  for (std::size_t i = 0; i < a.kmod_params.size(); ++i) {
    const std::string& p = a.kmod_params[i];
    const std::string name = p.substr(0, p.find('='));
    if (std::string why = kmod_param_problem(p); !why.empty()) {
      std::cerr << kRefused << "'" << p << "': " << why << "\n";
      return false;
    }
    for (std::size_t k = 0; k < i; ++k) {
      if (a.kmod_params[k].substr(0, a.kmod_params[k].find('=')) == name) {
        std::cerr << kRefused << name << " is given twice\n";
        return false;
      }
    }
    if (!names.empty() && !names.count(name)) {
      std::cerr << kRefused << p << ": the companion module has no parameter '" << name << "' (kmod/README.md)\n";
      return false;
    }
  }
  return true;
}

// The job's inputs that can be checked before anything is read or built.
Status check_job_inputs(const JobArgs& a) {
  if (a.command.empty())
    return Status::error(
        "no tracebench command after --, e.g.\n"
        "  tracebench lava job --kernel /boot/vmlinuz-6.1.0-56-amd64 -- run --quick -t kprobes -w kmod_target");
  struct stat st {};
  if (a.kernel.empty() || stat(a.kernel.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return Status::error("--kernel '" + a.kernel + "' is not a kernel image file");
  if (!a.initramfs.empty() && access(a.initramfs.c_str(), R_OK) != 0)
    return Status::error("--initramfs '" + a.initramfs + "' cannot be read");
  if (!a.url_base.empty() && a.url_base.rfind("http://", 0) != 0 && a.url_base.rfind("https://", 0) != 0)
    return Status::error("--url-base must be an http:// or https:// URL (the lab's workers download from it)");
  return Status::ok();
}

// The job from the arguments, checked as a whole; its URLs and checksums
// are filled in once the initramfs exists.
Status job_from_args(const JobArgs& a, lava::LavaJob* job) {
  job->device_type = a.device_type;
  job->job_name = a.job_name;
  job->command = a.command;
  job->kernel_release = release_of(a.kernel);
  for (auto [flag, text, seconds] : {std::tuple{"--job-timeout", a.job_timeout, &job->job_timeout_s},
                                     std::tuple{"--test-timeout", a.test_timeout, &job->test_timeout_s},
                                     std::tuple{"--boot-timeout", a.boot_timeout, &job->boot_timeout_s}}) {
    *seconds = lava::parse_duration(text);
    if (*seconds < 0)
      return Status::error(std::string(flag) + " '" + text +
                           "': expected a duration like 90s, 40m or 2h (a number alone: minutes)");
  }
  job->deploy_timeout_s = std::min(600, job->job_timeout_s);
  job->smp = a.smp;
  job->memory_mb = a.mem;
  // The URLs are only known once the initramfs exists: the rest is checked
  // first, so that bad input is refused before anything is built.
  job->kernel_url = job->ramdisk_url = "file:///not-yet-known";
  if (std::string why = lava::job_problem(*job); !why.empty()) return Status::error(why);
  return Status::ok();
}

// --initramfs, else one built into `artifacts` and named by its content:
// jobs written earlier keep theirs (their sha256 holds).
Status job_initramfs(const JobArgs& a, const std::string& self, const std::string& artifacts,
                     const std::string& release, std::string* initramfs) {
  *initramfs = a.initramfs;
  if (!initramfs->empty()) return Status::ok();
  const std::string stem =
      (fs::path(artifacts) / ("tracebench-initramfs-" + (release.empty() ? "kernel" : release))).string();
  const std::string building = stem + ".building." + std::to_string(getpid());
  std::error_code ec;
  Status s = build_initramfs(a, self, building);
  if (s) {
    *initramfs = stem + "-" + sha256_file(building, false).substr(0, 12) + ".cpio";
    fs::rename(building, *initramfs, ec);
    if (ec) s = Status::error("cannot rename " + building + ": " + ec.message());
  }
  if (!s) fs::remove(building, ec);
  return s;
}

// The kernel and the initramfs where the job finds them, with their sha256.
Status publish_artifacts(const JobArgs& a, const std::string& initramfs, const std::string& artifacts,
                         lava::LavaJob* job) {
  for (auto [path, url, sum] : {std::tuple{a.kernel, &job->kernel_url, &job->kernel_sha256},
                                std::tuple{initramfs, &job->ramdisk_url, &job->ramdisk_sha256}}) {
    TB_TRY(publish(a, path, artifacts, url));
    *sum = sha256_file(path, false);
  }
  return Status::ok();
}

// The job's YAML to --out (or stdout for -).
Status write_job(const JobArgs& a, const lava::LavaJob& job, const std::string& initramfs) {
  const std::string yaml = lava::job_yaml(job);
  if (a.out == "-") {
    std::cout << yaml;
    return Status::ok();
  }
  TB_TRY(write_file_atomic(a.out, yaml));
  std::cerr << "tracebench lava job: wrote " << a.out << " (" << job.device_type << "; initramfs " << initramfs
            << ")\n";
  return Status::ok();
}

// Refused input is 2 (nothing built or written); a failure while building
// or writing is 1.
int run_job(JobArgs a) {
  const std::string kRefused = "tracebench lava job: ";
  if (Status s = check_job_inputs(a); !s) {
    std::cerr << kRefused << s.message() << "\n";
    return 2;
  }
  if (!kmod_params_ok(a)) return 2;
  lava::LavaJob job;
  if (Status s = job_from_args(a, &job); !s) {
    std::cerr << kRefused << s.message() << "\n";
    return 2;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::cerr << kRefused << "cannot resolve /proc/self/exe: " << ec.message() << "\n";
    return 2;
  }
  if (!guest_command_ok(a, self.string())) return 2;
  const std::string out_dir = a.out == "-" ? std::string(".") : fs::absolute(a.out).parent_path().string();
  const std::string artifacts = a.artifacts.empty() ? out_dir : a.artifacts;
  fs::create_directories(artifacts, ec);
  if (ec) {
    std::cerr << kRefused << "cannot create " << artifacts << ": " << ec.message() << "\n";
    return 1;
  }
  std::string initramfs;
  Status s = job_initramfs(a, self.string(), artifacts, job.kernel_release, &initramfs);
  if (s) s = publish_artifacts(a, initramfs, artifacts, &job);
  if (s) s = write_job(a, job, initramfs);
  if (!s) {
    std::cerr << kRefused << s.message() << "\n";
    return 1;
  }
  return 0;
}

int run_cases(const std::string& path) {
  RunResult run;
  if (Status s = read_run(path, &run); !s) {
    std::cerr << "tracebench lava cases: " << s.message() << "\n";
    return 2;
  }
  for (const auto& c : lava::benchmark_cases(run))
    std::cout << c.name << " " << c.result << " " << c.measurement << "\n";
  return 0;
}

void install(CLI::App& app, int* exit_status) {
  auto* lava = app.add_subcommand(
      "lava", "tracebench as a LAVA test: write a job, submit it to a server, wait, fetch the run back");
  lava->require_subcommand(1);

  auto ja = std::make_shared<JobArgs>();
  auto* job =
      lava->add_subcommand("job", "Write a LAVA job that boots a kernel and runs the tracebench command after --");
  job->add_option("--kernel", ja->kernel, "Kernel image (bzImage) to deploy")->required();
  job->add_option("--modules-from", ja->modules_from,
                  "Kernel build (headers) directory to build the companion module against (default: "
                  "/usr/src/linux-headers-<release>)");
  job->add_option("--initramfs", ja->initramfs,
                  "Deploy this initramfs (one made by an earlier `lava job`) instead of building one");
  job->add_flag("--no-kmod", ja->no_kmod, "Do not build the companion module into the initramfs");
  job->add_option("--kmod-param", ja->kmod_params,
                  "Module parameter NAME=VALUE for the guest's insmod of the companion module (repeatable; built "
                  "into the initramfs; e.g. inject_delay_ns=100, kmod/README.md)")
      ->allow_extra_args(false);
  job->add_option("--out", ja->out, "The job file (- for stdout)")->capture_default_str();
  job->add_option("--artifacts", ja->artifacts,
                  "Folder for the initramfs (and, with --url-base, the kernel); default: --out's");
  job->add_option(
      "--url-base", ja->url_base,
      "HTTP URL the lab serves the artifacts folder at (default: file:// URLs, for a worker on this machine)");
  job->add_option("--device-type", ja->device_type,
                  "qemu (LAVA's qemu device type) or x86 (a PC booted by iPXE over TFTP)")
      ->capture_default_str();
  job->add_option("--job-name", ja->job_name, "LAVA job name (default: tracebench <command>)");
  job->add_option("--job-timeout", ja->job_timeout, "The whole job's time limit (90s, 40m, 2h; a number: minutes)")
      ->capture_default_str();
  job->add_option("--test-timeout", ja->test_timeout, "The test action's time limit (the benchmarks)")
      ->capture_default_str();
  job->add_option("--boot-timeout", ja->boot_timeout, "The boot action's time limit")->capture_default_str();
  job->add_option("--smp", ja->smp, "Guest CPUs (qemu)")->capture_default_str()->check(CLI::Range(1, 64));
  job->add_option("--mem", ja->mem, "Guest memory in MiB (qemu)")->capture_default_str()->check(CLI::Range(256, 65536));
  job->add_option("args", ja->command, "tracebench arguments for the guest, after --");
  job->callback([ja, exit_status] { *exit_status = run_job(*ja); });

  // submit, wait, and `fetch` (from a server, or from a log: lava_remote_command.h).
  lava::install_remote_commands(lava, exit_status);

  auto result = std::make_shared<std::string>();
  auto* cases =
      lava->add_subcommand("cases", "(in the guest) each benchmark of a result.json as NAME pass|fail|skip|unknown NS");
  cases->add_option("result", *result, "result.json")->required();
  cases->callback([result, exit_status] { *exit_status = run_cases(*result); });
}

}  // namespace

TRACEBENCH_REGISTER_COMMAND(lava, Command{"lava", install});

}  // namespace tracebench
