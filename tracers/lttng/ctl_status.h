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

// lttng_create_session_ext() as a liblttng-ctl int (its lttng_error_code
// starts at LTTNG_OK = 10, not 0).
inline int create_session(lttng_session_descriptor* desc) {
  const lttng_error_code code = lttng_create_session_ext(desc);
  return code == LTTNG_OK ? 0 : -static_cast<int>(code);
}

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tracebench::lttng
