// Loading the tracebench LTTng-UST provider library.
//
// The call sites in bench/lttng_ust.cc use dynamic probe linkage: the
// tracebench binary links neither liblttng-ust nor the probes, so processes
// that never run an LTTng workload carry no lttng-ust listener threads and no
// session-daemon registration.  The first LTTng workload setup or lttng
// attach() dlopen()s libtracebench_lttng_provider.so; its constructor
// registers the probes and liblttng-ust's constructor registers this process
// with the root session daemon (waiting up to LTTNG_UST_REGISTER_TIMEOUT ms
// when one is running).  The library is never unloaded (RTLD_NODELETE).
#pragma once

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "tracebench/status.h"

#ifndef TRACEBENCH_LTTNG_PROVIDER_PATH
#error "TRACEBENCH_LTTNG_PROVIDER_PATH must name libtracebench_lttng_provider.so (tracers/lttng/CMakeLists.txt)"
#endif

namespace tracebench::lttng {

// $TRACEBENCH_LTTNG_PROVIDER if set, else the library CMake built.
inline std::string provider_path() {
  if (const char* p = std::getenv("TRACEBENCH_LTTNG_PROVIDER"); p && *p) return p;
  return TRACEBENCH_LTTNG_PROVIDER_PATH;
}

inline bool provider_present() {
  struct stat st;
  return ::stat(provider_path().c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

namespace detail {
inline std::mutex& provider_mu() {
  static std::mutex mu;
  return mu;
}
inline bool& provider_loaded_flag() {
  static bool loaded = false;
  return loaded;
}
}  // namespace detail

inline bool provider_loaded() {
  std::lock_guard<std::mutex> lock(detail::provider_mu());
  return detail::provider_loaded_flag();
}

// Idempotent.  Fails with what to do when the library is missing or does not
// load (it needs liblttng-ust1).
inline Status load_provider() {
  std::lock_guard<std::mutex> lock(detail::provider_mu());
  if (detail::provider_loaded_flag()) return Status::ok();
  const std::string path = provider_path();
  // liblttng-ust reads this once, when it loads: without it a channel with a
  // blocking timeout (the adapter's `blocking_timeout_us` option) would
  // silently stay non-blocking in this process.  It changes nothing for
  // channels without a timeout.
  ::setenv("LTTNG_UST_ALLOW_BLOCKING", "1", 0);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NODELETE);
  if (!handle) {
    const char* why = ::dlerror();
    return Status::error("cannot load the LTTng-UST tracepoint provider " + path + ": " +
                         (why ? why : "unknown error") +
                         " (build the tracebench_lttng_provider target, install liblttng-ust1, or point "
                         "TRACEBENCH_LTTNG_PROVIDER at the library)");
  }
  detail::provider_loaded_flag() = true;
  return Status::ok();
}

}  // namespace tracebench::lttng
