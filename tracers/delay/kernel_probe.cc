// /dev/tracebench's DELAY_* ioctls (kmod/include/tracebench_kmod_abi.h).
#include "kernel_probe.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "kmod/include/tracebench_kmod_abi.h"

namespace tbdelay {

using tracebench::Status;

namespace {

// Why /dev/tracebench is missing, as far as this kernel tells.
std::string not_loaded() {
  std::string why = "the tracebench module is not loaded";
  if (access("/proc/modules", F_OK) != 0) {
    why = "this kernel cannot load modules (no /proc/modules)";
  } else {
    char c = 0;
    const int fd = ::open("/proc/sys/kernel/modules_disabled", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      if (read(fd, &c, 1) == 1 && c == '1') why = "this kernel refuses modules (kernel.modules_disabled = 1)";
      ::close(fd);
    }
  }
  return fmt::format(
      "{} does not exist: {}; run it in the VM lab (`tracebench vm -- selftest --only kernel`), "
      "which builds and loads the module, or insmod kmod/tracebench.ko",
      TB_KMOD_DEVICE_PATH, why);
}

}  // namespace

Status KernelProbe::open() {
  close();
  fd_ = ::open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::error(not_loaded());
    return tracebench::errno_status(fmt::format("open {} (needs root)", TB_KMOD_DEVICE_PATH), err);
  }
  tb_kmod_info info{};
  if (ioctl(fd_, TB_KMOD_IOC_INFO, &info) != 0) {
    const int err = errno;
    close();
    return tracebench::errno_status("TB_KMOD_IOC_INFO (module from another tracebench version?)", err);
  }
  if (info.abi_version != TB_KMOD_ABI_VERSION || !(info.caps & TB_KMOD_CAP_DELAY)) {
    close();
    return Status::error(
        fmt::format("the tracebench module speaks ABI {}, this binary {} (the delay probe needs {}): "
                    "rebuild kmod/ from this source tree",
                    info.abi_version, TB_KMOD_ABI_VERSION, TB_KMOD_ABI_VERSION));
  }
  return Status::ok();
}

Status KernelProbe::calibrate(std::uint32_t ns, KernelCalibration* out) {
  if (ns > TB_KMOD_DELAY_MAX_NS)
    return Status::error(
        fmt::format("delay.ns={} is above the module's {} ns (its FIRE loop runs 4096 events with preemption off)", ns,
                    TB_KMOD_DELAY_MAX_NS));
  tb_kmod_delay_set req{};
  req.ns = ns;
  const int rc = ioctl(fd_, TB_KMOD_IOC_DELAY_SET, &req);
  const int err = errno;
  out->clock_hz = req.tsc_hz;
  out->kernel_khz = req.tsc_khz;
  out->spin_cycles = req.spin_cycles;
  out->least_cycles = static_cast<double>(req.least_mcycles) / 1000.0;
  out->firing_cycles = static_cast<double>(req.firing_mcycles) / 1000.0;
  out->firing_iqr_cycles = static_cast<double>(req.firing_iqr_mcycles) / 1000.0;
  out->untraced_cycles = static_cast<double>(req.untraced_mcycles) / 1000.0;
  if (rc == 0) return Status::ok();
  if (err == ERANGE)
    return Status::error(fmt::format(
        "delay.ns={} is less than the module's probe's shortest firing on this kernel (~{:.0f} ns: the tracepoint's "
        "dispatch, the probe and its clock reads); choose delay.ns >= {:.0f}",
        ns, out->least_ns(), out->least_ns() + 1));
  if (err == EBUSY) return Status::error("the module's delay probe belongs to another process (one at a time)");
  return tracebench::errno_status("TB_KMOD_IOC_DELAY_SET", err);
}

Status KernelProbe::enable(bool on) {
  tb_kmod_delay_enable req{};
  req.on = on ? 1 : 0;
  if (ioctl(fd_, TB_KMOD_IOC_DELAY_ENABLE, &req) != 0)
    return tracebench::errno_status(on ? "TB_KMOD_IOC_DELAY_ENABLE 1" : "TB_KMOD_IOC_DELAY_ENABLE 0", errno);
  return Status::ok();
}

Status KernelProbe::status(KernelProbeStatus* out) {
  tb_kmod_delay_status st{};
  if (ioctl(fd_, TB_KMOD_IOC_DELAY_STATUS, &st) != 0)
    return tracebench::errno_status("TB_KMOD_IOC_DELAY_STATUS", errno);
  out->firings = st.firings;
  out->spent_cycles = st.spent_cycles;
  out->min_spent_cycles = st.min_spent_cycles;
  out->enabled_cycles = st.enabled_cycles;
  out->enabled_ns = st.enabled_ns;
  return Status::ok();
}

void KernelProbe::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string kernel_probe_unavailable() {
  KernelProbe p;
  const Status s = p.open();
  return s ? std::string() : s.message();
}

}  // namespace tbdelay
