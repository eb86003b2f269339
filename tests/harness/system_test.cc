// Machine probes of harness/src/system.cc that can be checked exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tracebench/system.h"

namespace tracebench {
namespace {

TEST(ForeignCpuLoad, OtherProcessesTimeOverWallTime) {
  CpuTimeSnapshot a{10.0, 100.0, 1.0, true};
  CpuTimeSnapshot b{12.0, 103.0, 2.0, true};  // 3 s busy, 1 s of it ours, over 2 s
  EXPECT_DOUBLE_EQ(foreign_cpu_load(a, b), 1.0);
}

TEST(ForeignCpuLoad, NotMeasuredIsZero) {
  CpuTimeSnapshot a{10.0, 100.0, 1.0, true};
  CpuTimeSnapshot b{12.0, 103.0, 2.0, false};
  EXPECT_EQ(foreign_cpu_load(a, b), 0.0);
  EXPECT_EQ(foreign_cpu_load(a, a), 0.0);  // no time passed
  CpuTimeSnapshot c{12.0, 101.0, 2.0, true};  // only we ran (tick rounding can go below)
  EXPECT_EQ(foreign_cpu_load(a, c), 0.0);
}

TEST(ForeignCpuLoad, OwnThreadsAreNotForeign) {
  // Keep one of our threads busy for 300 ms: the machine's busy time grows,
  // and so does this process's own CPU time, which is subtracted.
  const CpuTimeSnapshot a = cpu_time_snapshot();
  ASSERT_TRUE(a.ok);
  std::atomic<bool> stop{false};
  std::thread spin([&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop = true;
  spin.join();
  const CpuTimeSnapshot b = cpu_time_snapshot();
  ASSERT_TRUE(b.ok);
  // The spinning thread is not the one taking the snapshots: the process's
  // CPU time must include every thread, or it would count as foreign.
  EXPECT_GE(b.self_s - a.self_s, 0.2);
  EXPECT_GE(b.machine_busy_s - a.machine_busy_s, 0.2);
}

}  // namespace
}  // namespace tracebench
