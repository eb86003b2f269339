// Many probes at once: 256 nop-first functions (tb_many_site_0 ..
// tb_many_site_255, each as site_nop's), called round-robin through a table
// over the first N of them, N = 1, 16 or 256; a tracer puts one uprobe on
// each of the N (ProbePoint::more_sites).  Against N = 1 the figure shows
// what the number of uprobes in a process costs each hit: the kernel finds
// the uprobe of a trapping address among all of them (upstream reworked
// that lookup in 6.12 and 6.14), and a tracer may attach one link per
// function or one for all (eBPF's uprobe_multi).  The untraced baseline
// makes the same indirect calls, so only the probes' cost remains.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tracebench/workload.h"

// Written in assembly so that every function's first instruction is a
// 1-byte nop, each on its own 16-byte boundary (the probe-site check's
// unit), with a table of their addresses.
asm(R"(
  .altmacro
  .macro tb_many_site n
    .globl tb_many_site_\n
    .type tb_many_site_\n, @function
    .p2align 4
  tb_many_site_\n:
    nop
    ret
    .size tb_many_site_\n, .-tb_many_site_\n
  .endm
  .macro tb_many_site_entry n
    .quad tb_many_site_\n
  .endm
  .text
  .set tb_many_i, 0
  .rept 256
    tb_many_site %tb_many_i
    .set tb_many_i, tb_many_i + 1
  .endr
  .section .data.rel.ro,"aw"
  .p2align 3
  .globl tb_many_sites_table
tb_many_sites_table:
  .set tb_many_i, 0
  .rept 256
    tb_many_site_entry %tb_many_i
    .set tb_many_i, tb_many_i + 1
  .endr
  .noaltmacro
  .text
)");

extern "C" void (*const tb_many_sites_table[256])();

namespace tracebench {
namespace {

constexpr std::size_t kSites = 256;

template <std::size_t N>
class ManySitesLoop final : public WorkloadState {
  static_assert(N > 0 && N <= kSites && (N & (N - 1)) == 0, "a power of two up to the table's size");

 public:
  void fire(std::uint64_t n) override {
    for (std::uint64_t i = 0; i < n; ++i) tb_many_sites_table[i & (N - 1)]();
  }
};

template <std::size_t N>
Status make_loop(const WorkloadParams&, std::unique_ptr<WorkloadState>* out) {
  *out = std::make_unique<ManySitesLoop<N>>();
  return Status::ok();
}

std::string site_symbol(std::size_t i) { return "tb_many_site_" + std::to_string(i); }

std::uintptr_t site_address(std::size_t i) { return reinterpret_cast<std::uintptr_t>(tb_many_sites_table[i]); }

ProbePoint sites(std::size_t n) {
  ProbePoint p{"user:tb_many_site_*", ProbeKind::kUserFunction, site_symbol(0), site_address(0),
               "first instruction of each: nop; " + std::to_string(n) + " function(s), called in turn"};
  for (std::size_t i = 1; i < n; ++i) p.more_sites.push_back({site_symbol(i), site_address(i)});
  return p;
}

// Run when named only: a uprobe link's removal waits for a grace period of
// the kernel's (each of N links, at every block's disable), and a quick run
// of every workload is no place for that.
template <std::size_t N>
Workload many_sites() {
  Workload w{"many_sites_" + std::to_string(N),
             "many_sites",
             "calls of " + std::to_string(N) + " nop-first functions in turn, one uprobe on each",
             sites(N),
             false,
             make_loop<N>};
  w.only_when_named = true;
  return w;
}

}  // namespace

TRACEBENCH_REGISTER_WORKLOAD(many_sites_1, many_sites<1>());
TRACEBENCH_REGISTER_WORKLOAD(many_sites_16, many_sites<16>());
TRACEBENCH_REGISTER_WORKLOAD(many_sites_256, many_sites<256>());

}  // namespace tracebench
