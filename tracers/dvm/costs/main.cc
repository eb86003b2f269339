// D-VM cost tables, measured the way Tao & Yang measured DTrace (rdtsc,
// cycles), as Google Benchmark benchmarks:
//   Table 1  per DIF instruction class        (table1/<op>)
//   Table 2  per built-in variable             (table2/<var>)
//   Table 3  consumer: snapshots, rebuild, copy bandwidth
//   Table 4  subroutines, actions, aggregations (table4/<name>)
//   Table 5  context switch between two threads on one CPU, and a wakeup of
//            a thread on another (table5/)
//   Table 6  flow per provider: site, VM prepare, per-ECB prepare; in the
//            kernel home (module loaded) stages 1-3 per probe kind (table6k/)
//   the tables checked bottom up: sys (1 ECB) vs sys10 (10 ECBs, 9
//            predicates false) at a fixed 50 kHz event rate, cycles per
//            event predicted from Tables 1, 2, 4, 6 vs measured (the CPU-
//            measuring Table 7 is `tracebench model suite -t dvm`)
// After the run the tables are written as JSON and Markdown:
//   tracebench_dvm_costs [--dvm_out=DIR] [--dvm_validation_seconds=S] [gbench flags]
#include "tracers/dvm/costs/costs.h"

#include <string>
#include <vector>

using namespace tbdvm::costs;

int main(int argc, char** argv) {
  std::string out = "results/dvm";
  std::vector<char*> rest;
  for (int i = 0; i < argc; i++) {
    std::string a = argv[i];
    if (a.rfind("--dvm_out=", 0) == 0)
      out = a.substr(10);
    else if (a.rfind("--dvm_validation_seconds=", 0) == 0)
      g_validation_seconds = std::stod(a.substr(25));
    else
      rest.push_back(argv[i]);
  }
  int rc = static_cast<int>(rest.size());
  const tracebench::TscInfo tsc = tracebench::probe_tsc();
  g_tsc_hz = tsc.hz;
  g_tsc_source = tsc.source;
  g_tsc_calibrated_hz = tsc.calibrated_hz;
  register_table1();
  register_table2();
  register_table4();
  register_table5();
  register_table6();
  register_table6k();
  register_table3();
  register_validation();
  benchmark::Initialize(&rc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rc, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  write_tables(out);
  return 0;
}
