// The links of a many-probe workload's sites (ProbePoint::more_sites): one
// uprobe link per function through libbpf, or one uprobe_multi link for
// every function (Linux 6.6+), which Debian 12's libbpf (1.1) cannot make:
// that one is BPF_LINK_CREATE as the kernel's UAPI defines it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracebench/status.h"

struct bpf_link;
struct bpf_program;

namespace tracebench::ebpf {

// The attach type a program must be loaded with to be linked by
// attach_multi() (BPF_TRACE_UPROBE_MULTI in the UAPI of Linux 6.6+).
inline constexpr unsigned kUprobeMultiAttachType = 48;

// The kernel's id of the BPF link open as `fd` (for leak checks); 0 when
// there is none.
std::uint32_t link_id(int fd);

class SiteLinks {
 public:
  SiteLinks() = default;
  SiteLinks(const SiteLinks&) = delete;
  SiteLinks& operator=(const SiteLinks&) = delete;
  ~SiteLinks() { destroy(); }

  // `prog` at the entry (or return) of each function `symbols` names in
  // `binary`, for `pid`'s hits only: a link each.
  Status attach_each(bpf_program* prog, int pid, const std::string& binary, const std::vector<std::string>& symbols,
                     bool retprobe);
  // `prog` at every offset of `path` through one uprobe_multi link, `pid`'s
  // hits only.
  Status attach_multi(bpf_program* prog, int pid, const std::string& path, const std::vector<std::uint64_t>& offsets);
  bool attached() const { return !links_.empty() || multi_fd_ >= 0; }
  // The kernel's ids of the links made (for leak checks).
  std::vector<std::uint32_t> link_ids() const;
  // Detaches everything; the first error's errno, 0 when none.
  int destroy();

 private:
  std::vector<bpf_link*> links_;
  int multi_fd_ = -1;
};

}  // namespace tracebench::ebpf
