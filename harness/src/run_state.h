// Internal to the runner: state shared by the run, its benchmarks and the
// signal watcher (teardown.cc).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace tracebench {

// Held while anyone tears a tracer down: the run's own teardown and the
// watcher's emergency teardown never run at once on one tracer (they did:
// a slow eBPF teardown crashed in bpf_link__destroy when the watcher joined in).
extern std::recursive_mutex g_active_mu;
// Advanced by every block and attach: the watcher waits while it moves.
extern std::atomic<std::uint64_t> g_progress;

}  // namespace tracebench
