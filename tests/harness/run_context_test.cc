// Run-context detection (harness/src/system.cc: governor, boost/turbo, SMT,
// isolcpus, nohz_full, TSC flags, clocksource, mitigations) and the counters'
// reasons (harness/src/counters.cc) on simulated /proc and /sys trees: a
// temporary directory holding the files the readers look for, given to them
// as their root.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tracebench/counters.h"
#include "tracebench/system.h"

namespace tracebench {
namespace {

namespace fs = std::filesystem;

constexpr int kCpu = 3;  // the measured CPU of every simulated machine

// A machine with nothing to warn about: CPU 3 isolated and tickless, no SMT
// sibling, the performance governor, no turbo, an invariant TSC as the
// clocksource, no mitigation.
class SimulatedRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tb-sysroot-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    put("sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc");
    put("sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "performance");
    put("sys/devices/system/cpu/cpufreq/boost", "0");
    put("sys/devices/system/cpu/intel_pstate/no_turbo", "1");
    put("sys/devices/system/cpu/cpu3/topology/thread_siblings_list", "3");
    put("sys/devices/system/cpu/isolated", "2-3");
    put("sys/devices/system/cpu/nohz_full", "1,3");
    put("sys/devices/system/cpu/vulnerabilities/meltdown", "Not affected");
    put("sys/devices/system/cpu/vulnerabilities/spectre_v1", "Vulnerable: __user pointer sanitization");
    put("proc/cpuinfo",
        "processor\t: 3\nmodel name\t: Simulated CPU\nflags\t\t: fpu tsc constant_tsc nonstop_tsc rdtscp\n\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  void put(const std::string& rel, const std::string& text) {
    fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }
  void drop(const std::string& rel) { fs::remove_all(root_ / rel); }

  std::vector<std::string> warnings() {
    SystemInfo s;
    detect_run_context(root_.string(), kCpu, &s);
    clocksource_ = s.clocksource;
    return s.noise_warnings;
  }
  // The one warning that mentions `what`, or "" (and a failure) when none or several do.
  std::string warning_about(const std::string& what) {
    std::vector<std::string> hits;
    for (const auto& w : warnings())
      if (w.find(what) != std::string::npos) hits.push_back(w);
    EXPECT_EQ(hits.size(), 1u) << "warnings about '" << what << "': " << ::testing::PrintToString(warnings());
    return hits.empty() ? "" : hits[0];
  }

  fs::path root_;
  std::string clocksource_;
};

TEST_F(SimulatedRoot, AQuietMachineGivesNoWarning) {
  EXPECT_TRUE(warnings().empty()) << ::testing::PrintToString(warnings());
  EXPECT_EQ(clocksource_, "tsc");
}

TEST_F(SimulatedRoot, Governor) {
  put("sys/devices/system/cpu/cpu3/cpufreq/scaling_governor", "powersave");
  EXPECT_EQ(warning_about("governor"), "CPU 3 frequency governor is 'powersave', not 'performance'");
  drop("sys/devices/system/cpu/cpu3/cpufreq");
  EXPECT_NE(warning_about("no cpufreq").find("cannot check the governor"), std::string::npos);
}

TEST_F(SimulatedRoot, BoostAndTurbo) {
  put("sys/devices/system/cpu/cpufreq/boost", "1");
  EXPECT_EQ(warning_about("boost"), "CPU boost/turbo is on");
  put("sys/devices/system/cpu/intel_pstate/no_turbo", "0");
  EXPECT_NE(warning_about("no_turbo = 0").find("Intel turbo is on"), std::string::npos);
}

TEST_F(SimulatedRoot, SmtSiblings) {
  for (const char* siblings : {"2-3", "3,7"}) {
    put("sys/devices/system/cpu/cpu3/topology/thread_siblings_list", siblings);
    EXPECT_EQ(warning_about("SMT"),
              std::string("CPU 3 has SMT siblings (") + siblings + "): a sibling's work shares its core");
  }
  drop("sys/devices/system/cpu/cpu3/topology");  // no topology: nothing to say
  EXPECT_TRUE(warnings().empty()) << ::testing::PrintToString(warnings());
}

TEST_F(SimulatedRoot, IsolcpusMustHoldTheMeasuredCpu) {
  put("sys/devices/system/cpu/isolated", "");
  EXPECT_EQ(warning_about("isolated"), "CPU 3 is not isolated (isolcpus empty)");
  put("sys/devices/system/cpu/isolated", "0-2,4");
  EXPECT_EQ(warning_about("isolated"), "CPU 3 is not isolated (isolcpus=0-2,4 leaves it out)");
  put("sys/devices/system/cpu/isolated", "1,3-5");
  EXPECT_TRUE(warnings().empty()) << ::testing::PrintToString(warnings());
}

TEST_F(SimulatedRoot, NohzFullMustHoldTheMeasuredCpu) {
  put("sys/devices/system/cpu/nohz_full", "(null)");
  EXPECT_EQ(warning_about("nohz_full"), "nohz_full is not set: the scheduler tick interrupts the measured CPU");
  drop("sys/devices/system/cpu/nohz_full");  // CONFIG_NO_HZ_FULL off: no file
  EXPECT_EQ(warning_about("nohz_full"), "nohz_full is not set: the scheduler tick interrupts the measured CPU");
  put("sys/devices/system/cpu/nohz_full", "0-2");
  EXPECT_EQ(warning_about("nohz_full"), "nohz_full=0-2 leaves CPU 3 out: the scheduler tick interrupts it");
}

TEST_F(SimulatedRoot, InvariantTscFlags) {
  put("proc/cpuinfo", "processor\t: 3\nflags\t\t: fpu tsc constant_tsc rdtscp\n");
  EXPECT_NE(warning_about("invariant").find("constant_tsc/nonstop_tsc missing"), std::string::npos);
  // A flag that merely starts with the name is not the flag.
  put("proc/cpuinfo", "flags\t\t: constant_tsc nonstop_tsc_x\n");
  warning_about("invariant");
}

TEST_F(SimulatedRoot, Clocksource) {
  put("sys/devices/system/clocksource/clocksource0/current_clocksource", "hpet");
  EXPECT_EQ(warning_about("clocksource"), "clocksource is 'hpet', not 'tsc'");
  EXPECT_EQ(clocksource_, "hpet");
}

TEST_F(SimulatedRoot, MitigationsAreNamedInOrder) {
  put("sys/devices/system/cpu/vulnerabilities/spectre_v2", "Mitigation: Retpolines; IBPB: conditional");
  put("sys/devices/system/cpu/vulnerabilities/mds", "Mitigation: Clear CPU buffers; SMT Host state unknown");
  EXPECT_EQ(warning_about("mitigations"),
            "CPU mitigations active (mds,spectre_v2): syscall and trap costs include them");
}

TEST(CpuList, KernelCpulistFormat) {
  EXPECT_TRUE(cpu_list_contains("3", 3));
  EXPECT_TRUE(cpu_list_contains("0-3", 3));
  EXPECT_TRUE(cpu_list_contains("0,2-4,8", 3));
  EXPECT_TRUE(cpu_list_contains("1,3", 3));
  EXPECT_FALSE(cpu_list_contains("13", 3));
  EXPECT_FALSE(cpu_list_contains("0-2,4-7", 3));
  EXPECT_FALSE(cpu_list_contains("", 3));
  EXPECT_FALSE(cpu_list_contains("(null)", 3));
}

// One reading of a CPU list for every user (the online CPUs, isolcpus,
// nohz_full): its CPUs in order, a hole in the numbering kept.
TEST(CpuList, ItsCpusInOrder) {
  EXPECT_EQ(parse_cpu_list("0-3,6"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(parse_cpu_list("0,2-4,8"), (std::vector<int>{0, 2, 3, 4, 8}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_TRUE(parse_cpu_list("(null)").empty());
  EXPECT_EQ(parse_cpu_list("x,1,4-2"), (std::vector<int>{1})) << "malformed items give none";
  // This machine's: what sysconf counts, the measured CPU's default among them.
  const std::vector<int> online = online_cpus();
  ASSERT_FALSE(online.empty());
  EXPECT_EQ(online.size(), static_cast<std::size_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_NE(std::find(online.begin(), online.end(), default_measured_cpu()), online.end());
}

TEST_F(SimulatedRoot, HardwarePmuIsTheCpuEventSource) {
  put("sys/bus/event_source/devices/software/type", "1");
  put("sys/bus/event_source/devices/tracepoint/type", "2");
  EXPECT_FALSE(hardware_pmu_exposed(root_.string()));
  EXPECT_NE(perf_refusal_hint(ENOENT, true, root_.string()).find("no hardware PMU exposed"), std::string::npos);
  EXPECT_EQ(perf_refusal_hint(ENOENT, false, root_.string()), "");  // a software event: the PMU is not why
  put("sys/bus/event_source/devices/cpu_core/type", "4");           // a hybrid CPU's
  EXPECT_TRUE(hardware_pmu_exposed(root_.string()));
  EXPECT_EQ(perf_refusal_hint(ENOENT, true, root_.string()), "");
  drop("sys/bus/event_source/devices/cpu_core");
  put("sys/bus/event_source/devices/cpu/type", "4");
  EXPECT_TRUE(hardware_pmu_exposed(root_.string()));
}

TEST_F(SimulatedRoot, PermissionRefusalsNamePerfEventParanoid) {
  put("proc/sys/kernel/perf_event_paranoid", "3");
  EXPECT_EQ(perf_refusal_hint(EACCES, false, root_.string()),
            "kernel.perf_event_paranoid is 3: run as root, or set it to 1 or lower (sysctl)");
  EXPECT_EQ(perf_refusal_hint(EPERM, true, root_.string()),
            "kernel.perf_event_paranoid is 3: run as root, or set it to 1 or lower (sysctl)");
  drop("proc/sys");
  EXPECT_EQ(perf_refusal_hint(EACCES, false, root_.string()), "run as root (perf_event_paranoid unreadable)");
}

// On this machine: every counter is live or says why not; without a
// hardware PMU every PAPI preset is unavailable and says that.
TEST(CountersHere, UnavailableCountersSayWhy) {
  Counters c;
  c.open();
  ASSERT_FALSE(c.info().empty());
  const bool pmu = hardware_pmu_exposed();
  for (const auto& i : c.info()) {
    SCOPED_TRACE(i.name);
    EXPECT_EQ(i.live, i.unavailable_reason.empty()) << i.unavailable_reason;
    if (!pmu && i.source == "papi") {
      EXPECT_FALSE(i.live);
      EXPECT_NE(i.unavailable_reason.find("no hardware PMU exposed"), std::string::npos) << i.unavailable_reason;
    }
  }
  std::vector<std::int64_t> a, b;
  c.read(&a);
  c.read(&b);
  ASSERT_EQ(a.size(), c.live_count());
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_GE(b[k], a[k]) << c.live_names()[k];
}

}  // namespace
}  // namespace tracebench
