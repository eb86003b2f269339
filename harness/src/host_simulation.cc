#include "tracebench/host_simulation.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace tracebench {

namespace {

constexpr std::string_view kBhyve = "tsc_step=21,no_rdtscp,syscall_ns=875,steal_hz=5000,steal_us=4";

Status bad(std::string_view spec, const std::string& why) {
  return Status::error(fmt::format(
      "{}={:?}: {}; give \"bhyve\" or a comma list of tsc_step=N, no_rdtscp, syscall_ns=N, steal_hz=N, steal_us=N",
      kHostSimulationEnv, std::string(spec), why));
}

Status number(std::string_view spec, std::string_view key, std::string_view text, double lo, double hi, double* out) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v) || v < lo || v > hi)
    return bad(spec, fmt::format("{} must be a number in [{}, {}], not {:?}", key, lo, hi, std::string(text)));
  *out = v;
  return Status::ok();
}

Status apply(std::string_view spec, std::string_view item, HostSimulation* s) {
  const auto eq = item.find('=');
  const std::string_view key = item.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
  if (key == "no_rdtscp") {
    if (eq != std::string_view::npos) return bad(spec, "no_rdtscp takes no value");
    s->no_rdtscp = true;
    return Status::ok();
  }
  if (key != "tsc_step" && key != "syscall_ns" && key != "steal_hz" && key != "steal_us")
    return bad(spec, fmt::format("unknown key {:?}", std::string(key)));
  if (eq == std::string_view::npos) return bad(spec, fmt::format("{:?} has no value", std::string(key)));
  double v = 0;
  if (key == "tsc_step") {
    TB_TRY(number(spec, key, value, 1, 10000, &v));
    if (v != std::floor(v)) return bad(spec, "tsc_step must be a whole number of cycles");
    s->tsc_step = static_cast<std::uint64_t>(v);
  } else if (key == "syscall_ns") {
    TB_TRY(number(spec, key, value, 0, 1e6, &s->syscall_ns));
  } else if (key == "steal_hz") {
    TB_TRY(number(spec, key, value, 0, 20000, &s->steal_hz));
  } else {  // steal_us
    TB_TRY(number(spec, key, value, 0, 1000, &s->steal_us));
  }
  return Status::ok();
}

struct FromEnvironment {
  HostSimulation sim;
  Status status = Status::ok();
};

FromEnvironment& from_environment() {
  static FromEnvironment e = [] {
    FromEnvironment r;
    if (const char* v = std::getenv(kHostSimulationEnv); v && *v) r.status = parse_host_simulation(v, &r.sim);
    if (!r.status) r.sim = HostSimulation{};
    return r;
  }();
  return e;
}

}  // namespace

std::uint64_t g_simulated_tsc_step = host_simulation().tsc_step;

Status parse_host_simulation(std::string_view spec, HostSimulation* out) {
  HostSimulation s;
  s.spec = std::string(spec);
  const std::string_view items = spec == "bhyve" ? kBhyve : spec;
  std::size_t start = 0;
  while (start <= items.size()) {
    const std::size_t comma = std::min(items.find(',', start), items.size());
    const std::string_view item = items.substr(start, comma - start);
    if (item.empty()) return bad(spec, "an empty item");
    TB_TRY(apply(spec, item, &s));
    start = comma + 1;
  }
  if ((s.steal_hz > 0) != (s.steal_us > 0)) return bad(spec, "steal_hz and steal_us go together");
  if (s.steal_hz * s.steal_us * 1e-6 > 0.5) return bad(spec, "steal_hz x steal_us would take over half the CPU");
  *out = s;
  return Status::ok();
}

const HostSimulation& host_simulation() { return from_environment().sim; }

Status host_simulation_status() { return from_environment().status; }

std::uint64_t simulated_syscall_cycles(const HostSimulation& s, double tsc_hz) {
  return static_cast<std::uint64_t>(std::llround(s.syscall_ns * 1e-9 * tsc_hz));
}

void set_host_simulation(const HostSimulation& s) {
  from_environment().sim = s;
  g_simulated_tsc_step = s.tsc_step;
}

}  // namespace tracebench
