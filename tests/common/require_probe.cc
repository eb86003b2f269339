// A test that always lacks its capability ("tb-probe-cap"): run only by
// tests/common/require_test.sh, which checks that it is reported skipped with
// its reason, and fails with the reason when TRACEBENCH_REQUIRE lists it.
#include <gtest/gtest.h>

#include "tests/common/require.h"

TEST(RequireProbe, CapabilityMissing) { TB_SKIP_OR_FAIL("tb-probe-cap", "the probe capability is never here"); }
