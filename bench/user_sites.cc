// User-space probe sites for uprobes and USDT: functions whose first
// instruction differs (the kernel handles each differently: a 1-byte nop and
// `push %rbp` are emulated or single-stepped, `ret` is emulated as a branch,
// a 5-byte nop can be optimized into a call on kernels with the uprobe nop5
// optimisation; upstream's uprobe bench has the nop, push and ret cases, for
// uprobes and return probes alike), and a sys/sdt.h
// site guarded by its semaphore (off = the disabled-probe cost: one load and
// a predicted branch).
#include <sys/sdt.h>

#include <cstdint>

#include "tracebench/workload.h"

// Written in assembly so the first instruction is exactly what the name says.
asm(R"(
  .text
  .globl tb_site_nop
  .type tb_site_nop, @function
  .p2align 4
tb_site_nop:
  nop
  ret
  .size tb_site_nop, .-tb_site_nop

  .globl tb_site_push
  .type tb_site_push, @function
  .p2align 4
tb_site_push:
  push %rbp
  mov %rsp, %rbp
  pop %rbp
  ret
  .size tb_site_push, .-tb_site_push

  .globl tb_site_nop5
  .type tb_site_nop5, @function
  .p2align 4
tb_site_nop5:
  .byte 0x0f, 0x1f, 0x44, 0x00, 0x00
  ret
  .size tb_site_nop5, .-tb_site_nop5

  .globl tb_site_ret
  .type tb_site_ret, @function
  .p2align 4
tb_site_ret:
  ret
  .size tb_site_ret, .-tb_site_ret
)");

extern "C" void tb_site_nop();
extern "C" void tb_site_push();
extern "C" void tb_site_nop5();
extern "C" void tb_site_ret();

// The USDT semaphore: a tracer that attaches increments it (the kernel does
// it through the uprobe's reference counter).
extern "C" {
__extension__ unsigned short tracebench_hot_semaphore __attribute__((unused, section(".probes")));
}
#define TRACEBENCH_HOT_ENABLED() __builtin_expect(tracebench_hot_semaphore, 0)

namespace tracebench {
namespace {

template <void (*F)()>
class SiteLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) F();
  }
};

class UsdtLoop final : public WorkloadState {
 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (TRACEBENCH_HOT_ENABLED()) DTRACE_PROBE1(tracebench, hot, i);
      asm volatile("" ::: "memory");
    }
  }
};

template <void (*F)()>
Status make_site(const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
  *out = std::make_unique<SiteLoop<F>>();
  return Status::ok();
}

ProbePoint site(const char* symbol, void (*fn)(), const char* what) {
  return ProbePoint{std::string("user:") + symbol, ProbeKind::kUserFunction, symbol,
                    reinterpret_cast<std::uintptr_t>(fn), what};
}

}  // namespace

TRACEBENCH_REGISTER_WORKLOAD(site_nop, Workload{"site_nop", "user_sites",
                                                "call of a function whose first instruction is a 1-byte nop",
                                                site("tb_site_nop", tb_site_nop, "first instruction: nop"), false,
                                                make_site<tb_site_nop>});

TRACEBENCH_REGISTER_WORKLOAD(site_push, Workload{"site_push", "user_sites",
                                                 "call of a function whose first instruction is push %rbp",
                                                 site("tb_site_push", tb_site_push, "first instruction: push %rbp"),
                                                 false, make_site<tb_site_push>});

TRACEBENCH_REGISTER_WORKLOAD(site_nop5,
                             Workload{"site_nop5", "user_sites",
                                      "call of a function whose first instruction is a 5-byte nop",
                                      site("tb_site_nop5", tb_site_nop5, "first instruction: nopl 0x0(%rax,%rax,1)"),
                                      false, make_site<tb_site_nop5>});

TRACEBENCH_REGISTER_WORKLOAD(site_ret,
                             Workload{"site_ret", "user_sites", "call of a function whose first instruction is ret",
                                      site("tb_site_ret", tb_site_ret, "first instruction: ret"), false,
                                      make_site<tb_site_ret>});

TRACEBENCH_REGISTER_WORKLOAD(usdt,
                             Workload{"usdt", "user_sites", "a sys/sdt.h probe tracebench:hot guarded by its semaphore",
                                      ProbePoint{"usdt:tracebench:hot", ProbeKind::kUsdt, "tracebench:hot", 0,
                                                 "USDT probe with semaphore"},
                                      false, [](const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
                                        *out = std::make_unique<UsdtLoop>();
                                        return Status::ok();
                                      }});

}  // namespace tracebench
