// The probe site as mapped here against the file on disk (tracebench/probe_site.h).
#include "tracebench/probe_site.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tracebench {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Any function of this file: its address is in this binary's code.
void this_binary_marker() {}

}  // namespace

bool find_mapping(std::string_view maps, std::uintptr_t address, MappedRange* out) {
  std::istringstream in{std::string(maps)};
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    unsigned major = 0, minor = 0;
    char perms[5] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &offset, &major, &minor,
                    &inode, &path_at) < 7)
      continue;
    if (address < start || address >= end) continue;
    out->start = start;
    out->end = end;
    out->file_offset = offset;
    out->executable = perms[2] == 'x';
    out->dev = makedev(major, minor);
    out->inode = static_cast<ino_t>(inode);
    out->path = path_at > 0 && static_cast<std::size_t>(path_at) <= line.size() ? line.substr(path_at) : "";
    return true;
  }
  return false;
}

std::vector<std::size_t> differing_offsets(const std::uint8_t* mapped, const std::uint8_t* on_disk, std::size_t n,
                                           std::size_t max, std::size_t* total) {
  std::vector<std::size_t> at;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n;) {
    // memcmp finds the next difference quickly over long equal runs.
    std::size_t chunk = std::min<std::size_t>(4096, n - i);
    if (std::memcmp(mapped + i, on_disk + i, chunk) == 0) {
      i += chunk;
      continue;
    }
    for (std::size_t k = i; k < i + chunk; ++k) {
      if (mapped[k] == on_disk[k]) continue;
      ++count;
      if (at.size() < max) at.push_back(k);
    }
    i += chunk;
  }
  if (total) *total = count;
  return at;
}

std::vector<std::string> uprobe_entries_on(std::string_view uprobe_events, const std::string& file, dev_t dev,
                                           ino_t inode) {
  std::vector<std::string> found;
  std::istringstream in{std::string(uprobe_events)};
  std::string line;
  while (std::getline(in, line)) {
    // "p:group/event /path/to/file:0x0000000000001234[(0x...)] [args]"
    std::size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    std::size_t end = line.find(' ', sp + 1);
    std::string where = line.substr(sp + 1, end == std::string::npos ? std::string::npos : end - sp - 1);
    std::size_t colon = where.rfind(":0x");
    if (colon == std::string::npos) continue;
    std::string path = where.substr(0, colon);
    struct stat st {};
    bool same = stat(path.c_str(), &st) == 0 ? st.st_dev == dev && st.st_ino == inode : path == file;
    if (same) found.push_back(line);
  }
  return found;
}

Status check_probe_site_unshared(std::uintptr_t address, const std::string& probe, std::string* unchecked) {
  const std::uintptr_t site = address;
  if (address == 0) address = reinterpret_cast<std::uintptr_t>(&this_binary_marker);
  MappedRange m;
  if (!find_mapping(slurp("/proc/self/maps"), address, &m) || !m.executable || m.path.empty() || m.path[0] != '/') {
    *unchecked = fmt::format("probe site {}: no executable file mapping holds 0x{:x}; not compared with its file",
                             probe, address);
    return Status::ok();
  }
  // map_files reaches the very inode mapped (even if the binary was since
  // replaced on disk); the path is the fallback when it is not available.
  int fd = open(fmt::format("/proc/self/map_files/{:x}-{:x}", m.start, m.end).c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0) {
    fd = open(m.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_ino != m.inode)) {
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    *unchecked = fmt::format(
        "probe site {}: cannot read {} as mapped (replaced on disk, or no /proc/self/map_files): "
        "its code was not compared with the file, so a foreign uprobe would go unseen",
        probe, m.path);
    return Status::ok();
  }
  // The range compared: [from, to) of the mapping, within the file.
  std::uintptr_t from = m.start, to = m.end;
  if (site != 0) {
    from = site;
    to = std::min<std::uintptr_t>(m.end, (site | 15) + 1);
  }
  const std::uint64_t file_size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t first = m.file_offset + (from - m.start);
  const std::size_t n =
      first >= file_size ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(to - from, file_size - first));
  std::vector<std::uint8_t> disk(n);
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, disk.data() + got, n - got, static_cast<off_t>(first + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  close(fd);
  if (got != n) {
    *unchecked = fmt::format("probe site {}: short read of {}: not compared", probe, m.path);
    return Status::ok();
  }
  std::size_t total = 0;
  const auto* mapped = reinterpret_cast<const std::uint8_t*>(from);
  std::vector<std::size_t> at = differing_offsets(mapped, disk.data(), n, 4, &total);
  if (total == 0) return Status::ok();

  std::vector<std::string> where;
  for (std::size_t off : at) {
    std::string name = site != 0 ? fmt::format(" (the probe site {} +{})", probe, off) : std::string();
    where.push_back(fmt::format("file offset 0x{:x}{}: 0x{:02x} here, 0x{:02x} on disk", first + off, name, mapped[off],
                                disk[off]));
  }
  std::string events = slurp("/sys/kernel/tracing/uprobe_events");
  if (events.empty()) events = slurp("/sys/kernel/debug/tracing/uprobe_events");
  std::vector<std::string> entries = uprobe_entries_on(events, m.path, st.st_dev, st.st_ino);
  std::string who =
      entries.empty()
          ? "no uprobe_events entry names this file, so a BPF or perf uprobe holds it (bpftrace, perf_event_open; "
            "`bpftool perf` lists them)"
          : fmt::format("uprobe_events entries on this file: {}", fmt::join(entries, "; "));
  return Status::error(fmt::format(
      "foreign probe on the probe site {}: {} byte(s) of {} as mapped in this process differ from the file on "
      "disk while no tracer of this run is attached ({}); a uprobe another process placed traps here in every "
      "process and would be measured as the baseline. {}. Remove it (`tracebench cleanup` removes those of "
      "tracebench runs that are gone; others belong to whoever placed them) and run again",
      probe, total, m.path, fmt::join(where, ", "), who));
}

Status check_probe_point_unshared(const ProbePoint& p, std::string* unchecked) {
  switch (p.kind) {
    case ProbeKind::kUserFunction: {
      if (p.address != 0) TB_TRY(check_probe_site_unshared(p.address, p.name, unchecked));
      for (const auto& site : p.more_sites) TB_TRY(check_probe_site_unshared(site.address, p.name, unchecked));
      return Status::ok();
    }
    case ProbeKind::kUsdt:
    case ProbeKind::kUstTracepoint: return check_probe_site_unshared(0, p.name, unchecked);
    default: return Status::ok();
  }
}

}  // namespace tracebench
