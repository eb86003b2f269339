// The LAVA job writer (lava_job.h).  The YAML is written as text, block
// style, keys in a fixed order, so a job is a stable function of its
// fields (the lab's tooling diffs and caches jobs).
#include "lava_job.h"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

namespace tracebench::lava {
namespace {

// A YAML scalar: plain when it cannot be read as anything but that
// string, else double-quoted (a JSON string is a valid YAML one).
std::string scalar(const std::string& s) {
  static const char* keywords[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == '/';
  });
  if (plain && (s[0] == '-' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) plain = false;
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* k : keywords)
    if (lower == k) plain = false;
  return plain ? s : nlohmann::json(s).dump();
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

bool url_ok(const std::string& u) {
  for (const char* scheme : {"file:///", "http://", "https://"})
    if (u.rfind(scheme, 0) == 0 && u.size() > std::string(scheme).size()) return true;
  return false;
}

void timeout(std::ostream& y, const std::string& indent, const std::string& key, int seconds) {
  if (seconds % 60 == 0)
    y << indent << key << ":\n" << indent << "  minutes: " << seconds / 60 << "\n";
  else
    y << indent << key << ":\n" << indent << "  seconds: " << seconds << "\n";
}

void header(std::ostream& y, const LavaJob& j) {
  y << "# tracebench LAVA job (`tracebench lava job`, harness/lava/README.md)\n";
  y << "device_type: " << scalar(j.device_type) << "\n";
  y << "job_name: " << scalar(j.job_name.empty() ? "tracebench " + joined(j.command) : j.job_name) << "\n";
  y << "priority: medium\nvisibility: public\n";
  y << "timeouts:\n";
  timeout(y, "  ", "job", j.job_timeout_s);
  timeout(y, "  ", "action", std::max(j.deploy_timeout_s, std::max(j.boot_timeout_s, j.test_timeout_s)));
  timeout(y, "  ", "connection", 120);
  y << "metadata:\n";
  y << "  tracebench.command: " << scalar(joined(j.command)) << "\n";
  if (!j.kernel_release.empty()) y << "  tracebench.kernel: " << scalar(j.kernel_release) << "\n";
}

// qemu: the device's template takes these from the job's context (a
// server renders the device dictionary with it; render-device.py does the
// same for lava-run).  KVM or TCG is the device's: its dictionary sets
// no_kvm.  TCG runs single-threaded: with multi-threaded TCG a vCPU may run
// a stale translation of kernel text another vCPU just patched (kprobes,
// static keys; scripts/vm/README.md).
void qemu_context(std::ostream& y, const LavaJob& j) {
  y << "context:\n  arch: amd64\n  memory: " << j.memory_mb << "\n";
  // Under KVM the template's -enable-kvm comes first and TCG is only qemu's
  // fallback; -cpu max follows the template's -cpu host and is the same there.
  y << "  extra_options:\n  - " << scalar("-smp " + std::to_string(j.smp)) << "\n  - "
    << scalar("-accel tcg,thread=single") << "\n  - " << scalar("-cpu max") << "\n";
}

void x86_context(std::ostream& y) { y << "context:\n  extra_kernel_args: " << scalar(kernel_args()) << "\n"; }

void image(std::ostream& y, const std::string& indent, const std::string& url, const std::string& sha256) {
  y << indent << "url: " << scalar(url) << "\n";
  if (!sha256.empty()) y << indent << "sha256sum: " << scalar(sha256) << "\n";
}

void qemu_deploy_boot(std::ostream& y, const LavaJob& j) {
  y << "- deploy:\n    to: tmpfs\n    os: oe\n";
  timeout(y, "    ", "timeout", j.deploy_timeout_s);
  y << "    images:\n      kernel:\n";
  y << "        image_arg: " << scalar("-kernel {kernel} -append \"" + kernel_args() + "\"") << "\n";
  image(y, "        ", j.kernel_url, j.kernel_sha256);
  y << "      ramdisk:\n        image_arg: " << scalar("-initrd {ramdisk}") << "\n";
  image(y, "        ", j.ramdisk_url, j.ramdisk_sha256);
  y << "        format: cpio.newc\n        overlays:\n          lava: true\n";
  y << "- boot:\n    method: qemu\n    media: tmpfs\n";
  timeout(y, "    ", "timeout", j.boot_timeout_s);
  y << "    prompts:\n    - " << scalar(kGuestPrompt) << "\n";
}

void x86_deploy_boot(std::ostream& y, const LavaJob& j) {
  y << "- deploy:\n    to: tftp\n    os: oe\n";
  timeout(y, "    ", "timeout", j.deploy_timeout_s);
  y << "    kernel:\n";
  image(y, "      ", j.kernel_url, j.kernel_sha256);
  y << "    ramdisk:\n";
  image(y, "      ", j.ramdisk_url, j.ramdisk_sha256);
  y << "      install_overlay: true\n";
  y << "- boot:\n    method: ipxe\n    commands: ramdisk\n";
  timeout(y, "    ", "timeout", j.boot_timeout_s);
  y << "    prompts:\n    - " << scalar(kGuestPrompt) << "\n";
}

void test_action(std::ostream& y, const LavaJob& j) {
  y << "- test:\n";
  timeout(y, "    ", "timeout", j.test_timeout_s);
  y << "    definitions:\n    - from: inline\n      name: tracebench\n      path: inline/tracebench.yaml\n";
  y << "      repository:\n        metadata:\n          format: " << scalar("Lava-Test Test Definition 1.0")
    << "\n          name: tracebench\n";
  y << "          description: " << scalar("tracebench " + joined(j.command)) << "\n";
  y << "        run:\n          steps:\n          - " << scalar("sh /tb/lava-test.sh") << "\n";
}

}  // namespace

const std::vector<std::string>& device_types() {
  static const std::vector<std::string> types = {"qemu", "x86"};
  return types;
}

std::string kernel_args() {
  return "console=ttyS0,115200 panic=-1 oops=panic softlockup_panic=1 softlockup_all_cpu_backtrace=1 "
         "rdinit=/init tsc=reliable";
}

int parse_duration(const std::string& text) {
  if (text.empty()) return -1;
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (...) { return -1; }
  const std::string unit = text.substr(used);
  const long scale = unit.empty() || unit == "m" ? 60 : unit == "s" ? 1 : unit == "h" ? 3600 : -1;
  if (scale < 0 || value < 1 || value > 7 * 24 * 3600 / scale) return -1;
  return static_cast<int>(value * scale);
}

std::vector<std::string> guest_argv(const std::vector<std::string>& command) {
  if (!command.empty() && command[0] == "run")
    return {"sh", "-c", "sub=$1; shift; exec tracebench \"$sub\" $TB_RUN_EXECUTION \"$@\"", "tracebench"};
  return {"tracebench"};
}

std::string job_problem(const LavaJob& j) {
  const auto& types = device_types();
  if (std::find(types.begin(), types.end(), j.device_type) == types.end())
    return "--device-type '" + j.device_type + "': expected " + joined(types);
  if (j.command.empty()) return "no tracebench command after --, e.g. -- run --quick -t kprobes -w kmod_target";
  if (!url_ok(j.kernel_url)) return "kernel URL '" + j.kernel_url + "': expected file:///, http:// or https://";
  if (!url_ok(j.ramdisk_url)) return "initramfs URL '" + j.ramdisk_url + "': expected file:///, http:// or https://";
  for (int m : {j.deploy_timeout_s, j.boot_timeout_s, j.test_timeout_s})
    if (m < 1 || m > j.job_timeout_s) return "every action's timeout must be 1 second or more and within the job's";
  if (j.smp < 1 || j.memory_mb < 256) return "--smp must be 1 or more and --mem 256 MiB or more";
  return {};
}

std::string job_yaml(const LavaJob& j) {
  std::ostringstream y;
  header(y, j);
  if (j.device_type == "qemu")
    qemu_context(y, j);
  else
    x86_context(y);
  y << "actions:\n";
  if (j.device_type == "qemu")
    qemu_deploy_boot(y, j);
  else
    x86_deploy_boot(y, j);
  test_action(y, j);
  return y.str();
}

}  // namespace tracebench::lava
