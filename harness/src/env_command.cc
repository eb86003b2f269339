// `tracebench env`: per tracer, available on this kernel or exactly why
// not, with the machine and the clock self-check every run makes first.
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "builtin_commands.h"
#include "tracebench/clock_check.h"
#include "tracebench/env_table.h"
#include "tracebench/system.h"
#include "tracebench/tracer.h"

namespace tracebench::builtin {

int cmd_env(bool as_json) {
  using nlohmann::json;
  std::string tracefs;
  Status mounted = ensure_tracefs(&tracefs);
  SystemInfo sys = probe_system(default_measured_cpu());
  json j;
  j["host"] = sys.hostname;
  j["cpu_model"] = sys.cpu_model;
  j["cpus"] = sys.cpus;
  j["kernel_release"] = sys.kernel_release;
  j["tracefs"] = mounted ? json(tracefs) : json(mounted.message());
  j["noise_warnings"] = sys.noise_warnings;
  // The clock self-check every run makes first (pins this thread to each CPU in turn).
  ClockFacts facts = observe_clock(default_measured_cpu());
  ClockPlan clock = decide_clock(facts);
  j["clock"] = clock_json(facts, clock);
  j["tracers"] = json::array();
  for (const auto& e : tracer_registry()) {
    auto t = e.make();
    Availability a = t->available();
    json tj{{"name", e.name}, {"available", a.ok}};
    if (!a.ok) tj["reason"] = a.reason;
    json d = t->details();  // before attach: what the adapter probed (features, attach types)
    if (a.ok && !d.empty()) tj["details"] = d;
    tj["versions"] = t->versions();
    j["tracers"].push_back(tj);
  }
  if (as_json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("host {}  cpu {} x{}  kernel {}\n", sys.hostname, sys.cpu_model, sys.cpus,
                           sys.kernel_release);
  std::cout << fmt::format("tracefs: {}\n", j["tracefs"].get<std::string>());
  for (const auto& w : sys.noise_warnings) std::cout << "warning: " << w << "\n";
  std::cout << fmt::format(
      "\nclock (measured CPU {}): regions end with {}, migrations detected by {}, floor {:.0f} "
      "cycles, a sample spans >= {:.0f} cycles\n",
      facts.measured_cpu, to_string(clock.end_read), to_string(clock.migration), clock.floor_cycles,
      clock.min_sample_cycles);
  for (const auto& c : clock.checks) {
    std::cout << fmt::format("  {:<5} {:<11} {}\n        {}\n", c.verdict, c.name, c.value, c.reason);
  }
  std::cout << "\n" << tracers_table(j["tracers"]);
  return 0;
}

}  // namespace tracebench::builtin
