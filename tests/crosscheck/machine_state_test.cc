// When a round of `tracebench crosscheck` counts (crosscheck/machine_state.h):
// an untraced figure only at the command's fastest speed, an overhead in any
// one state the round stayed in, never across two.
#include "machine_state.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tracebench::crosscheck {
namespace {

TEST(CrosscheckSteadiness, AtTheFastestSpeedOnly) {
  EXPECT_TRUE(steady({105, 108, 112}, 105));
  EXPECT_FALSE(steady({190, 192, 195}, 139)) << "a contended round is not the uncontended speed";
  EXPECT_FALSE(steady({105, 150}, 105));
  EXPECT_FALSE(steady({105}, 0)) << "no probe seen yet";
  EXPECT_TRUE(steady({}, 105));
}

TEST(CrosscheckSteadiness, OneStateWhicheverItIs) {
  EXPECT_TRUE(one_state({105, 108, 112}));
  EXPECT_TRUE(one_state({189, 191.6, 194.9, 190.3})) << "the slow state throughout";
  EXPECT_FALSE(one_state({139, 190})) << "two states in one round";
  EXPECT_FALSE(one_state({189, 210}));
  EXPECT_FALSE(one_state({0, 1}));
  EXPECT_FALSE(one_state({100, INFINITY}));
  EXPECT_TRUE(one_state({}));
}

}  // namespace
}  // namespace tracebench::crosscheck
