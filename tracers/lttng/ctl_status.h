// Small helpers both LTTng adapters use around liblttng-ctl calls.
#pragma once

#include <chrono>
#include <string>

#include <lttng/lttng.h>

#include "tracebench/status.h"

namespace tracebench::lttng {

// A liblttng-ctl return value (negative = -lttng_error_code) as a Status.
inline Status ctl_status(const std::string& what, int ret) {
  if (ret >= 0) return Status::ok();
  return Status::error(what + ": " + lttng_strerror(ret));
}

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tracebench::lttng
