// The LAVA job definition of a tracebench command (`tracebench lava job`).
//
// A job deploys a kernel and the VM lab's initramfs made for LAVA
// (scripts/vm/mkinitramfs.sh --lava: tracebench, the companion module built
// for that kernel, a shell on the console), boots it, and runs the command
// through LAVA's test shell (/tb/lava-test.sh, scripts/lava/guest-test.sh),
// which reports each benchmark as a test case and sends the run's files back
// in the job log (lava_log.h reads them).  The YAML is a stable function of
// LavaJob: same fields, same text, keys in a fixed order.
#pragma once

#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench::lava {

// Device types a job can be written for.
//   qemu: LAVA's qemu device type; deploy to tmpfs, boot method qemu (KVM or
//         TCG as the device's dictionary says), LAVA's overlay put into the
//         cpio initramfs (no disk image).
//   x86:  LAVA's x86 device type, a real PC: deploy to tftp, boot method
//         ipxe with the device's `ramdisk` commands, the overlay put into
//         the initramfs by the dispatcher.
const std::vector<std::string>& device_types();

struct LavaJob {
  std::string device_type = "qemu";
  std::string job_name;       // default: "tracebench " + the command
  std::string kernel_url;     // file://, http:// or https://
  std::string kernel_sha256;  // optional: LAVA checks the download
  std::string ramdisk_url;
  std::string ramdisk_sha256;
  std::vector<std::string> command;  // the tracebench arguments, e.g. run --quick -t kprobes
  std::string kernel_release;        // metadata only
  // Seconds; written as minutes when whole minutes.
  int job_timeout_s = 3600;
  int deploy_timeout_s = 600;
  int boot_timeout_s = 600;
  int test_timeout_s = 2400;
  int memory_mb = 2048;  // qemu
  int smp = 2;           // qemu
};

// Why `job` cannot be written ("" when it can): an unknown device type, a
// missing URL or command, a URL of another scheme, timeouts out of order.
std::string job_problem(const LavaJob& job);

// The job definition (YAML); call job_problem() first.
std::string job_yaml(const LavaJob& job);

// "90s", "40m", "2h" or a number of minutes as seconds; -1 when not one.
int parse_duration(const std::string& text);

// The guest's /tb/run.sh line for `command`: `run` gets the execution the
// guest finds ($TB_RUN_EXECUTION, guest-test.sh) before its own arguments.
std::vector<std::string> guest_argv(const std::vector<std::string>& command);

// The kernel command line the job gives the guest: the console on ttyS0
// with the kernel's banner, which LAVA waits for (the guest's init then
// keeps kernel messages off the console: they would cut result lines).
std::string kernel_args();

// The prompt of the guest's shell that LAVA waits for.
inline constexpr const char* kGuestPrompt = "tracebench-lava# ";

}  // namespace tracebench::lava
