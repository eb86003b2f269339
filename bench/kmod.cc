// Companion-module workloads: every event is fired inside the kernel by
// kmod/tracebench.ko (FIRE ioctl on /dev/tracebench), so the syscall that
// starts the loop is paid once per fire(n), not per event.
//   kmod_fixed    tracepoint tracebench:tracebench_fixed (two u64)
//   kmod_payload  tracepoint tracebench:tracebench_payload (N-byte pattern)
//   kmod_target   the noinline kernel function tracebench_kmod_target
//                 (kprobes, fentry/fexit, function tracer attach here)
//   delay_kmod    kmod_fixed in FIREs of 100 events, for the delay tracer's
//                 kernel site only (tracers/delay/README.md)
// Needs the module: on a kernel without it, use `tracebench vm`.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tracebench/workload.h"
#include "kmod/include/tracebench_kmod_abi.h"

namespace tracebench {
namespace {

class KmodFire final : public WorkloadState {
 public:
  KmodFire(std::uint32_t event_id, std::uint32_t payload) : event_id_(event_id), payload_(payload) {}
  ~KmodFire() override {
    if (fd_ >= 0) close(fd_);
  }
  Status open_device() {
    fd_ = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
    if (fd_ < 0) {
      int err = errno;
      if (err == ENOENT)
        return Status::error(std::string(TB_KMOD_DEVICE_PATH) +
                             " does not exist: the tracebench module is not loaded (insmod "
                             "kmod/tracebench.ko, or run on another kernel with `tracebench vm`)");
      return errno_status(std::string("open ") + TB_KMOD_DEVICE_PATH + " (needs root)", err);
    }
    tb_kmod_info info{};
    if (ioctl(fd_, TB_KMOD_IOC_INFO, &info) != 0)
      return errno_status("TB_KMOD_IOC_INFO (module from another tracebench version?)", errno);
    if (info.abi_version != TB_KMOD_ABI_VERSION)
      return Status::error("tracebench module ABI " + std::to_string(info.abi_version) + ", this binary speaks " +
                           std::to_string(TB_KMOD_ABI_VERSION) + ": rebuild kmod/ from this source tree");
    if (payload_ > info.max_payload)
      return Status::error("payload " + std::to_string(payload_) + " bytes exceeds the module's " +
                           std::to_string(info.max_payload));
    return Status::ok();
  }
  void fire(std::uint64_t n) override {
    while (n > 0) {
      std::uint64_t chunk = n < TB_KMOD_MAX_COUNT ? n : TB_KMOD_MAX_COUNT;
      tb_kmod_fire f{};
      f.event_id = event_id_;
      f.count = chunk;
      f.payload_size = payload_;
      f.batch = TB_KMOD_MAX_BATCH;
      if (ioctl(fd_, TB_KMOD_IOC_FIRE, &f) != 0 || f.fired != chunk) std::abort();
      n -= chunk;
    }
  }

 private:
  std::uint32_t event_id_;
  std::uint32_t payload_;
  int fd_ = -1;
};

// One FIRE ioctl per sample starts the in-kernel loop: 1000 events amortize
// its entry and exit (a few µs, far more under TCG) to a few ns per event.
constexpr std::uint64_t kKmodMinBatch = 1000;

// The plan refuses a payload over TB_KMOD_MAX_PAYLOAD before anything is
// attached (the workloads' max_payload_bytes); these checks stay for callers
// that set a workload up without a plan, and for a module built with less.
Status make_fire(std::uint32_t id, std::size_t payload, std::unique_ptr<WorkloadState>* out) {
  if (payload > TB_KMOD_MAX_PAYLOAD)
    return Status::error("payload " + std::to_string(payload) + " bytes: the module fires at most " +
                         std::to_string(TB_KMOD_MAX_PAYLOAD));
  auto w = std::make_unique<KmodFire>(id, static_cast<std::uint32_t>(payload));
  TB_TRY(w->open_device());
  *out = std::move(w);
  return Status::ok();
}

Availability module_loaded() {
  if (access(TB_KMOD_DEVICE_PATH, F_OK) != 0)
    return Availability::no(std::string(TB_KMOD_DEVICE_PATH) +
                            " missing: the tracebench module is not loaded (insmod kmod/tracebench.ko, "
                            "or use `tracebench vm`, which builds and loads it)");
  return Availability::yes();
}

}  // namespace

TRACEBENCH_REGISTER_WORKLOAD(kmod_fixed, Workload{"kmod_fixed", "kmod",
                                                  "in-kernel loop firing tracebench:tracebench_fixed (needs kmod/)",
                                                  ProbePoint{"kmod:tracebench_fixed", ProbeKind::kKmodTracepoint,
                                                             "tracebench:tracebench_fixed", 0,
                                                             "companion-module tracepoint with two u64 fields"},
                                                  false,
                                                  [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
                                                    return make_fire(TB_KMOD_EV_FIXED, 0, out);
                                                  },
                                                  module_loaded, kKmodMinBatch});

TRACEBENCH_REGISTER_WORKLOAD(
    kmod_payload,
    Workload{"kmod_payload",
             "kmod",
             "in-kernel loop firing tracebench:tracebench_payload with N pattern bytes (needs kmod/)",
             ProbePoint{"kmod:tracebench_payload", ProbeKind::kKmodTracepoint, "tracebench:tracebench_payload", 0,
                        "companion-module tracepoint with a 0..4096-byte dynamic array"},
             true,
             [](const WorkloadParams& p, std::unique_ptr<WorkloadState>* out) {
               return make_fire(TB_KMOD_EV_PAYLOAD, p.payload_bytes, out);
             },
             module_loaded,
             kKmodMinBatch,
             {},
             "",
             TB_KMOD_MAX_PAYLOAD});

TRACEBENCH_REGISTER_WORKLOAD(
    kmod_target, Workload{"kmod_target",
                          "kmod",
                          "in-kernel loop calling the noinline tracebench_kmod_target(seq, payload, len) (needs kmod/)",
                          ProbePoint{"kfunc:tracebench_kmod_target", ProbeKind::kKernelFunction, TB_KMOD_TARGET_SYMBOL,
                                     0, "companion-module function: kprobe, fentry/fexit and function-tracer site"},
                          true,
                          [](const WorkloadParams& p, std::unique_ptr<WorkloadState>* out) {
                            return make_fire(TB_KMOD_EV_TARGET, p.payload_bytes, out);
                          },
                          module_loaded,
                          kKmodMinBatch,
                          {},
                          "",
                          TB_KMOD_MAX_PAYLOAD});

// The delay tracer's kernel site (`tracebench selftest`): kmod_fixed's
// events, with samples of 100 events rather than 1000.  The known cost is up
// to microseconds per event, so a FIRE's entry still weighs little beside
// it; and in a TCG guest on a busy host, where the emulator waits for its
// host CPU for milliseconds while the guest's clock runs on, samples this
// short mostly miss those gaps, and the blocks' medians see past them.
constexpr std::uint64_t kDelayKmodMinBatch = 100;

TRACEBENCH_REGISTER_WORKLOAD(
    delay_kmod,
    Workload{.name = "delay_kmod",
             .family = "kmod",
             .description =
                 "kmod_fixed's in-kernel loop in FIREs of 100 events: the delay tracer's kernel site (needs kmod/)",
             .probe = ProbePoint{"kmod:tracebench_fixed", ProbeKind::kKmodTracepoint, "tracebench:tracebench_fixed", 0,
                                 "companion-module tracepoint with two u64 fields"},
             .setup = [](const WorkloadParams&,
                         std::unique_ptr<WorkloadState>* out) { return make_fire(TB_KMOD_EV_FIXED, 0, out); },
             .available = module_loaded,
             .min_batch = kDelayKmodMinBatch,
             .only_tracer = "delay"});

}  // namespace tracebench
