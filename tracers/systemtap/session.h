// One run of a compiled script: staprun loads the module and becomes stapio
// (same pid), which copies the script's output to a file; SIGTERM makes it
// run the script's `end` probe, unload the module and exit.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "script.h"
#include "tracebench/status.h"

namespace tracebench::systemtap {

inline constexpr std::uint64_t kNoCount = ~std::uint64_t{0};

// What one session's output and staprun's warnings say.
struct SessionOutput {
  bool count_seen = false;               // the end probe printed the counter
  std::uint64_t count = 0;               // the script's own counter
  std::uint64_t errors = 0;              // "Number of errors: N"
  std::uint64_t skipped = 0;             // "skipped probes: N"
  std::uint64_t transport_failures = 0;  // "There were N transport failures"
  // The extra handlers' counters (Handlers), by index; kNoCount where the
  // end probe printed none.
  std::vector<std::uint64_t> extra;
  // The record action's lines: the event numbers they carry, as read.
  std::vector<std::uint64_t> records;
  std::string warnings;  // staprun's WARNING/ERROR lines, as printed
};

// Parses a session's output file (`out`) and staprun's stderr (`err`).
SessionOutput parse_output(const std::string& out, const std::string& err);

class StapSession {
 public:
  ~StapSession() { kill_now(); }
  // staprun -o <dir>/out.txt <ko> <params...> (the module runtime) or
  // stapbpf -o <dir>/out.txt <params...> <bo> (the BPF runtime: stapbpf
  // loads the programs, runs begin, and on SIGTERM runs end and exits),
  // then waits (up to `timeout_s`) for the begin probe's ready line.
  Status start(const std::string& runner, const std::string& file, const std::vector<std::string>& params,
               const std::string& dir, unsigned timeout_s, Runtime runtime = Runtime::kModule);
  // SIGTERM, wait for stapio to exit (the end probe ran, the module is
  // unloaded), and read what it wrote.
  Status stop(SessionOutput* out);
  // The teardown path: stop without reading; the module is removed if still loaded.
  void kill_now() noexcept;
  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
  std::string module_, dir_, staprun_;
  Runtime runtime_ = Runtime::kModule;
};

// Whether a module of this name is loaded (/sys/module/<name>).
bool module_loaded(const std::string& name);
// staprun -d <name>: removes a module no stapio holds.
void remove_module(const std::string& staprun, const std::string& name) noexcept;

}  // namespace tracebench::systemtap
