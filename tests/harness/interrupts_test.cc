// /proc/interrupts parsing and the per-event difference traced - baseline.
#include "tracebench/interrupts.h"

#include <gtest/gtest.h>

namespace tracebench {
namespace {

const char* kText =
    "           CPU0       CPU1       \n"
    "  1:          9          0   IO-APIC   1-edge      i8042\n"
    "  4:        100        200   IO-APIC   4-edge      ttyS0\n"
    "NMI:          0          0   Non-maskable interrupts\n"
    "LOC:     688888     666615   Local timer interrupts\n"
    "IWI:     108611     167541   IRQ work interrupts\n"
    "CAL:     266364      83007   Function call interrupts\n"
    "ERR:          0\n"
    "MIS:          0\n";

TEST(Interrupts, ParsesNamedRowsPerCpuAndSumsDevices) {
  InterruptSnapshot s = parse_interrupts(kText);
  ASSERT_EQ(s.counts.count("IWI"), 1u);
  EXPECT_EQ(s.counts["IWI"], (std::vector<std::uint64_t>{108611, 167541}));
  EXPECT_EQ(s.descriptions["IWI"], "IRQ work interrupts");
  EXPECT_EQ(s.counts["device"], (std::vector<std::uint64_t>{109, 200}));
  EXPECT_EQ(s.counts.count("ERR"), 0u);  // one column: not per CPU
  EXPECT_TRUE(parse_interrupts("").counts.empty());
  EXPECT_TRUE(parse_interrupts("garbage here\nIWI: 1 2\n").counts.empty());
}

InterruptSnapshot with(std::uint64_t iwi0, std::uint64_t iwi1, std::uint64_t cal0) {
  InterruptSnapshot s;
  s.counts["IWI"] = {iwi0, iwi1};
  s.counts["CAL"] = {cal0, 0};
  s.descriptions["IWI"] = "IRQ work interrupts";
  return s;
}

TEST(Interrupts, ExtraPerEventIsTracedMinusBaseline) {
  InterruptTally t;
  // Baseline: 1000 events, 10 IWI on CPU 1 (ticks, other work).
  t.add(with(0, 0, 0), with(0, 10, 0), false, 1000);
  // Traced: 2000 events, 820 IWI on CPU 1 and 600 CAL on CPU 0 (consumer wakeups).
  t.add(with(0, 10, 0), with(0, 830, 600), true, 2000);
  auto x = t.extra_per_event();
  ASSERT_EQ(x.count("IWI"), 1u);
  EXPECT_NEAR(x["IWI"][1], 820.0 / 2000 - 10.0 / 1000, 1e-12);
  EXPECT_NEAR(x["IWI"][0], 0.0, 1e-12);
  EXPECT_NEAR(x["CAL"][0], 0.3, 1e-12);
  EXPECT_EQ(t.descriptions().at("IWI"), "IRQ work interrupts");
}

TEST(Interrupts, NothingNotableOrNothingMeasuredGivesNoRows) {
  InterruptTally t;
  EXPECT_TRUE(t.extra_per_event().empty());  // no blocks
  t.add(with(0, 0, 0), with(0, 1, 0), true, 100000);
  EXPECT_TRUE(t.extra_per_event().empty());  // no baseline to subtract
  t.add(with(0, 0, 0), with(0, 1, 0), false, 100000);
  EXPECT_TRUE(t.extra_per_event().empty());  // same rate on both sides
  // A counter that went backwards (CPU hot-unplug) counts as zero, not as a wrap.
  t.add(with(0, 50, 0), with(0, 0, 0), true, 100);
  EXPECT_TRUE(t.extra_per_event().empty());
}

}  // namespace
}  // namespace tracebench
