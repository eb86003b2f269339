// D-VM workloads: hot loops with static D-VM probe sites.  Each site sits in
// its own noinline extern "C" function so uprobe-based tracers can attach to
// the same place (kUserFunction), and the syscall site wraps a real getpid
// (kSyscall) so kernel syscall tracers see the same events.
//
// Every site passes (arg0 = iteration, arg1 = payload address, arg2 = payload
// bytes) and lets D read the payload (tracemem(arg1, N)).
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "tracebench/workload.h"
#include "tracebench/payload_pattern.h"
#include "tracers/dvm/site.h"

extern "C" {
__attribute__((noinline, used)) void tb_dvm_hot(std::uint64_t i, const std::uint8_t* p, std::uint64_t n) {
  DVM_PROBE_REGION(tb, "tb_dvm_hot", "fire", p, n, i, reinterpret_cast<std::uint64_t>(p), n);
  asm volatile("" ::: "memory");
}

__attribute__((noinline, used)) void tb_dvm_func(std::uint64_t i, const std::uint8_t* p, std::uint64_t n) {
  // Function-entry provider: fbt:tracebench:tb_dvm_func:entry.
  TBDVM_SITE_FIRE_("fbt", __func__, "entry", (::tbdvm::Region{reinterpret_cast<std::uint64_t>(p), n}), i,
                   reinterpret_cast<std::uint64_t>(p), n);
  asm volatile("" ::: "memory");
}

__attribute__((noinline, used)) long tb_dvm_getpid(std::uint64_t i, const std::uint8_t* p, std::uint64_t n) {
  // Syscall provider: syscall:tracebench:getpid:entry and :return around the
  // real call, which carries the same three arguments in its registers, so
  // the kernel's syscall::getpid:entry (tracebench dvm --kernel) reads the
  // same arg0..arg2; return's arg0 = arg1 = the return value, as there.
  TBDVM_SITE_FIRE_("syscall", "getpid", "entry", (::tbdvm::Region{reinterpret_cast<std::uint64_t>(p), n}), i,
                   reinterpret_cast<std::uint64_t>(p), n);
  const long r = syscall(SYS_getpid, i, p, n);
  DVM_SYSCALL_RETURN(getpid, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(r));
  return r;
}
}

namespace tracebench {
namespace {

using SiteFn = void (*)(std::uint64_t, const std::uint8_t*, std::uint64_t);

class DvmLoop final : public WorkloadState {
 public:
  DvmLoop(SiteFn fn, std::size_t payload) : fn_(fn), payload_(payload ? payload : 8) {
    for (std::size_t i = 0; i < payload_.size(); i++)
      payload_[i] = static_cast<std::uint8_t>(tracebench::payload_byte(i));
    len_ = payload;
  }
  void fire(std::uint64_t n) override {
    const std::uint8_t* p = payload_.data();
    for (std::uint64_t i = 0; i < n; ++i) fn_(i, p, len_);
  }

 private:
  SiteFn fn_;
  std::vector<std::uint8_t> payload_;
  std::uint64_t len_ = 0;
};

void getpid_site(std::uint64_t i, const std::uint8_t* p, std::uint64_t n) { tb_dvm_getpid(i, p, n); }

template <SiteFn F>
Status make_loop(const WorkloadParams& p, std::unique_ptr<WorkloadState>* out) {
  *out = std::make_unique<DvmLoop>(F, p.payload_bytes);
  return Status::ok();
}

}  // namespace

TRACEBENCH_REGISTER_WORKLOAD(
    dvm_hot,
    Workload{"dvm_hot", "dvm", "hot loop calling tb_dvm_hot(), a D-VM static site (tb:tracebench:tb_dvm_hot:fire)",
             ProbePoint{"dvm:tb_dvm_hot", ProbeKind::kUserFunction, "tb_dvm_hot",
                        reinterpret_cast<std::uintptr_t>(&tb_dvm_hot), "D-VM static site in a noinline function",
                        /*payload_addr_arg=*/1, /*payload_len_arg=*/2},
             true, make_loop<tb_dvm_hot>, nullptr});

TRACEBENCH_REGISTER_WORKLOAD(
    dvm_func, Workload{"dvm_func", "dvm", "hot loop calling tb_dvm_func(), D-VM function-entry provider (fbt:::entry)",
                       ProbePoint{"dvm:tb_dvm_func", ProbeKind::kUserFunction, "tb_dvm_func",
                                  reinterpret_cast<std::uintptr_t>(&tb_dvm_func), "D-VM function-entry site",
                                  /*payload_addr_arg=*/1, /*payload_len_arg=*/2},
                       true, make_loop<tb_dvm_func>, nullptr});

TRACEBENCH_REGISTER_WORKLOAD(
    dvm_getpid,
    Workload{"dvm_getpid", "dvm", "getpid(2) wrapped by the D-VM syscall-entry provider (syscall::getpid:entry)",
             ProbePoint{"dvm:getpid", ProbeKind::kSyscall, "getpid", 0, "D-VM syscall-entry site around getpid"}, true,
             make_loop<getpid_site>, nullptr});

}  // namespace tracebench
