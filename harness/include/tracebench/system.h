// What the machine is and what makes its numbers noisy.  Problems are
// reported as warnings in the run context, never fixed silently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tracebench/status.h"

namespace tracebench {

// The online CPUs (/sys/devices/system/cpu/online), in order; 0..n-1 from
// sysconf(_SC_NPROCESSORS_ONLN) when the file cannot be read.
std::vector<int> online_cpus();
int default_measured_cpu();  // the last CPU this thread may run on
Status pin_current_thread(int cpu);
int current_cpu();

struct SystemInfo {
  std::string hostname;
  std::string cpu_model;
  int cpus = 0;
  std::string kernel_release;
  std::string kernel_version;
  std::string kernel_config_hash;  // sha256 of /proc/config.gz or /boot/config-*; "" if none
  std::string kernel_config_source;
  std::string clocksource;
  bool virtualized = false;
  std::string hypervisor;  // from cpuid leaf 0x40000000 when virtualized
  std::vector<std::string> noise_warnings;
};

SystemInfo probe_system(int measured_cpu);

// The file-based part of probe_system(): the clocksource and the noise
// warnings from the governor, boost/turbo, SMT siblings, isolcpus,
// nohz_full, the TSC flags and CPU mitigations of `measured_cpu`, read under
// `root` ("" for the running system; tests give a directory that mimics
// /proc and /sys).  Appends to s->noise_warnings.
void detect_run_context(const std::string& root, int measured_cpu, SystemInfo* s);
// The CPUs of a kernel CPU list ("0-3,8,10-11"), in its order; "(null)",
// "" and malformed items give none.
std::vector<int> parse_cpu_list(const std::string& list);
// Whether a kernel CPU list holds `cpu`.
bool cpu_list_contains(const std::string& list, int cpu);

// CPUID leaf 0x40000000's vendor ("KVMKVMKVM", "TCGTCGTCGTCG", "bhyve bhyve ");
// "" when CPUID says no hypervisor.
std::string hypervisor_vendor();

// A hypervisor's name for people, from hypervisor_vendor()'s signature:
// "KVM", "QEMU TCG", "bhyve", "Hyper-V", ... (the signature is CPUID's own
// 12 bytes, "TCGTCGTCGTCG" or "bhyve bhyve ", not a name repeated per CPU);
// an unknown signature trimmed, "none" for "".
std::string hypervisor_name(const std::string& signature);

// Where a run executes, detected and never just trusted: "qemu-tcg" when
// CPUID shows QEMU's TCG, else "host"; a `claimed` value (from the VM lab's
// --execution) must agree ("qemu-kvm" needs a KVM hypervisor).  `hypervisor`
// is hypervisor_vendor()'s answer, "unknown" included.
Status check_execution(const std::string& claimed, const std::string& hypervisor, std::string* execution);

// The VM lab's TCG with an instruction-counting clock (QEMU -icount
// shift=0,sleep=off): the guest's TSC and clocks advance one nanosecond per
// instruction executed, so a figure is guest instructions per event, the
// same on every boot and every host, with no cache, pipeline or trap cost.
inline constexpr const char* kExecutionIcount = "qemu-tcg-icount";
// Whether results of this execution come from an emulator (TCG, either clock).
bool execution_emulated(const std::string& execution);

// CPU time of the whole machine (all CPUs, from /proc/stat) and of this
// process (all threads), in seconds, at one instant.  Two snapshots give the
// CPU time other processes used in between: on a small or virtual machine a
// busy neighbour (a compile, another run) slows the measured CPU even when it
// runs elsewhere (shared caches, SMT siblings, the host), so a run records it.
struct CpuTimeSnapshot {
  double wall_s = 0;
  double machine_busy_s = 0;  // user+nice+system+irq+softirq+steal over all CPUs
  double self_s = 0;          // this process, every thread
  bool ok = false;
  double steal_s = 0;  // steal over all CPUs: time the hypervisor took
};
CpuTimeSnapshot cpu_time_snapshot();
// Average number of CPUs kept busy by everything but this process between
// two snapshots (0 when either failed or no time passed).
double foreign_cpu_load(const CpuTimeSnapshot& a, const CpuTimeSnapshot& b);

// CPU time of one task: a thread (tid != 0) from
// /proc/<pid>/task/<tid>/schedstat (nanoseconds run), or a whole process
// (tid == 0) from its CPU clock (clock_getcpuclockid: every thread, exited
// ones too); with the user and kernel ticks of the matching /proc stat file,
// which only the split between them is taken from (ticks are 1/USER_HZ s).
// `precise` is false where the nanoseconds had to come from the ticks.
struct TaskCpu {
  double ns = 0;
  std::uint64_t user_ticks = 0, sys_ticks = 0;
  bool precise = true;
};
Status read_task_cpu(int pid, int tid, TaskCpu* out);
// Thread ids of `pid` now, from /proc/<pid>/task (empty when it is gone).
std::vector<int> process_threads(int pid);
// Fields 14 and 15 (utime, stime) of a /proc stat line; the command name in
// parentheses may hold spaces and parentheses.  false when malformed.
bool parse_stat_ticks(const std::string& stat, std::uint64_t* utime, std::uint64_t* stime);
// The first field of a schedstat line (nanoseconds on the CPU).
bool parse_schedstat_ns(const std::string& schedstat, double* ns);

// Mounts tracefs at /sys/kernel/tracing (and debugfs at /sys/kernel/debug)
// when they are not mounted yet.  Returns the tracefs path.
Status ensure_tracefs(std::string* path);

std::string read_file_trimmed(const std::string& path);
Status write_file(const std::string& path, const std::string& data);

}  // namespace tracebench
