// The cost tables' timing, cells, Core state and DIF program builders.
#include "tracers/dvm/costs/costs.h"

#include <algorithm>

namespace tbdvm::costs {

std::map<std::string, Cell> g_cells;
double g_tsc_hz = 0;  // the harness's TSC rate: the kernel's where exposed, else calibrated (CLOCK_MONOTONIC_RAW)
double g_tsc_calibrated_hz = 0;
std::string g_tsc_source;
double g_validation_seconds = 1.0;
nlohmann::json g_validation = nlohmann::json::array();

void timed(benchmark::State& state, const std::string& cell, uint32_t inner, const std::function<void(uint32_t)>& fn,
           const std::function<void(uint32_t)>& base_fn) {
  std::vector<double> samples, base;
  fn(inner);  // warm
  if (base_fn) base_fn(inner);
  for (auto _ : state) {
    uint64_t t0 = tsc_begin();
    fn(inner);
    uint64_t t1 = tsc_end();
    samples.push_back(static_cast<double>(t1 - t0) / inner);
    uint64_t b0 = tsc_begin();
    if (base_fn) base_fn(inner);
    uint64_t b1 = tsc_end();
    base.push_back(static_cast<double>(b1 - b0) / inner);
  }
  std::vector<double> diffs = samples;
  for (size_t i = 0; i < diffs.size(); i++) diffs[i] -= base[i];
  double m = median(samples) - median(base);
  double mn = *std::min_element(samples.begin(), samples.end()) - *std::min_element(base.begin(), base.end());
  g_cells[cell] = Cell{m, mn, "", diffs, samples, base};
  state.counters["cycles"] = m;
  state.counters["cycles_min"] = mn;
}

void subtract_part(Cell* c, double cycles, double min_cycles) {
  c->cycles -= cycles;
  c->min -= min_cycles;
  for (double& x : c->samples) x -= cycles;
  for (double& x : c->base) x += cycles;
}

Core& core() {
  static Core* c = new Core();
  return *c;
}

// Prologue: r1..r4 = small non-zero values, r5 = region address, r6 = a
// string, r7 = 8-aligned scratch (alloca 512), r8 = string "abcdefgh" (copy).
std::vector<Insn> prologue() {
  return {I(kOpSetx, 1, 0, 0, 0),
          I(kOpSetx, 2, 0, 0, 1),
          I(kOpSetx, 3, 0, 0, 2),
          I(kOpSetx, 4, 0, 0, 3),
          I(kOpLdgs, 5, 0, 0, kVarArg0),
          I(kOpSets, 6, 0, 0, 0),
          I(kOpSetx, 7, 0, 0, 4),
          I(kOpFlushts),
          I(kOpPushtv, 0, 7),
          I(kOpCall, 7, 0, 0, kSubrAlloca),
          I(kOpFlushts),
          I(kOpSets, 8, 0, 0, 0)};
}
Dif make_prog(const std::vector<Insn>& body, uint32_t repeat) {
  Dif d;
  d.ints = {12345, 67, 0xabcdef, 3, 512};
  d.strs = std::string("abcdefghijklmnop\0", 17);
  d.insns = prologue();
  for (uint32_t i = 0; i < repeat; i++) d.insns.insert(d.insns.end(), body.begin(), body.end());
  d.insns.push_back(I(kOpRet, 9));
  return d;
}

uint64_t run_prog(const Program* p) {
  Core& c = core();
  c.begin_firing();
  return dif_exec(p, &c.slot.ms);
}

}  // namespace tbdvm::costs
