#include "usdt_semaphore.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include "tracers/common/elf.h"
#include "tracers/common/proc.h"

namespace tracebench::systemtap {

std::uint64_t mapped_address(const std::string& maps, const std::string& exe, std::uint64_t file_offset) {
  std::istringstream in(maps);
  for (std::string line; std::getline(in, line);) {
    // start-end perms offset dev inode path
    std::istringstream f(line);
    std::string range, perms, offset, dev, inode, path;
    if (!(f >> range >> perms >> offset >> dev >> inode) || !(f >> std::ws) || !std::getline(f, path)) continue;
    if (path != exe) continue;
    const auto dash = range.find('-');
    if (dash == std::string::npos) continue;
    const std::uint64_t start = std::stoull(range.substr(0, dash), nullptr, 16);
    const std::uint64_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    const std::uint64_t off = std::stoull(offset, nullptr, 16);
    if (file_offset >= off && file_offset - off < end - start) return start + (file_offset - off);
  }
  return 0;
}

Status UsdtSemaphore::locate(pid_t pid, const std::string& exe, const std::string& provider, const std::string& name) {
  elf::File f;
  if (std::string e = f.open(exe); !e.empty()) return Status::error("systemtap: " + e);
  std::vector<elf::SdtNote> notes;
  if (std::string e = elf::sdt_notes(f, &notes); !e.empty()) return Status::error("systemtap: " + e);
  std::uint64_t offset = 0;
  for (const auto& n : notes)
    if (n.provider == provider && n.name == name && n.error.empty() && n.semaphore != 0) offset = n.semaphore_offset;
  if (offset == 0)
    return Status::error("systemtap: " + exe + " has no semaphore-guarded USDT site " + provider + ":" + name +
                         " (the adapter sees such a probe placed by its semaphore)");
  address_ = mapped_address(common::read_text("/proc/" + std::to_string(pid) + "/maps"), exe, offset);
  if (address_ == 0)
    return Status::error("systemtap: the semaphore of " + provider + ":" + name + " is in no mapping of " + exe +
                         " in process " + std::to_string(pid));
  pid_ = pid;
  return Status::ok();
}

Status UsdtSemaphore::read(unsigned* value) const {
  const std::string mem = "/proc/" + std::to_string(pid_) + "/mem";
  const int fd = ::open(mem.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::error("systemtap: open " + mem + ": " + std::strerror(errno));
  unsigned short v = 0;
  const ssize_t n = ::pread(fd, &v, sizeof v, static_cast<off_t>(address_));
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof v))
    return Status::error("systemtap: read the USDT semaphore at 0x" + std::to_string(address_) + " in " + mem + ": " +
                         std::strerror(err));
  *value = v;
  return Status::ok();
}

}  // namespace tracebench::systemtap
