// The one libbpf print callback of the adapter.
//
// libbpf's messages are never printed by default (probing attach types makes
// expected failures); they are kept per thread so an error can quote them.
// TRACEBENCH_LIBBPF_LOG=warn|info|debug prints them to stderr as well.
#pragma once

#include <string>

namespace tracebench::ebpf {

enum class LibbpfVerbosity { kSilent = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// Installs the callback (once per process) and sets the stderr gate; the
// default gate comes from TRACEBENCH_LIBBPF_LOG.
void install_libbpf_log();
void set_libbpf_verbosity(LibbpfVerbosity v);

// Messages at warning level libbpf emitted on this thread since the last
// clear, joined into one line, at most `max_chars` (keeps the tail).
void clear_libbpf_messages();
std::string libbpf_messages(std::size_t max_chars = 1500);

}  // namespace tracebench::ebpf
