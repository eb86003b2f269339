#include "site_links.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "libbpf_log.h"

namespace tracebench::ebpf {
namespace {

// BPF_LINK_CREATE's attributes for an uprobe_multi link, laid out as union
// bpf_attr's link_create member of Linux 6.6+ (include/uapi/linux/bpf.h).
struct UprobeMultiLinkCreate {
  __u32 prog_fd;
  __u32 target_fd;
  __u32 attach_type;
  __u32 flags;
  __aligned_u64 path;
  __aligned_u64 offsets;
  __aligned_u64 ref_ctr_offsets;
  __aligned_u64 cookies;
  __u32 cnt;
  __u32 multi_flags;
  __u32 pid;
};

std::string errstr(int err) { return std::strerror(err); }

}  // namespace

std::uint32_t link_id(int fd) {
  bpf_link_info info{};
  __u32 len = sizeof info;
  return fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0 ? info.id : 0;
}

Status SiteLinks::attach_each(bpf_program* prog, int pid, const std::string& binary,
                              const std::vector<std::string>& symbols, bool retprobe) {
  links_.reserve(links_.size() + symbols.size());
  for (const std::string& symbol : symbols) {
    clear_libbpf_messages();
    LIBBPF_OPTS(bpf_uprobe_opts, opts);
    opts.func_name = symbol.c_str();
    opts.retprobe = retprobe;
    bpf_link* link = bpf_program__attach_uprobe_opts(prog, pid, binary.c_str(), 0, &opts);
    if (!link) {
      const int err = errno;
      const std::string lib = libbpf_messages();
      return Status::error("ebpf: attaching " + std::string(retprobe ? "uretprobe" : "uprobe") + " to " + binary + ":" +
                           symbol + " (site " + std::to_string(links_.size() + 2) + "): " + errstr(err) +
                           (lib.empty() ? "" : " [" + lib + "]"));
    }
    links_.push_back(link);
  }
  return Status::ok();
}

Status SiteLinks::attach_multi(bpf_program* prog, int pid, const std::string& path,
                               const std::vector<std::uint64_t>& offsets) {
  UprobeMultiLinkCreate attr{};
  attr.prog_fd = static_cast<__u32>(bpf_program__fd(prog));
  attr.attach_type = kUprobeMultiAttachType;
  attr.path = reinterpret_cast<std::uintptr_t>(path.c_str());
  attr.offsets = reinterpret_cast<std::uintptr_t>(offsets.data());
  attr.cnt = static_cast<__u32>(offsets.size());
  attr.pid = pid > 0 ? static_cast<__u32>(pid) : 0;  // 0: every process
  const long fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof attr);
  if (fd < 0) {
    const int err = errno;
    return Status::error("ebpf: BPF_LINK_CREATE of an uprobe_multi link on " + std::to_string(offsets.size()) +
                         " offset(s) of " + path + ": " + errstr(err) +
                         (err == EINVAL || err == E2BIG ? " (uprobe_multi links are Linux 6.6 and later)" : ""));
  }
  multi_fd_ = static_cast<int>(fd);
  return Status::ok();
}

std::vector<std::uint32_t> SiteLinks::link_ids() const {
  std::vector<std::uint32_t> ids;
  for (bpf_link* l : links_) {
    if (std::uint32_t id = link_id(bpf_link__fd(l))) ids.push_back(id);
  }
  if (std::uint32_t id = link_id(multi_fd_)) ids.push_back(id);
  return ids;
}

int SiteLinks::destroy() {
  int first = 0;
  for (bpf_link* l : links_) {
    if (bpf_link__destroy(l) && !first) first = errno ? errno : EIO;
  }
  links_.clear();
  if (multi_fd_ >= 0 && close(multi_fd_) && !first) first = errno;
  multi_fd_ = -1;
  return first;
}

}  // namespace tracebench::ebpf
