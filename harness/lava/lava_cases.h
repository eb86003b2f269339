// A run's benchmarks as LAVA test cases (`tracebench lava cases`, which
// the guest's scripts/lava/guest-test.sh turns into lava-test-case calls).
#pragma once

#include <string>
#include <vector>

#include "tracebench/results.h"

namespace tracebench::lava {

struct CaseLine {
  std::string name;         // the benchmark's name in LAVA's alphabet
  std::string result;       // pass | fail | skip | unknown
  std::string measurement;  // overhead per event, ns ("-" when the run has none)
};

// A benchmark's name as a LAVA test case: '/' becomes '.', any character
// but [A-Za-z0-9._-] '_' ("kprobes/kmod_target/count/payload:0/threads:1"
// -> "kprobes.kmod_target.count.payload_0.threads_1"): LAVA turns '/' into
// '_' on its own and splits its signals on spaces and '='.
std::string case_name(const std::string& benchmark);

// Each benchmark: skip when it was skipped; fail when it failed ("error")
// or its verification failed or was partial; unknown when its events were
// right but its overhead changed level during the run ("unsteady": no
// figure, nothing said of the kernel); else pass.  The measurement is the
// median overhead per event in ns.
std::vector<CaseLine> benchmark_cases(const RunResult& run);

}  // namespace tracebench::lava
