// The D-VM cost tables' shared parts (tracers/dvm/costs/): the harness's
// timing, the cells the benchmarks fill, the hand-built VM state of the
// core measurements, the tables' registration and writing.
//
//   common.cc        timed(), the cells, the Core state, DIF program builders
//   vm_tables.cc     Table 1 (DIF instructions), 2 (built-ins), 4 (subroutines,
//                    actions, aggregations): the VM alone, via dvm_fire
//   flow_tables.cc   Table 6 (flow through a real site and session), 3 (the
//                    consumer), 7 (validation, sys vs sys10 at 50 kHz)
//   switch_table.cc  Table 5 (context switch; wakeup on another CPU)
//   report.cc        the tables as JSON, Markdown and the suite's results schema
//   main.cc          tracebench_dvm_costs [--dvm_out=DIR] [--dvm_validation_seconds=S]
#pragma once

#include <benchmark/benchmark.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/clock.h"
#include "tracebench/stats.h"
#include "tracers/dvm/compiler/dcompile.h"
#include "tracers/dvm/one_slot.h"
#include "kmod/dvm/core/vm.h"
#include "tracers/dvm/runtime.h"

namespace tbdvm::costs {

// Timing: the harness's serialized reads.  A region ends with lfence; rdtsc;
// lfence, which every x86 host has (rdtscp is not in CPUID on every
// hypervisor), so no choice is made inside the timed region.
inline uint64_t tsc_begin() { return tracebench::tsc_begin(); }
inline uint64_t tsc_end() { return tracebench::tsc_end_lfence(); }

// The harness's median (interpolated), so a cell means what a suite figure means.
inline double median(std::vector<double> v) { return v.empty() ? 0 : tracebench::summarize(std::move(v)).p50; }

// Results collected by the benchmarks, read back when the tables are built.
struct Cell {
  double cycles = 0;  // median per operation
  double min = 0;
  std::string note;
  std::vector<double> samples;  // per-batch cycles per op (baseline subtracted)
  // timed() cells: per-batch cycles per op of the operation and of its
  // baseline, paired (samples[i] = traced[i] - base[i]).  Empty for cells
  // measured otherwise (the consumer's own counters).
  std::vector<double> traced, base;
};
extern std::map<std::string, Cell> g_cells;
// Takes a part measured apart (a helper instruction, the signal round trip)
// out of a cell: its figure and per-batch differences drop by `cycles`, and
// its baseline rises by as much, so traced - baseline stays the figure.
void subtract_part(Cell* c, double cycles, double min_cycles);

// Runs fn(inner) in Google Benchmark iterations; each iteration is one batch
// timed with the harness's serialized reads, then the same batch of
// `base_fn` (an empty timed region when there is none, the measurement
// floor).  The cell: median(traced) - median(baseline) per op, and the
// paired per-batch differences.
void timed(benchmark::State& state, const std::string& cell, uint32_t inner, const std::function<void(uint32_t)>& fn,
           const std::function<void(uint32_t)>& base_fn = nullptr);

// The TSC rate of this run (tracebench::probe_tsc) and the validation's length.
extern double g_tsc_hz, g_tsc_calibrated_hz;
extern std::string g_tsc_source;
extern double g_validation_seconds;
// Table 7's rows, as report.cc writes them.
extern nlohmann::json g_validation;

// ---------------------------------------------------------------------------
// The core measurements' State: one slot (like one CPU) with room for the
// tables' programs, the runtime's host functions, a 256-byte region as the
// probe's payload.
struct Core : OneSlot {
  alignas(64) uint8_t region[256];

  Core()
      : OneSlot({.strsize = 256,
                 .scratch = 1 << 16,
                 .buf_half = 1u << 20,
                 .agg = 4u << 20,
                 .agg_buckets = 4096,
                 .dyn_chunks = 4096},
                std::string("tb\0tracebench\0bench\0fire\0", 24), "tracebench_dvm_costs") {
    st.host = default_host();
    probe.id = 1;
    for (int i = 0; i < 256; i++) region[i] = static_cast<uint8_t>(i);
    fa.region = Region{reinterpret_cast<uint64_t>(region), sizeof region};
    fa.args[0] = reinterpret_cast<uint64_t>(region);
    fa.args[1] = 64;
    fa.tid = static_cast<uint64_t>(syscall(SYS_gettid));
    begin_firing();
  }
  void begin_firing() { OneSlot::begin_firing(1); }
};

Core& core();

struct Dif {
  std::vector<Insn> insns;
  std::vector<uint64_t> ints;
  std::string strs;
  Program p;
  const Program* prog() {
    p.insns = insns.data();
    p.ninsns = static_cast<uint32_t>(insns.size());
    p.inttab = ints.data();
    p.nints = static_cast<uint32_t>(ints.size());
    p.strtab = strs.data();
    p.strtab_len = static_cast<uint32_t>(strs.size());
    return &p;
  }
};

inline Insn I(uint8_t op, uint8_t rd = 0, uint8_t r1 = 0, uint8_t r2 = 0, uint32_t imm = 0) {
  return Insn{op, rd, r1, r2, imm};
}

constexpr uint32_t kRepeat = 64;  // copies of the measured instruction

std::vector<Insn> prologue();
Dif make_prog(const std::vector<Insn>& body, uint32_t repeat);
uint64_t run_prog(const Program* p);

// Table 1 entries: name, class, instruction sequence, instructions per sequence.
struct InsnCase {
  const char* name;
  const char* cls;
  std::vector<Insn> seq;
  double per_seq = 1;
  // Cells whose cost is part of each sequence (push/flush around an
  // associative access); subtracted when the tables are built.
  std::vector<std::string> subtract = {};
};
extern std::vector<InsnCase> g_insn_cases;

// Builds core Ecb/Action structures from a compiled single-clause program.
struct CoreEcb {
  std::shared_ptr<CompiledProgram> prog;
  std::vector<Action> acts;
  std::vector<std::vector<const Program*>> keys;
  Ecb ecb;
  Ecb* chain[16];
};
std::unique_ptr<CoreEcb> core_ecb(const std::string& clause_body, uint32_t copies = 1);
void fire_core(CoreEcb* e, uint32_t necbs);

void register_table1();
void register_table2();
void register_table4();
void register_table5();
void register_table6();
void register_table6k();
void register_table3();
void register_validation();
void write_tables(const std::string& dir);

}  // namespace tbdvm::costs
