// The registries every tracer folder, workload family and subcommand adds
// itself to with one line.  Function-local statics avoid the static
// initialization order problem.
#include <algorithm>

#include "tracebench/workload.h"
#include "tracebench/command.h"
#include "tracebench/results.h"
#include "tracebench/tracer.h"

namespace tracebench {

std::string_view to_string(ProbeKind kind) {
  switch (kind) {
    case ProbeKind::kNone: return "none";
    case ProbeKind::kSyscall: return "syscall";
    case ProbeKind::kUserFunction: return "user_function";
    case ProbeKind::kUsdt: return "usdt";
    case ProbeKind::kMarker: return "marker";
    case ProbeKind::kKernelFunction: return "kernel_function";
    case ProbeKind::kKmodTracepoint: return "kmod_tracepoint";
    case ProbeKind::kUstTracepoint: return "ust_tracepoint";
    case ProbeKind::kProfile: return "profile";
  }
  return "unknown";
}

std::string_view to_string(PayloadSource source) {
  switch (source) {
    case PayloadSource::kNone: return "none";
    case PayloadSource::kWorkload: return "workload";
    case PayloadSource::kTracer: return "tracer";
  }
  return "unknown";
}

static std::vector<TracerEntry>& tracers() {
  static std::vector<TracerEntry> v;
  return v;
}

const std::vector<TracerEntry>& tracer_registry() { return tracers(); }

bool register_tracer(std::string name, TracerFactory make) {
  auto& v = tracers();
  auto at =
      std::lower_bound(v.begin(), v.end(), name, [](const TracerEntry& e, const std::string& n) { return e.name < n; });
  // The baseline first: every other tracer is read against it.
  if (name == kBaselineTracer)
    at = v.begin();
  else if (at == v.begin() && !v.empty() && v.front().name == kBaselineTracer)
    ++at;
  v.insert(at, TracerEntry{std::move(name), std::move(make)});
  return true;
}

std::unique_ptr<Tracer> make_tracer(std::string_view name) {
  for (const auto& e : tracers()) {
    if (e.name == name) return e.make();
  }
  return nullptr;
}

std::vector<std::pair<std::string, CleanupFn>>& cleanup_registry() {
  static std::vector<std::pair<std::string, CleanupFn>> v;
  return v;
}

bool register_cleanup(std::string name, CleanupFn fn) {
  cleanup_registry().emplace_back(std::move(name), std::move(fn));
  return true;
}

static std::vector<Workload>& workloads() {
  static std::vector<Workload> v;
  return v;
}

const std::vector<Workload>& workload_registry() { return workloads(); }

bool register_workload(Workload w) {
  auto& v = workloads();
  auto at = std::lower_bound(v.begin(), v.end(), w, [](const Workload& a, const Workload& b) {
    return a.family != b.family ? a.family < b.family : a.name < b.name;
  });
  v.insert(at, std::move(w));
  return true;
}

const Workload* find_workload(std::string_view name) {
  for (const auto& w : workloads()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

static std::vector<Command>& commands() {
  static std::vector<Command> v;
  return v;
}

bool register_command(Command c) {
  commands().push_back(std::move(c));
  return true;
}

const std::vector<Command>& command_registry() { return commands(); }

}  // namespace tracebench
