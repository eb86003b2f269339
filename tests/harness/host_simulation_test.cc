// The simulated host (tracebench/host_simulation.h): its specification is
// parsed or refused with the reason, and a coarse TSC is what the suite's
// reads see.
#include "tracebench/host_simulation.h"

#include <gtest/gtest.h>

namespace tracebench {
namespace {

TEST(HostSimulation, TheBhyvePresetIsTheSetSeenOnSuchAHost) {
  HostSimulation s;
  ASSERT_TRUE(parse_host_simulation("bhyve", &s));
  EXPECT_EQ(s.tsc_step, 21u);
  EXPECT_TRUE(s.no_rdtscp);
  EXPECT_EQ(s.syscall_ns, 875);
  EXPECT_GT(s.steal_hz, 0);
  EXPECT_GT(s.steal_us, 0);
  EXPECT_EQ(s.spec, "bhyve");
  EXPECT_TRUE(s.active());
}

TEST(HostSimulation, AListSetsWhatItNames) {
  HostSimulation s;
  ASSERT_TRUE(parse_host_simulation("tsc_step=10,syscall_ns=500", &s));
  EXPECT_EQ(s.tsc_step, 10u);
  EXPECT_FALSE(s.no_rdtscp);
  EXPECT_EQ(s.syscall_ns, 500);
  EXPECT_EQ(s.steal_hz, 0);
}

TEST(HostSimulation, BadSpecificationsAreRefusedWithTheReason) {
  HostSimulation s;
  const std::pair<const char*, const char*> bad[] = {{"tsc_step=0", "tsc_step must be a number"},
                                                     {"tsc_step=2.5", "whole number"},
                                                     {"fast", "unknown key"},
                                                     {"syscall_ns=-1", "syscall_ns must be a number"},
                                                     {"steal_hz=1000", "go together"},
                                                     {"steal_hz=20000,steal_us=100", "over half the CPU"},
                                                     {"no_rdtscp=1", "takes no value"},
                                                     {"tsc_step=21,", "an empty item"},
                                                     {"syscall_ns=1e9", "syscall_ns must be a number"}};
  for (const auto& [spec, why] : bad) {
    const Status st = parse_host_simulation(spec, &s);
    EXPECT_FALSE(st) << spec;
    EXPECT_NE(st.message().find(why), std::string::npos) << spec << ": " << st.message();
    EXPECT_NE(st.message().find(kHostSimulationEnv), std::string::npos) << st.message();
  }
}

TEST(HostSimulation, ACoarseTscIsReadInSteps) {
  HostSimulation s;
  ASSERT_TRUE(parse_host_simulation("tsc_step=21", &s));
  set_host_simulation(s);
  EXPECT_EQ(seen_tsc(0), 0u);
  EXPECT_EQ(seen_tsc(20), 0u);
  EXPECT_EQ(seen_tsc(21), 21u);
  EXPECT_EQ(seen_tsc(1000), 987u);
  set_host_simulation(HostSimulation{});
  EXPECT_EQ(seen_tsc(1000), 1000u);
}

TEST(HostSimulation, ASyscallCostsItsNanosecondsInCycles) {
  HostSimulation s;
  ASSERT_TRUE(parse_host_simulation("syscall_ns=875", &s));
  EXPECT_EQ(simulated_syscall_cycles(s, 2.4e9), 2100u);
  EXPECT_EQ(simulated_syscall_cycles(HostSimulation{}, 2.4e9), 0u);
}

}  // namespace
}  // namespace tracebench
