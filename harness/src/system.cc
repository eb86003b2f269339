#include "tracebench/system.h"

#include <cpuid.h>
#include <time.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "tracebench/util.h"

namespace tracebench {

Status errno_status(const std::string& what, int err) {
  return Status::error(fmt::format("{}: {}", what, std::strerror(err)));
}

std::string read_file_trimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Status write_file(const std::string& path, const std::string& data) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return errno_status("open " + path, errno);
  size_t n = std::fwrite(data.data(), 1, data.size(), f);
  int err = errno;
  if (std::fclose(f) != 0 || n != data.size()) return errno_status("write " + path, err ? err : EIO);
  return Status::ok();
}

std::vector<int> online_cpus() {
  std::vector<int> cpus = parse_cpu_list(read_file_trimmed("/sys/devices/system/cpu/online"));
  if (cpus.empty()) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < std::max(1L, n); ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

int default_measured_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return online_cpus().back();
  for (int cpu = CPU_SETSIZE - 1; cpu >= 0; --cpu) {
    if (CPU_ISSET(cpu, &set)) return cpu;
  }
  return 0;
}

Status pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return errno_status(fmt::format("pin thread to CPU {}", cpu), errno);
  }
  return Status::ok();
}

int current_cpu() { return sched_getcpu(); }

namespace {

std::string cpuinfo_field(const std::string& root, const std::string& key) {
  std::ifstream in(root + "/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) {
        std::string v = line.substr(pos + 1);
        while (!v.empty() && v.front() == ' ') v.erase(v.begin());
        return v;
      }
    }
  }
  return {};
}

void kernel_config(SystemInfo& s) {
  namespace fs = std::filesystem;
  std::string boot = "/boot/config-" + s.kernel_release;
  if (fs::exists("/proc/config.gz")) {
    s.kernel_config_source = "/proc/config.gz";
    s.kernel_config_hash = sha256_file("/proc/config.gz", /*gunzip=*/true);
  } else if (fs::exists(boot)) {
    s.kernel_config_source = boot;
    s.kernel_config_hash = sha256_file(boot, false);
  }
}

}  // namespace

SystemInfo probe_system(int measured_cpu) {
  SystemInfo s;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  s.hostname = host;
  s.cpu_model = cpuinfo_field("", "model name");
  s.cpus = static_cast<int>(online_cpus().size());
  utsname u{};
  uname(&u);
  s.kernel_release = u.release;
  s.kernel_version = u.version;
  kernel_config(s);
  s.hypervisor = hypervisor_vendor();
  s.virtualized = !s.hypervisor.empty();
  if (s.virtualized) {
    s.noise_warnings.push_back(
        fmt::format("running under a hypervisor ({}): steal time and exits add noise", hypervisor_name(s.hypervisor)));
  }
  detect_run_context("", measured_cpu, &s);
  return s;
}

std::vector<int> parse_cpu_list(const std::string& list) {
  std::vector<int> cpus;
  std::size_t at = 0;
  while (at < list.size()) {
    std::size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(at, end - at);
    at = end + 1;
    int lo = 0, hi = 0;
    char dash = 0;
    const int got = std::sscanf(item.c_str(), "%d%c%d", &lo, &dash, &hi);
    if (got == 1 && lo >= 0) cpus.push_back(lo);
    if (got == 3 && dash == '-' && 0 <= lo && lo <= hi && hi - lo < 65536)
      for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  return cpus;
}

bool cpu_list_contains(const std::string& list, int cpu) {
  const std::vector<int> cpus = parse_cpu_list(list);
  return std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
}

void detect_run_context(const std::string& root, int measured_cpu, SystemInfo* s) {
  const std::string sys_cpu = root + "/sys/devices/system/cpu";
  s->clocksource = read_file_trimmed(root + "/sys/devices/system/clocksource/clocksource0/current_clocksource");
  auto& w = s->noise_warnings;
  std::string cpu = fmt::format("{}/cpu{}", sys_cpu, measured_cpu);
  std::string gov = read_file_trimmed(cpu + "/cpufreq/scaling_governor");
  if (gov.empty()) {
    w.push_back("no cpufreq: frequency scaling state unknown (cannot check the governor)");
  } else if (gov != "performance") {
    w.push_back(fmt::format("CPU {} frequency governor is '{}', not 'performance'", measured_cpu, gov));
  }
  std::string boost = read_file_trimmed(sys_cpu + "/cpufreq/boost");
  if (boost == "1") w.push_back("CPU boost/turbo is on");
  std::string nt = read_file_trimmed(sys_cpu + "/intel_pstate/no_turbo");
  if (nt == "0") w.push_back("Intel turbo is on (intel_pstate/no_turbo = 0)");
  std::string siblings = read_file_trimmed(cpu + "/topology/thread_siblings_list");
  if (siblings.find_first_of(",-") != std::string::npos) {
    w.push_back(fmt::format("CPU {} has SMT siblings ({}): a sibling's work shares its core", measured_cpu, siblings));
  }
  // isolcpus and nohz_full list CPUs: the measured one must be in them.
  std::string isolated = read_file_trimmed(sys_cpu + "/isolated");
  if (isolated.empty()) {
    w.push_back(fmt::format("CPU {} is not isolated (isolcpus empty)", measured_cpu));
  } else if (!cpu_list_contains(isolated, measured_cpu)) {
    w.push_back(fmt::format("CPU {} is not isolated (isolcpus={} leaves it out)", measured_cpu, isolated));
  }
  std::string nohz = read_file_trimmed(sys_cpu + "/nohz_full");
  if (nohz.empty() || nohz == "(null)") {
    w.push_back("nohz_full is not set: the scheduler tick interrupts the measured CPU");
  } else if (!cpu_list_contains(nohz, measured_cpu)) {
    w.push_back(fmt::format("nohz_full={} leaves CPU {} out: the scheduler tick interrupts it", nohz, measured_cpu));
  }
  std::string flags = " " + cpuinfo_field(root, "flags") + " ";
  if (flags.find(" constant_tsc ") == std::string::npos || flags.find(" nonstop_tsc ") == std::string::npos) {
    w.push_back("TSC is not invariant (constant_tsc/nonstop_tsc missing): cycles may not be time");
  }
  if (s->clocksource != "tsc" && !s->clocksource.empty()) {
    w.push_back(fmt::format("clocksource is '{}', not 'tsc'", s->clocksource));
  }
  std::error_code ec;
  std::vector<std::string> mitig;
  for (const auto& e : std::filesystem::directory_iterator(sys_cpu + "/vulnerabilities", ec)) {
    std::string v = read_file_trimmed(e.path().string());
    if (v.rfind("Mitigation", 0) == 0) mitig.push_back(e.path().filename().string());
  }
  if (!mitig.empty()) {
    // Sorted: directory order is the filesystem's, the warning is compared across runs.
    std::sort(mitig.begin(), mitig.end());
    std::string list;
    for (const auto& m : mitig) list += (list.empty() ? "" : ",") + m;
    w.push_back(fmt::format("CPU mitigations active ({}): syscall and trap costs include them", list));
  }
}

Status ensure_tracefs(std::string* path) {
  const char* tracing = "/sys/kernel/tracing";
  struct statfs sf {};
  constexpr long kTracefsMagic = 0x74726163;
  if (statfs(tracing, &sf) == 0 && static_cast<long>(sf.f_type) == kTracefsMagic) {
    *path = tracing;
    return Status::ok();
  }
  if (mount("tracefs", tracing, "tracefs", 0, nullptr) != 0) {
    return errno_status("mount tracefs on /sys/kernel/tracing (needs root and CONFIG_TRACING)", errno);
  }
  // debugfs too (kprobes/list lives there); failure is not fatal.
  constexpr long kDebugfsMagic = 0x64626720;
  if (statfs("/sys/kernel/debug", &sf) == 0 && static_cast<long>(sf.f_type) != kDebugfsMagic) {
    mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr);
  }
  *path = tracing;
  return Status::ok();
}

CpuTimeSnapshot cpu_time_snapshot() {
  CpuTimeSnapshot snap;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  snap.wall_s = ts.tv_sec + ts.tv_nsec * 1e-9;
  std::ifstream in("/proc/stat");
  std::string tag;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice
  unsigned long long v[8] = {};
  if (!(in >> tag) || tag != "cpu") return snap;
  for (auto& x : v)
    if (!(in >> x)) return snap;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  if (hz <= 0) return snap;
  snap.machine_busy_s = static_cast<double>(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / hz;
  snap.steal_s = static_cast<double>(v[7]) / hz;
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return snap;
  snap.self_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  snap.ok = true;
  return snap;
}

double foreign_cpu_load(const CpuTimeSnapshot& a, const CpuTimeSnapshot& b) {
  const double wall = b.wall_s - a.wall_s;
  if (!a.ok || !b.ok || wall <= 0) return 0;
  const double other = (b.machine_busy_s - a.machine_busy_s) - (b.self_s - a.self_s);
  return other > 0 ? other / wall : 0;
}

std::string hypervisor_vendor() {
  unsigned a, b, c, d;
  __cpuid(1, a, b, c, d);
  if (!(c & (1u << 31))) return {};
  __cpuid(0x40000000, a, b, c, d);
  char v[13];
  std::memcpy(v, &b, 4);
  std::memcpy(v + 4, &c, 4);
  std::memcpy(v + 8, &d, 4);
  v[12] = 0;
  return v[0] ? std::string(v) : std::string("unknown");
}

std::string hypervisor_name(const std::string& signature) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"KVMKVMKVM", "KVM"},           {"TCGTCGTCGTCG", "QEMU TCG"},  {"bhyve bhyve ", "bhyve"},
      {"Microsoft Hv", "Hyper-V"},    {"VMwareVMware", "VMware"},    {"XenVMMXenVMM", "Xen"},
      {"VBoxVBoxVBox", "VirtualBox"}, {" lrpepyh  vr", "Parallels"}, {"ACRNACRNACRN", "ACRN"},
      {"QNXQVMBSQG", "QNX"},          {"Jailhouse", "Jailhouse"},    {"unknown", "unknown (no signature)"}};
  if (signature.empty()) return "none";
  for (const auto& [sig, name] : kNames)
    if (signature == sig) return name;
  const auto first = signature.find_first_not_of(' '), last = signature.find_last_not_of(' ');
  return first == std::string::npos ? "unknown (a blank signature)" : signature.substr(first, last - first + 1);
}

bool execution_emulated(const std::string& execution) {
  return execution == "qemu-tcg" || execution == kExecutionIcount;
}

Status check_execution(const std::string& claimed, const std::string& hypervisor, std::string* execution) {
  // QEMU's TCG announces itself in CPUID leaf 0x40000000; KVM as KVMKVMKVM
  // (from QEMU or any other KVM host: only the VM lab's word says which).
  const bool tcg = hypervisor == "TCGTCGTCGTCG";
  const bool kvm = hypervisor.rfind("KVMKVMKVM", 0) == 0;
  std::string detected = tcg ? "qemu-tcg" : "host";
  if (claimed.empty()) {
    *execution = detected;
    return Status::ok();
  }
  std::string seen = hypervisor.empty()        ? "no hypervisor"
                     : hypervisor == "unknown" ? "a hypervisor that does not name itself"
                                               : "hypervisor '" + hypervisor + "'";
  // qemu-tcg-icount: TCG whose clock counts instructions (QEMU's -icount);
  // CPUID cannot tell it from TCG, so TCG is what is checked.
  const std::string claimed_cpuid = claimed == kExecutionIcount ? "qemu-tcg" : claimed;
  if (claimed_cpuid == "host" || claimed_cpuid == "qemu-tcg") {
    if (claimed_cpuid != detected)
      return Status::error(fmt::format("--execution {} does not match this machine ({}: {})", claimed, seen, detected));
  } else if (claimed == "qemu-kvm") {
    if (!kvm) return Status::error(fmt::format("--execution qemu-kvm does not match this machine ({})", seen));
  } else {
    return Status::error(
        fmt::format("--execution '{}': expected host, qemu-tcg, {} or qemu-kvm", claimed, kExecutionIcount));
  }
  *execution = claimed;
  return Status::ok();
}

bool parse_stat_ticks(const std::string& stat, std::uint64_t* utime, std::uint64_t* stime) {
  // "pid (comm) state ppid ...": fields after the last ')' start at 3.
  std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  for (int k = 3; k <= 15; ++k) {
    if (!(in >> field)) return false;
    if (k == 14 || k == 15) {
      char* end = nullptr;
      errno = 0;
      unsigned long long v = std::strtoull(field.c_str(), &end, 10);
      if (errno != 0 || end == field.c_str() || *end != '\0') return false;
      (k == 14 ? *utime : *stime) = v;
    }
  }
  return true;
}

bool parse_schedstat_ns(const std::string& schedstat, double* ns) {
  std::istringstream in(schedstat);
  unsigned long long v = 0;
  if (!(in >> v)) return false;
  *ns = static_cast<double>(v);
  return true;
}

Status read_task_cpu(int pid, int tid, TaskCpu* out) {
  const std::string dir = tid == 0 ? fmt::format("/proc/{}", pid) : fmt::format("/proc/{}/task/{}", pid, tid);
  std::string stat = read_file_trimmed(dir + "/stat");
  TaskCpu c;
  if (stat.empty() || !parse_stat_ticks(stat, &c.user_ticks, &c.sys_ticks))
    return Status::error(fmt::format("{}/stat: not readable or malformed (the task is gone?)", dir));
  bool have_ns = false;
  if (tid == 0) {
    clockid_t clk;
    timespec ts{};
    if (clock_getcpuclockid(pid, &clk) == 0 && clock_gettime(clk, &ts) == 0) {
      c.ns = static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
      have_ns = true;
    }
  } else {
    have_ns = parse_schedstat_ns(read_file_trimmed(dir + "/schedstat"), &c.ns);
  }
  if (!have_ns) {
    c.precise = false;
    c.ns = static_cast<double>(c.user_ticks + c.sys_ticks) * 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  *out = c;
  return Status::ok();
}

std::vector<int> process_threads(int pid) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid), ec)) {
    const std::string name = e.path().filename().string();
    char* end = nullptr;
    const long t = std::strtol(name.c_str(), &end, 10);
    if (end && *end == 0 && t > 0) out.push_back(static_cast<int>(t));
  }
  return out;
}

}  // namespace tracebench
