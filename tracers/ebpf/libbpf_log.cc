#include "libbpf_log.h"

#include <bpf/libbpf.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tracebench::ebpf {
namespace {

std::atomic<int> g_verbosity{0};
thread_local std::string t_messages;

int level_rank(libbpf_print_level level) {
  switch (level) {
    case LIBBPF_WARN: return 1;
    case LIBBPF_INFO: return 2;
    default: return 3;
  }
}

int print_cb(enum libbpf_print_level level, const char* fmt, va_list args) {
  // A verifier log arrives as one message of many KiB; keep it whole (its
  // end says why the program was refused).
  std::string text(1024, '\0');
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(text.data(), text.size(), fmt, copy);
  va_end(copy);
  if (n < 0) return 0;
  if (static_cast<std::size_t>(n) >= text.size()) {
    text.assign(static_cast<std::size_t>(n) + 1, '\0');
    va_copy(copy, args);
    vsnprintf(text.data(), text.size(), fmt, copy);
    va_end(copy);
  }
  text.resize(static_cast<std::size_t>(n));
  const char* buf = text.c_str();
  int rank = level_rank(level);
  if (rank <= g_verbosity.load(std::memory_order_relaxed)) std::fputs(buf, stderr);
  if (level == LIBBPF_WARN) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) {
      if (!t_messages.empty()) t_messages += "; ";
      t_messages += line;
      // Bounded: keep the tail, which is where the error is.
      if (t_messages.size() > 16384) t_messages.erase(0, t_messages.size() - 8192);
    }
  }
  return n;
}

LibbpfVerbosity from_env() {
  const char* v = std::getenv("TRACEBENCH_LIBBPF_LOG");
  if (!v) return LibbpfVerbosity::kSilent;
  if (!std::strcmp(v, "warn") || !std::strcmp(v, "1")) return LibbpfVerbosity::kWarn;
  if (!std::strcmp(v, "info") || !std::strcmp(v, "2")) return LibbpfVerbosity::kInfo;
  if (!std::strcmp(v, "debug") || !std::strcmp(v, "3")) return LibbpfVerbosity::kDebug;
  return LibbpfVerbosity::kSilent;
}

}  // namespace

void install_libbpf_log() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_verbosity = static_cast<int>(from_env());
    libbpf_set_print(print_cb);
  });
}

void set_libbpf_verbosity(LibbpfVerbosity v) {
  install_libbpf_log();
  g_verbosity = static_cast<int>(v);
}

void clear_libbpf_messages() { t_messages.clear(); }

std::string libbpf_messages(std::size_t max_chars) {
  if (t_messages.size() <= max_chars) return t_messages;
  return "..." + t_messages.substr(t_messages.size() - max_chars);
}

}  // namespace tracebench::ebpf
