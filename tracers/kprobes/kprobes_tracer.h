// kprobes adapter: kprobe / kretprobe on a kernel function (the companion
// module's tracebench_kmod_target, or a syscall's entry function) through
//   - tracefs kprobe_events, enabled only in a private instance
//     "tracebench-<pid>-kp<n>" (actions tracefs_kprobe, tracefs_kretprobe);
//   - the perf kprobe PMU with a BPF program that counts per CPU
//     (actions bpf_kprobe, bpf_kretprobe).
// details() says how the kernel placed the probe (debugfs kprobes/list:
// ftrace-based, optimized jump, or int3), and the "optimize" option toggles
// debug.kprobes-optimization for the run (restored at teardown), so int3 and
// optimized probes can be compared at the same site ("offset=body" moves the
// probe off the ftrace call site, where optimization is possible).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tracebench/tracer.h"

struct tracefs_instance;
struct tracefs_dynevent;
struct tep_handle;

namespace tracebench::kprobes {

struct KprobesConfig {
  std::string offset = "0";      // byte offset into the function, or "body"
  int optimize = -1;             // -1 = leave debug.kprobes-optimization alone, else 0/1
  std::size_t buffer_kb = 4096;  // tracefs instance per-CPU buffer
  int maxactive = 0;             // kretprobe instances (0 = kernel default)
};

// The adapter's `--option kprobes.<key>=<value>` keys, and their parse.
const OptionSchema& option_schema();
// A spec's options: the values the plan parsed, when it carries them, else its raw options.
Status parse_spec_options(const AttachSpec& spec, KprobesConfig* out);

// The kernel function a probe point maps to ("__x64_sys_getpid" for
// syscall:getpid); an error when the symbol is not in /proc/kallsyms.
Status resolve_symbol(const ProbePoint& probe, std::string* symbol);

// How the kernel placed a probe, from debugfs kprobes/list:
// "ftrace", "optimized", "int3", "disabled", "gone", or "unknown" (no debugfs).
std::string probe_mode(const std::string& symbol, std::uint64_t offset, bool retprobe);

class KprobesTracer final : public Tracer {
 public:
  KprobesTracer();
  ~KprobesTracer() override;

  std::string_view name() const override { return "kprobes"; }
  std::string_view description() const override;
  Availability available() override;
  std::vector<std::string> actions() const override {
    return {"tracefs_kprobe", "tracefs_kretprobe", "bpf_kprobe", "bpf_kretprobe"};
  }
  bool supports(const ProbePoint& probe) const override;
  const OptionSchema& option_schema() const override { return kprobes::option_schema(); }
  ModelDescription model() const override;  // model.cc
  std::map<std::string, std::string> versions() const override;

  Status validate(const AttachSpec& spec) const override;
  Status attach(const AttachSpec& spec) override;
  Status enable() override;
  Status disable() override;
  Status drain() override;
  EventCounts counts() override;
  // The tracefs actions read their instance's buffer in disable(), on the
  // caller's thread: the consumer's work is the caller's.
  bool reads_on_caller() const override { return attached_ && !bpf_; }
  nlohmann::json details() const override;
  void teardown() noexcept override;

  // For tests.
  const std::string& instance_name() const { return instance_name_; }
  const std::string& event_name() const { return event_; }
  const std::string& symbol() const { return symbol_; }
  std::uint64_t offset() const { return offset_; }

 private:
  Status attach_tracefs();
  Status attach_bpf();
  Status create_tracefs_probe(std::uint64_t offset);
  Status open_perf_kprobe(std::uint64_t offset);
  Status read_tracefs();
  void wait_for_placement();

  KprobesConfig config_;
  AttachSpec spec_;
  bool bpf_ = false;
  bool retprobe_ = false;
  bool exact_ = true;
  bool attached_ = false;
  std::string symbol_;
  std::uint64_t offset_ = 0;
  std::string mode_ = "unknown";
  // tracefs
  std::string instance_name_;
  std::string event_;
  tracefs_instance* instance_ = nullptr;
  tracefs_dynevent* dynevent_ = nullptr;
  tep_handle* tep_ = nullptr;
  // bpf
  int map_fd_ = -1;
  int prog_fd_ = -1;
  int perf_fd_ = -1;
  int ncpus_ = 1;
  // optimization sysctl
  int saved_optimization_ = -1;
  // counts
  std::uint64_t recorded_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t enables_ = 0;
};

}  // namespace tracebench::kprobes
