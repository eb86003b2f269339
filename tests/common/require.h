// Skips that fail when the capability is required.  TB_SKIP_OR_FAIL(cap,
// reason) is GTEST_SKIP() with the reason (ctest reports the test as
// skipped), unless `cap` is listed in TRACEBENCH_REQUIRE (comma list, e.g.
// "ebpf,ftrace,perf,lttng"; CI sets it to what its machine can do): then the
// test fails with the reason, so a run that was meant to exercise a tracer
// cannot go green without it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace tracebench::test {

inline bool capability_required(std::string_view cap) {
  const char* env = std::getenv("TRACEBENCH_REQUIRE");
  if (!env) return false;
  const std::string list = std::string(",") + env + ",";
  return list.find(std::string(",") + std::string(cap) + ",") != std::string::npos;
}

}  // namespace tracebench::test

#define TB_SKIP_OR_FAIL(cap, reason)                                                              \
  do {                                                                                            \
    if (::tracebench::test::capability_required(cap))                                             \
      FAIL() << (cap) << " is required (TRACEBENCH_REQUIRE=" << std::getenv("TRACEBENCH_REQUIRE") \
             << ") but cannot run: " << reason;                                                   \
    GTEST_SKIP() << reason;                                                                       \
  } while (0)
