// A noinline function with a USDT site in the adapter itself, so attach
// types can be probed by trying (uprobe, uretprobe, usdt) wherever the
// adapter is linked.  Symbol: tb_ebpf_self_probe; USDT: tracebench_ebpf:self_probe.
#pragma once

extern "C" void tb_ebpf_self_probe(int arg);

namespace tracebench::ebpf {
inline constexpr const char* kSelfProbeSymbol = "tb_ebpf_self_probe";
inline constexpr const char* kSelfProbeUsdt = "tracebench_ebpf:self_probe";
}  // namespace tracebench::ebpf
