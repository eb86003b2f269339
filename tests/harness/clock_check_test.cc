// The clock self-check on every kind of host the suite meets, simulated:
// decide_clock() is pure, so each variant is fed as the facts that host
// shows, whatever host runs the test.
#include "tracebench/clock_check.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tracebench {
namespace {

const ClockCheck& find(const ClockPlan& p, const std::string& name) {
  for (const auto& c : p.checks) {
    if (c.name == name) return c;
  }
  static ClockCheck none{"missing", "missing", "", ""};
  return none;
}

CpuClockFacts cpu(int n, std::optional<unsigned> aux, std::uint64_t step = 1) {
  CpuClockFacts c;
  c.cpu = n;
  c.pinned = true;
  c.aux_first = aux;
  c.aux_second = aux;
  c.step_cycles = step;
  c.getcpu = n;
  return c;
}

// A Linux guest on KVM or bare metal: RDTSCP in CPUID, TSC_AUX = CPU number.
ClockFacts linux_host() {
  ClockFacts f;
  f.cpuid_rdtscp = true;
  f.cpuid_invariant_tsc = true;
  f.flag_constant_tsc = f.flag_nonstop_tsc = true;
  f.kernel_hz = 2.6e9;
  f.calibrated_hz = 2.6002e9;
  f.cpus = {cpu(0, 0u), cpu(1, 1u)};
  f.measured_cpu = 1;
  f.floor_round_medians = {40, 40, 41, 40, 40};
  f.floor_median = 40;
  f.floor_mad = 1;
  return f;
}

// The bhyve host of the trust issue: no RDTSCP in CPUID (rdtscp executes,
// TSC_AUX holds what the kernel never wrote), a TSC that ticks in steps of
// 21 cycles, no TSC rate from the kernel.
ClockFacts bhyve_host() {
  ClockFacts f = linux_host();
  f.cpuid_rdtscp = false;
  f.kernel_hz = 0;
  f.calibrated_hz = 2.096e9;
  f.cpus = {cpu(0, std::nullopt, 21), cpu(1, std::nullopt, 21)};
  f.floor_round_medians = {42, 42, 42, 42, 42};
  f.floor_median = 42;
  return f;
}

TEST(ClockCheck, LinuxHostUsesRdtscpAndTscAuxAndPassesEveryCheck) {
  ClockPlan p = decide_clock(linux_host());
  EXPECT_EQ(p.end_read, EndRead::kRdtscp);
  EXPECT_EQ(p.migration, MigrationMethod::kTscAux);
  EXPECT_EQ(p.expected_aux, 1u);
  EXPECT_TRUE(p.ok());
  for (const auto& c : p.checks) EXPECT_EQ(c.verdict, "pass") << c.name << ": " << c.reason;
  EXPECT_EQ(p.tsc_hz, 2.6e9);
  EXPECT_EQ(p.tsc_source, "perf_event_mmap_page");
  EXPECT_DOUBLE_EQ(p.min_sample_cycles, 1000);  // 1000 x step 1 > 20 x floor 40 > 400
}

TEST(ClockCheck, HostWithoutRdtscpInCpuidEndsWithLfenceAndDetectsMigrationsWithGetcpu) {
  ClockPlan p = decide_clock(bhyve_host());
  EXPECT_EQ(p.end_read, EndRead::kLfenceRdtsc);
  EXPECT_EQ(p.migration, MigrationMethod::kGetcpu);
  EXPECT_TRUE(p.ok()) << p.failures();
  EXPECT_EQ(find(p, "rdtscp").verdict, "warn");
  EXPECT_EQ(find(p, "tsc_aux").verdict, "warn");
  EXPECT_NE(find(p, "tsc_aux").reason.find("sched_getcpu"), std::string::npos);
  EXPECT_EQ(find(p, "rate").verdict, "warn");  // calibration alone
  EXPECT_EQ(p.tsc_source, "calibrated");
  EXPECT_EQ(p.tsc_hz, 2.096e9);
}

TEST(ClockCheck, CoarseTscStepRaisesTheSampleSpanSoFiguresAreNotQuantized) {
  ClockPlan p = decide_clock(bhyve_host());
  EXPECT_EQ(p.step_cycles, 21u);
  EXPECT_EQ(find(p, "resolution").verdict, "warn");
  EXPECT_NE(find(p, "resolution").reason.find("21 cycles"), std::string::npos);
  EXPECT_GE(p.min_sample_cycles, 100 * 21.0);
  EXPECT_DOUBLE_EQ(p.min_sample_cycles, kStepsPerSample * 21);
}

TEST(ClockCheck, StableTscAuxThatIsNotTheCpuNumberIsLearned) {
  ClockFacts f = linux_host();
  f.cpus = {cpu(0, 205u), cpu(1, 113u)};  // what the bhyve host showed
  ClockPlan p = decide_clock(f);
  EXPECT_EQ(p.end_read, EndRead::kRdtscp);
  EXPECT_EQ(p.migration, MigrationMethod::kTscAuxLearned);
  EXPECT_EQ(p.expected_aux, 113u);
  EXPECT_EQ(find(p, "tsc_aux").verdict, "warn");
  EXPECT_TRUE(p.ok());
  // With the learned value, the host's samples are not all "migrated".
  EXPECT_FALSE(sample_migrated(p.migration, p.expected_aux, 1, 113, 1, 1));
  EXPECT_TRUE(sample_migrated(p.migration, p.expected_aux, 1, 205, 1, 1));
}

TEST(ClockCheck, TscAuxThatCannotTellCpusApartFallsBackToGetcpu) {
  ClockFacts same = linux_host();
  same.cpus = {cpu(0, 0u), cpu(1, 0u)};
  EXPECT_EQ(decide_clock(same).migration, MigrationMethod::kGetcpu);

  ClockFacts moving = linux_host();
  moving.cpus[1].aux_second = 7;  // changed between two reads on one CPU
  ClockPlan p = decide_clock(moving);
  EXPECT_EQ(p.migration, MigrationMethod::kGetcpu);
  EXPECT_NE(find(p, "tsc_aux").reason.find("changed"), std::string::npos);
}

TEST(ClockCheck, GetcpuThatDoesNotReportThePinnedCpuFails) {
  ClockFacts f = bhyve_host();
  f.cpus[1].getcpu = 0;
  ClockPlan p = decide_clock(f);
  EXPECT_FALSE(p.ok());
  EXPECT_NE(p.failures().find("migration"), std::string::npos);
}

TEST(ClockCheck, RateDisagreementWarnsThenFails) {
  ClockFacts f = linux_host();
  f.calibrated_hz = f.kernel_hz * 1.03;
  EXPECT_EQ(find(decide_clock(f), "rate").verdict, "warn");
  f.calibrated_hz = f.kernel_hz * 1.08;
  ClockPlan p = decide_clock(f);
  EXPECT_EQ(find(p, "rate").verdict, "fail");
  EXPECT_FALSE(p.ok());
  f.calibrated_hz = 0;
  EXPECT_FALSE(decide_clock(f).ok());
}

TEST(ClockCheck, BackwardsTscFailsAndNonInvariantTscWarns) {
  ClockFacts f = linux_host();
  f.cpus[0].went_backwards = true;
  EXPECT_EQ(find(decide_clock(f), "monotonic").verdict, "fail");
  ClockFacts g = linux_host();
  g.cpuid_invariant_tsc = g.flag_nonstop_tsc = false;
  EXPECT_EQ(find(decide_clock(g), "invariant").verdict, "warn");
  EXPECT_TRUE(decide_clock(g).ok());
}

TEST(ClockCheck, UnstableFloorWarns) {
  ClockFacts f = linux_host();
  f.floor_round_medians = {40, 40, 90, 40, 40};
  EXPECT_EQ(find(decide_clock(f), "floor").verdict, "warn");
  f.floor_round_medians.clear();
  EXPECT_EQ(find(decide_clock(f), "floor").verdict, "fail");
}

TEST(ClockCheck, RecurringStepIgnoresRareOddDifferences) {
  EXPECT_EQ(recurring_step({{1, 1}, {21, 468256}, {42, 531703}, {63, 1}}, 200), 21u);
  EXPECT_EQ(recurring_step({{36, 5000}, {37, 90000}, {39, 3000}}, 200), 1u);  // a fine TSC: read latency only
  EXPECT_EQ(recurring_step({}, 200), 1u);
}

TEST(ClockCheck, GarbageTscAuxMeansMigratedOnlyWhenTscAuxIsTheMethod) {
  // TSC_AUX 205 on the measured CPU 1: taken as the CPU number it reads as
  // "migrated" (the every-sample-excluded run); the other methods
  // do not look at it.
  EXPECT_TRUE(sample_migrated(MigrationMethod::kTscAux, 0, 1, 205, 1, 1));
  EXPECT_FALSE(sample_migrated(MigrationMethod::kGetcpu, 0, 1, 205, 1, 1));
  EXPECT_TRUE(sample_migrated(MigrationMethod::kGetcpu, 0, 1, 1, 0, 1));
  EXPECT_TRUE(sample_migrated(MigrationMethod::kGetcpu, 0, 1, 1, 1, 0));
  EXPECT_FALSE(sample_migrated(MigrationMethod::kTscAux, 0, 1, (3u << 12) | 1u, 1, 1));  // node bits above 11
}

TEST(ClockCheck, ThisMachineGivesAPlanThatRunsAndIsRecorded) {
  ClockFacts f = observe_clock(0);
  ClockPlan p = decide_clock(f);
  EXPECT_TRUE(p.ok()) << p.failures();
  EXPECT_EQ(p.end_read == EndRead::kRdtscp, f.cpuid_rdtscp);
  EXPECT_GE(p.step_cycles, 1u);
  EXPECT_GT(p.floor_cycles, 0);
  nlohmann::json j = clock_json(f, p);
  EXPECT_EQ(j["checks"].size(), p.checks.size());
  EXPECT_EQ(j["migration_method"], std::string(to_string(p.migration)));
}

}  // namespace
}  // namespace tracebench
