// SystemTap adapter, module runtime: the script for the probe and action
// (script.h) is compiled to a kernel module before anything is timed
// (compile.h, cached by the script's hash), or taken precompiled from the
// VM lab's /tb/stap; each enable() runs staprun on it (the begin probe says
// it is armed) and each disable() stops it (the end probe prints the
// script's own counter, the module is unloaded), so a disabled block runs
// with no probe in the kernel at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host_facts.h"
#include "live_thread.h"
#include "script.h"
#include "session.h"
#include "usdt_semaphore.h"
#include "tracebench/tracer.h"

namespace tracebench::systemtap {

// One class for both runtimes, registered as two tracers so a run can
// measure them side by side: `systemtap` (the module runtime) and
// `systemtap_bpf` (stap --runtime=bpf, run by stapbpf).
class SystemtapTracer final : public Tracer {
 public:
  explicit SystemtapTracer(Runtime runtime = Runtime::kModule) : runtime_(runtime) {}
  std::string_view name() const override { return runtime_ == Runtime::kBpf ? "systemtap_bpf" : "systemtap"; }
  std::string_view description() const override {
    return runtime_ == Runtime::kBpf
               ? "SystemTap's BPF runtime: a stap script compiled to BPF programs (stap --runtime=bpf), run by "
                 "stapbpf (a counter per event)"
               : "SystemTap: a stap script compiled to a kernel module, run by staprun (a counter per event)";
  }
  Availability available() override { return judge(probe_host(), runtime_); }
  std::vector<std::string> actions() const override { return {"count", "record"}; }
  // Every kind SystemTap has a probe for; validate() refuses, with the
  // reason, those this adapter cannot run (script_supports()), so a run
  // lists them as skipped and why.
  bool supports(const ProbePoint& p) const override {
    switch (p.kind) {
      case ProbeKind::kSyscall:
      case ProbeKind::kKernelFunction:
      case ProbeKind::kKmodTracepoint:
      case ProbeKind::kUserFunction:
      case ProbeKind::kUsdt: return true;
      default: return false;
    }
  }
  std::size_t max_payload_bytes(const ProbePoint&, const std::string&) const override { return 0; }
  const OptionSchema& option_schema() const override;
  ModelDescription model() const override;
  Status validate(const AttachSpec& spec) const override;
  Status attach(const AttachSpec& spec) override;
  Status enable() override;
  Status disable() override;
  EventCounts counts() override { return counts_; }
  nlohmann::json details() const override;
  void teardown() noexcept override;

 private:
  // Sees a script live whose liveness is not kLiveCount (script.h).
  Status wait_live(unsigned timeout_s);
  void check_extra_handlers(const SessionOutput& o);
  StapScript script_;
  std::string ko_, staprun_, dir_, target_;
  Runtime runtime_ = Runtime::kModule;
  std::vector<std::string> params_;
  long pid_ = 0;
  unsigned ready_timeout_s_ = 120;
  double compile_seconds_ = 0;
  bool compile_cached_ = false;
  std::string module_source_;  // "compiled here", "cached", "precompiled"
  StapSession session_;
  EventCounts counts_;
  std::uint64_t sessions_ = 0, transport_failures_ = 0, restarts_ = 0;
  // Events enable() saw counted while it fired its own to see the probe live.
  std::uint64_t self_fired_total_ = 0;
  // What each handler had counted when the session was seen live
  // (kLiveCount): events enable() fired itself, not the workload's.
  std::vector<std::uint64_t> self_counted_;
  std::string action_;
  std::uint64_t records_read_ = 0;  // record lines read back (the record action)
  long syscall_nr_ = -1;
  std::uintptr_t user_fn_ = 0;              // the probed user function (kUserFunction)
  UsdtSemaphore semaphore_;                 // the probed USDT site's (Liveness::kSemaphore)
  LiveThread live_thread_;                  // target() of the BPF runtime's user-function script
  std::vector<std::uint64_t> per_session_;  // events each session counted
  std::string warnings_;
};

// How many of the events numbered after..last have a record among
// `records` (each counted once).
std::uint64_t records_in_range(const std::vector<std::uint64_t>& records, std::uint64_t after, std::uint64_t last);

// Objects a killed run left: stapio processes of tracebench_stap_* modules
// whose parent is gone, such modules no stapio holds, and session folders
// of dead runs.
std::vector<std::string> leftovers(bool remove);

}  // namespace tracebench::systemtap
