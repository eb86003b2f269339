#include "tracers/common/proc.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tracers/common/elf.h"

namespace tracebench::common {

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

std::string read_text(const std::string& path) {
  std::string s;
  return read_file(path, &s) ? s : std::string();
}

std::uint64_t mem_available_bytes() {
  std::istringstream in(read_text("/proc/meminfo"));
  std::string key, unit;
  std::uint64_t kb = 0;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

bool pid_alive(pid_t pid) {
  if (pid <= 0) return false;
  // The state letter after the command's closing parenthesis; a zombie has
  // exited (only its parent has not reaped it yet), so its objects are leftovers.
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  auto rp = stat.rfind(')');
  if (rp == std::string::npos || rp + 2 >= stat.size()) return false;
  char state = stat[rp + 2];
  return state != 'Z' && state != 'X';
}

int cpu_away_from_this_thread() {
  const std::vector<int> cpus = online_cpus();
  if (cpus.size() < 2) return -1;
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) == 0)
    for (int c : cpus)
      if (c < CPU_SETSIZE && !CPU_ISSET(c, &mine)) return c;
  return cpus.front();
}

Status check_consumer_cpu(const std::string& tracer, long cpu) {
  const std::vector<int> cpus = online_cpus();
  if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) return Status::ok();
  std::string online = read_text("/sys/devices/system/cpu/online");
  while (!online.empty() && (online.back() == '\n' || online.back() == ' ')) online.pop_back();
  return Status::error(tracer + ": option consumer_cpu=" + std::to_string(cpu) +
                       " is not an online CPU (online: " + (online.empty() ? "unknown" : online) + ")");
}

Status check_profile_rate(const std::string& tracer, std::uint64_t hz, const std::string& max_sample_rate) {
  const unsigned long long rate = std::strtoull(max_sample_rate.c_str(), nullptr, 10);
  if (rate > 0 && hz > rate)
    return Status::error(tracer + ": profile_hz=" + std::to_string(hz) +
                         " is above kernel.perf_event_max_sample_rate (" + std::to_string(rate) +
                         "): the kernel would throttle the timer; give a profile_hz of at most " +
                         std::to_string(rate));
  return Status::ok();
}

namespace {
// The calling thread's context switches, voluntary and not; -1 if unknown.
std::int64_t thread_context_switches() {
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return -1;
  return static_cast<std::int64_t>(ru.ru_nvcsw) + static_cast<std::int64_t>(ru.ru_nivcsw);
}
}  // namespace

void TimerFirings::enabled() { switches_at_enable_ = thread_context_switches(); }

void TimerFirings::clock_read(std::uint64_t ns) {
  if (period_ns_ == 0) return;
  fired_ += ns / period_ns_;
  ++windows_;
}

void TimerFirings::disabled() {
  const std::int64_t now = thread_context_switches();
  if (now >= 0 && switches_at_enable_ >= 0 && now > switches_at_enable_)
    windows_ += static_cast<std::uint64_t>(now - switches_at_enable_);
  switches_at_enable_ = -1;
}

bool this_thread_pinned_to(int cpu) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  return cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) == 1 &&
         CPU_ISSET(cpu, &mine);
}

Status executable_of(pid_t pid, std::string* path) {
  const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  char buf[4096];
  const ssize_t n = readlink(exe.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return errno_status("readlink " + exe, errno);
  *path = std::string(buf, static_cast<size_t>(n));
  if (path->find(" (deleted)") != std::string::npos) *path = exe;
  return Status::ok();
}

Status usdt_site(pid_t pid, const std::string& target, std::string* file, std::uint64_t* offset,
                 std::uint64_t* semaphore) {
  const auto colon = target.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == target.size())
    return Status::error("usdt target '" + target + "' is not provider:name");
  const std::string provider = target.substr(0, colon), name = target.substr(colon + 1);
  std::string path;
  TB_TRY(executable_of(pid, &path));
  elf::File f;
  if (std::string e = f.open(path); !e.empty()) return Status::error(e);
  std::vector<elf::SdtNote> notes;
  if (std::string e = elf::sdt_notes(f, &notes); !e.empty()) return Status::error(e);
  const elf::SdtNote* found = nullptr;
  for (const elf::SdtNote& note : notes) {
    if (note.provider != provider || note.name != name) continue;
    if (found) return Status::error(path + " has more than one SDT note " + target + ": name one site");
    found = &note;
  }
  if (!found) return Status::error(path + " has no SDT note " + target);
  if (!found->error.empty()) return Status::error(found->error);
  *file = path;
  *offset = found->offset;
  *semaphore = found->semaphore_offset;
  return Status::ok();
}

Status uprobe_location(const std::string& file, std::uint64_t offset, std::uint64_t semaphore, std::string* out) {
  if (file.find_first_of(" \t\n") != std::string::npos)
    return Status::error("uprobe target path contains white space: " + file);
  char buf[64];
  std::snprintf(buf, sizeof buf, ":0x%llx", static_cast<unsigned long long>(offset));
  *out = file + buf;
  if (semaphore) {
    std::snprintf(buf, sizeof buf, "(0x%llx)", static_cast<unsigned long long>(semaphore));
    *out += buf;
  }
  return Status::ok();
}

Status address_to_file_offset(pid_t pid, std::uintptr_t addr, std::string* file, std::uint64_t* offset) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(addr));
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  if (!maps) return errno_status("open /proc/" + std::to_string(pid) + "/maps", errno);
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long start = 0, end = 0, off = 0;
    char perms[8] = {};
    int path_pos = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %*s %*s %n", &start, &end, perms, &off, &path_pos) < 4) continue;
    if (addr < start || addr >= end) continue;
    std::string path = path_pos > 0 ? line.substr(static_cast<std::size_t>(path_pos)) : "";
    if (path.empty() || path[0] != '/')
      return Status::error(std::string("address ") + hex + " is not in a file-backed mapping ('" + line +
                           "'); uprobes need a symbol in an ELF file");
    if (path.find(" (deleted)") != std::string::npos)
      return Status::error("the binary " + path + " was replaced on disk; rebuild and rerun");
    if (perms[2] != 'x')
      return Status::error(std::string("address ") + hex + " is not in an executable mapping: " + line);
    *file = path;
    *offset = addr - start + off;
    return Status::ok();
  }
  return Status::error(std::string("address ") + hex + " is not mapped in pid " + std::to_string(pid));
}

}  // namespace tracebench::common
