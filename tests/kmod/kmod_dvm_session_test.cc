// The D-VM as a tracer in the companion module (DVM_ENABLE/GO/STOP/BUFSNAP/
// AGGSNAP/STATUS) against the same D-VM in user space: one D script, run
// once in each home on the same calls, gives the same aggregations and the
// same records.  The calls are getpid(2) with two extra register arguments
// (i, 3i): the kernel's syscall::getpid:entry reads them from the saved
// registers, the user-space site here is handed them, so arg0/arg1 agree.
// Bad requests are refused with a reason and leave nothing enabled; one
// session at a time; closing the file ends it.
// Runs in the VM lab with the rest of tracebench_kmod_dvm_test (ctest
// "vm.kmod_dvm"); without the module every test skips and says why.
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kmod/include/tracebench_kmod_abi.h"
#include "tests/common/usdt_site.h"
#include "tracers/dvm/compiler/dcompile.h"
#include "tracers/dvm/runtime.h"
#include "tracers/dvm/site.h"

namespace {

using namespace tbdvm;

constexpr int kCalls = 20000;

// One getpid per i, seen by the user-space sites and by the kernel's
// raw syscall tracepoints alike.
__attribute__((noinline)) void calls(int n) {
  for (int i = 0; i < n; i++) {
    const uint64_t a0 = static_cast<uint64_t>(i), a1 = 3ull * i;
    DVM_SYSCALL_ENTRY(getpid, a0, a1);
    const long r = syscall(SYS_getpid, a0, a1);
    DVM_SYSCALL_RETURN(getpid, static_cast<uint64_t>(r), static_cast<uint64_t>(r));
  }
}

std::string describe(const std::vector<AggResult>& aggs) {
  std::string s;
  for (const auto& a : aggs) {
    s += "@" + a.desc->name + ":\n";
    for (const auto& row : a.rows) {
      s += " ";
      for (const auto& k : row.key_strings) s += " [" + k + "]";
      s += " =";
      for (auto v : row.values)
        if (v) s += " " + std::to_string(v);
      s += "\n";
    }
  }
  return s;
}

struct Outcome {
  std::string error;
  std::string aggs;  // describe(): the rows point into the program
  std::string output;
  Counters counters;
  bool exited = false;
  int exit_status = 0;
};

// Compiles `script`, runs it in one home around calls(n) on one CPU (so the
// records of both homes come out in one order), returns what it gave.
Outcome run(const std::string& script, bool kernel, int n, Options o = {}) {
  Outcome r;
  CompileResult c = compile_d(script);
  if (!c.program) {
    r.error = "compile: " + c.error;
    return r;
  }
  cpu_set_t old, one;
  sched_getaffinity(0, sizeof old, &old);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  sched_setaffinity(0, sizeof one, &one);
  o.kernel = kernel;
  char* text = nullptr;
  size_t len = 0;
  std::FILE* out = open_memstream(&text, &len);
  const char* stage = "enable";
  try {
    Session s(o);
    Error e = s.enable(c.program);
    if (!e.ok()) {
      r.error = e.message;
    } else {
      s.set_output(out);
      s.set_error_output(out);  // fault reports in order with the records
      stage = "calls";
      calls(n);
      stage = "disable";
      s.disable();
      stage = "aggregations";
      r.aggs = describe(s.aggregations());
      r.counters = s.counters();
      r.exited = s.exited();
      r.exit_status = s.exit_status();
    }
  } catch (const std::exception& x) {
    r.error = std::string(kernel ? "kernel" : "user") + " home, " + stage + ": " + x.what();
  }
  std::fclose(out);
  r.output.assign(text, len);
  std::free(text);
  sched_setaffinity(0, sizeof old, &old);
  return r;
}

// Each aggregation's first value summed over its rows, by "name" or, keyed,
// "name[first key]".
std::map<std::string, int64_t> totals(Session& s) {
  std::map<std::string, int64_t> got;
  for (const auto& a : s.aggregations())
    for (const auto& row : a.rows)
      got[a.desc->name + (row.key_strings.empty() ? "" : "[" + row.key_strings[0] + "]")] += row.values[0];
  return got;
}

// The module's FIRE loop: `count` events of `event` (its target function is
// called for each, whatever the event).
void fire(uint32_t event, uint64_t count, uint32_t payload = 0) {
  int fd = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << strerror(errno);
  tb_kmod_fire f{};
  f.event_id = event;
  f.count = count;
  f.payload_size = payload;
  f.batch = 1000;
  EXPECT_EQ(ioctl(fd, TB_KMOD_IOC_FIRE, &f), 0) << strerror(errno);
  EXPECT_EQ(f.fired, count);
  close(fd);
}

// A kernel-home session of `script`, enabled.
std::unique_ptr<Session> kernel_session(const std::string& script, Options o = {}) {
  CompileResult c = compile_d(script);
  EXPECT_TRUE(c.program) << c.error;
  if (!c.program) return nullptr;
  o.kernel = true;
  auto s = std::make_unique<Session>(o);
  Error e = s->enable(c.program);
  EXPECT_TRUE(e.ok()) << e.message;
  return e.ok() ? std::move(s) : nullptr;
}

class KmodDvmSession : public ::testing::Test {
 protected:
  void SetUp() override {
    int fd = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
    if (fd < 0)
      GTEST_SKIP() << TB_KMOD_DEVICE_PATH << ": " << strerror(errno)
                   << " (the companion module is not loaded: run in the VM lab, ctest -R vm.kmod_dvm)";
    tb_kmod_info info{};
    ASSERT_EQ(ioctl(fd, TB_KMOD_IOC_INFO, &info), 0) << strerror(errno);
    close(fd);
    ASSERT_TRUE(info.caps & TB_KMOD_CAP_DVM) << "the module has no D-VM tracer";
    tid_ = std::to_string(syscall(SYS_gettid));
  }
  std::string tid_;
};

TEST_F(KmodDvmSession, OneScriptGivesTheSameAggregationsInBothHomes) {
  const std::string pred = "/tid == " + tid_ + "/";
  const std::string script = "syscall::getpid:entry " + pred +
                             " {\n"
                             "  @calls[probefunc, probename] = count();\n"
                             "  @by7[arg0 % 7] = sum(arg1);\n"
                             "  @lo = min(arg0); @hi = max(arg1); @mean = avg(arg0); @sd = stddev(arg1);\n"
                             "  @q = quantize(arg0);\n"
                             "  @lq[arg0 % 3 == 0 ? \"three\" : \"other\"] = lquantize(arg0 % 100, 0, 100, 10);\n"
                             "  self->seen = arg0 + 1;\n"
                             "  n++;\n"
                             "  @who[ppid == " +
                             std::to_string(getppid()) + ", uid == " + std::to_string(getuid()) +
                             ", errno] = count();\n"
                             "}\n"
                             "syscall::getpid:return " +
                             pred +
                             " /* arg0 is the return value */ {\n"
                             "  @ret[arg0 == pid, self->seen > 0] = count();\n"
                             "  @total = max(n);\n"
                             "  self->seen = 0;\n"
                             "}\n";
  const Outcome user = run(script, false, kCalls), kern = run(script, true, kCalls);
  ASSERT_EQ(user.error, "");
  ASSERT_EQ(kern.error, "");
  const std::string& u = user.aggs;
  const std::string& k = kern.aggs;
  EXPECT_EQ(k, u);
  std::printf("both homes, %d getpid calls:\n%s", kCalls, k.c_str());
  // And the figures are what the calls were.
  EXPECT_NE(k.find("[getpid] [entry] = " + std::to_string(kCalls)), std::string::npos) << k;
  EXPECT_NE(k.find("[1] [1] = " + std::to_string(kCalls)), std::string::npos) << k;
  EXPECT_NE(k.find("@total:\n  = " + std::to_string(kCalls)), std::string::npos) << k;
  EXPECT_NE(k.find("@who:\n  [1] [1] [0] = " + std::to_string(kCalls)), std::string::npos) << k;
  EXPECT_EQ(kern.counters.errors, 0u);
  EXPECT_EQ(kern.counters.drops + kern.counters.agg_drops, 0u);
  EXPECT_GE(kern.counters.ecb_fired, 2u * kCalls);
}

TEST_F(KmodDvmSession, RecordsBeginAndEndComeOutAlike) {
  const std::string script =
      "dtrace:::BEGIN { printf(\"begin %s\\n\", probename); }\n"
      "syscall::getpid:entry /tid == " +
      tid_ +
      " && arg0 < 50/ { printf(\"%d %s:%s %d\\n\", arg0, probefunc, probename, arg1); }\n"
      "syscall::getpid:entry /tid == " +
      tid_ +
      " && arg0 >= 50 && arg0 < 53/ { trace(arg1); trace(probefunc); }\n"
      "dtrace:::END { printf(\"end\\n\"); }\n";
  const Outcome user = run(script, false, 100), kern = run(script, true, 100);
  ASSERT_EQ(user.error, "");
  ASSERT_EQ(kern.error, "");
  // A trace() line names the probe by id, which differs between the homes'
  // probe tables: compare from the function on.
  auto strip_ids = [](std::string s) {
    std::string out;
    size_t at = 0;
    while (at < s.size()) {
      size_t nl = s.find('\n', at);
      std::string line = s.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
      if (line.rfind("  0 ", 0) == 0 && line.size() > 11) line = line.substr(11);
      out += line + "\n";
      at = nl == std::string::npos ? s.size() : nl + 1;
    }
    return out;
  };
  EXPECT_EQ(strip_ids(kern.output), strip_ids(user.output));
  EXPECT_EQ(kern.output.rfind("begin BEGIN\n0 getpid:entry 0\n", 0), 0u) << kern.output;
  EXPECT_NE(kern.output.find("49 getpid:entry 147\n"), std::string::npos) << kern.output;
  EXPECT_NE(kern.output.find("getpid:entry        150 getpid"), std::string::npos) << kern.output;
  EXPECT_EQ(kern.output.substr(kern.output.size() - 4), "end\n");
}

// The consumer's actions (printa with and without a format, normalize,
// trunc, clear: the module only records them; clear and trunc reach its
// aggregation buffers through DVM_AGGRESET), llquantize, and a fault's
// report and dtrace:::ERROR: the same output in both homes.
TEST_F(KmodDvmSession, PrintaTruncClearLlquantizeAndErrorsComeOutAlike) {
  const std::string me = "tid == " + tid_;
  const std::string script =
      "syscall::getpid:entry /" + me +
      "/ { @c[arg0 % 4] = count(); @l = llquantize(arg0, 10, 0, 2, 20); @m = max(arg0); }\n"
      "syscall::getpid:entry /" +
      me +
      " && arg0 == 50/ {\n"
      "  printa(\"%d:%@d\\n\", @c); normalize(@c, 2); printa(@c); denormalize(@c); trunc(@c, 2); clear(@m); }\n"
      "syscall::getpid:entry /" +
      me +
      " && arg0 == 60/ { x = *(arg0 * 16); }\n"
      "dtrace:::ERROR { printf(\"ERROR %d %d %d %x\\n\", arg2, arg3, arg4, arg5); }\n"
      "dtrace:::END { printa(@c); printa(@l); printa(\"max %@d\\n\", @m); }\n";
  const Outcome user = run(script, false, 103), kern = run(script, true, 103);
  ASSERT_EQ(user.error, "");
  ASSERT_EQ(kern.error, "");
  // The probe's id and module differ between the homes' tables.
  auto strip = [](std::string s) {
    for (size_t at = s.find("(ID "); at != std::string::npos; at = s.find("(ID ", at + 1)) {
      const size_t end = s.find("):", at);
      const size_t fn = s.rfind(':', s.rfind(':', end) - 1);
      s.replace(at, fn - at, "(ID _: _");
    }
    return s;
  };
  EXPECT_EQ(strip(kern.output), strip(user.output));
  std::printf("kernel home:\n%s", kern.output.c_str());
  const std::string& k = kern.output;
  // 103 calls: keys 0..2 have 26, key 3 has 25; what the consumer read ran
  // after every call (one pass at the end).
  EXPECT_EQ(k.rfind("3:25\n0:26\n1:26\n2:26\n", 0), 0u) << k;
  EXPECT_NE(k.find("                 3                12\n"), std::string::npos) << k;  // normalized by 2
  EXPECT_NE(k.find(":getpid:entry): invalid address (0x3c0) in action #1 at DIF offset "), std::string::npos) << k;
  EXPECT_NE(k.find("ERROR 1 "), std::string::npos) << k;
  // trunc(@c, 2) kept two keys; clear(@m) left no value since.
  EXPECT_EQ(k.find("\n                 3                25\n"), std::string::npos) << k;
  EXPECT_NE(k.find("             < 1 |"), std::string::npos) << k;
  EXPECT_NE(k.find("max -9223372036854775808\n"), std::string::npos) << k;
  EXPECT_EQ(kern.counters.errors, 1u);
}

// errno on a syscall's return: the error it returned, 0 when it succeeded.
TEST_F(KmodDvmSession, ErrnoIsTheReturnProbesError) {
  auto session = kernel_session("syscall::close:return /tid == " + tid_ + "/ { @[errno, arg1] = count(); }");
  ASSERT_TRUE(session);
  for (int i = 0; i < 5; i++) close(-1);  // EBADF
  close(dup(0));                          // succeeds
  session->disable();
  const std::map<std::string, int64_t> want = {{"[" + std::to_string(EBADF) + "]", 5}, {"[0]", 1}};
  EXPECT_EQ(totals(*session), want);
}

// The kprobes registered on the kernel right now (debugfs's kprobes/list,
// mounted here if it is not), one line each.
std::string kprobe_list() {
  const char* list = "/sys/kernel/debug/kprobes/list";
  if (access(list, R_OK) != 0 && system("mount -t debugfs none /sys/kernel/debug 2>/dev/null") != 0) return "";
  std::string out;
  std::FILE* f = std::fopen(list, "r");
  EXPECT_TRUE(f) << list << ": " << strerror(errno);
  if (!f) return out;
  char line[512];
  while (std::fgets(line, sizeof line, f)) out += line;
  std::fclose(f);
  return out;
}
// Lines of `list` that name `symbol` (a syscall without arguments lists as
// __do_sys_<name>, an alias of __x64_sys_<name> at the same address; the
// offset is 0, or 4 past an endbr64 where the kernel has IBT).
int kprobes_on(const std::string& list, const std::string& symbol) {
  int n = 0;
  for (size_t p = 0; (p = list.find(symbol, p)) != std::string::npos; p += symbol.size()) n++;
  return n;
}

// syscallprobe=kprobe: the same script gives the same aggregations as on the
// raw syscall tracepoints (arguments, return values, errno), with a kprobe
// on each enabled syscall's function and on no other, gone when the session
// ends; a syscall without a function to probe is refused with the reason.
TEST_F(KmodDvmSession, SyscallProbesOnTheirFunctionsGiveWhatTheTracepointsGive) {
  const std::string pred = "/tid == " + tid_ + "/";
  const std::string script = "syscall::getpid:entry " + pred +
                             " { @calls[probefunc, probename] = count(); @by7[arg0 % 7] = sum(arg1); "
                             "self->seen = arg0 + 1; }\n"
                             "syscall::getpid:return " +
                             pred +
                             " { @ret[arg0 == pid, self->seen > 0] = count(); self->seen = 0; }\n"
                             "syscall::close:return " +
                             pred + " { @close[errno] = count(); }\n";
  Options kp;
  kp.syscall_kprobe = true;
  // Both homes' calls are getpid; close(-1) fails with EBADF in neither run
  // (run() makes only getpid calls): @close stays empty in both.
  const Outcome tp = run(script, true, kCalls), kpr = run(script, true, kCalls, kp);
  ASSERT_EQ(tp.error, "");
  ASSERT_EQ(kpr.error, "");
  EXPECT_EQ(kpr.aggs, tp.aggs);
  EXPECT_NE(kpr.aggs.find("[getpid] [entry] = " + std::to_string(kCalls)), std::string::npos) << kpr.aggs;
  EXPECT_NE(kpr.aggs.find("[1] [1] = " + std::to_string(kCalls)), std::string::npos) << kpr.aggs;
  EXPECT_EQ(kpr.counters.errors, 0u);

  // errno from the kretprobe, and where the kprobes are while it runs.
  auto session = kernel_session("syscall::close:return /tid == " + tid_ +
                                    "/ { @[errno] = count(); }\n"
                                    "syscall::getppid:entry /tid == " +
                                    tid_ +
                                    "/ { @ppid = count(); }\n"
                                    "syscall::uname:entry /tid == " +
                                    tid_ + "/ { @uname = count(); }",
                                kp);
  ASSERT_TRUE(session);
  const std::string live = kprobe_list();  // one successful close of its own
  EXPECT_EQ(kprobes_on(live, "sys_close+0x"), 1) << live;
  EXPECT_EQ(kprobes_on(live, "sys_getppid+0x"), 1) << live;
  EXPECT_EQ(kprobes_on(live, "sys_newuname+0x"), 1) << "uname's function is __x64_sys_newuname:\n" << live;
  EXPECT_EQ(kprobes_on(live, "sys_getpid+0x"), 0) << "a syscall no probe enables has a kprobe:\n" << live;
  for (int i = 0; i < 5; i++) close(-1);  // EBADF
  close(dup(0));                          // succeeds
  for (int i = 0; i < 3; i++) syscall(SYS_getppid);
  struct utsname u;
  uname(&u);
  session->disable();
  const std::map<std::string, int64_t> want = {
      {"[" + std::to_string(EBADF) + "]", 5}, {"[0]", 2}, {"ppid", 3}, {"uname", 1}};
  EXPECT_EQ(totals(*session), want);
  session.reset();
  const std::string after = kprobe_list();
  EXPECT_EQ(kprobes_on(after, "sys_close+0x"), 0) << "the session's kprobes outlive it:\n" << after;
  EXPECT_EQ(kprobes_on(after, "sys_getppid+0x"), 0) << after;

  // afs_syscall is in the syscall table with no function of its own.
  CompileResult c = compile_d("syscall::afs_syscall:entry { }\nsyscall::getppid:entry { }");
  ASSERT_TRUE(c.program) << c.error;
  kp.kernel = true;
  Session refused(kp);
  const std::string why = refused.enable(c.program).message;
  EXPECT_NE(why.find("afs_syscall: its function cannot be probed"), std::string::npos) << why;
  const std::string refused_list = kprobe_list();
  EXPECT_EQ(kprobes_on(refused_list, "sys_getppid+0x"), 0) << "a refused session left a kprobe:\n" << refused_list;
}

TEST_F(KmodDvmSession, ExitStopsTheRun) {
  const Outcome kern = run("syscall::getpid:entry /tid == " + tid_ + " && arg0 == 7/ { exit(3); }", true, 100);
  ASSERT_EQ(kern.error, "");
  EXPECT_TRUE(kern.exited);
  EXPECT_EQ(kern.exit_status, 3);
}

TEST_F(KmodDvmSession, AFullBufferCountsDrops) {
  Options o;
  o.bufsize = 4096;  // 4096 / 16-byte records: 256 per half, per CPU
  const Outcome kern = run("syscall::getpid:entry /tid == " + tid_ + "/ { trace(arg0); }", true, 5000, o);
  ASSERT_EQ(kern.error, "");
  EXPECT_GT(kern.counters.drops, 0u);
  EXPECT_EQ(kern.counters.ecb_fired + kern.counters.drops, 5000u);
}

TEST_F(KmodDvmSession, FaultsAreCountedPerKind) {
  const Outcome kern =
      run("syscall::getpid:entry /tid == " + tid_ + "/ { @ = count(); x = 10 / (arg0 % 2); }", true, 100);
  ASSERT_EQ(kern.error, "");
  EXPECT_EQ(kern.counters.errors, 50u);
  EXPECT_EQ(kern.counters.faults[kFaultDivZero], 50u);
}

// The module's own tracepoints (sdt provider), fired by FIRE's in-kernel
// loop: every event counted, the fixed event's value and the payload's
// first 8 bytes (the sequence number) read by D, its length seen.
TEST_F(KmodDvmSession, SdtProbesSeeTheModulesEvents) {
  auto session =
      kernel_session("sdt:tracebench::tracebench_fixed /pid == " + std::to_string(getpid()) +
                     "/ {\n"
                     "  @fixed = count(); @magic[(arg0 ^ arg1) == " +
                     std::to_string(static_cast<int64_t>(TB_KMOD_FIXED_MAGIC)) +
                     "] = count();\n}\n"
                     "sdt:tracebench::tracebench_payload /pid == " +
                     std::to_string(getpid()) +
                     "/ {\n"
                     "  @payload = count(); @len = max(arg2); @seq_in_payload[*arg1 == arg0] = count();\n}\n");
  ASSERT_TRUE(session);
  fire(TB_KMOD_EV_FIXED, 3000);
  fire(TB_KMOD_EV_PAYLOAD, 3000, 100);
  session->disable();
  const std::map<std::string, int64_t> want = {
      {"fixed", 3000}, {"magic[1]", 3000}, {"payload", 3000}, {"len", 100}, {"seq_in_payload[1]", 3000}};
  EXPECT_EQ(totals(*session), want);
  EXPECT_EQ(session->counters().errors, 0u);
}

// fbt: a kprobe and a kretprobe on the module's target function, each call
// of FIRE's loop seen at entry (arg0 = the event's sequence number) and at
// return (arg1 = what it returned).  And a probe reached from inside a
// firing (fbt on the glue function every firing calls) is dropped and
// counted, never run on the busy slot.
TEST_F(KmodDvmSession, FbtSeesEntryAndReturnAndNeverNests) {
  const std::string me = std::to_string(getpid());
  auto session = kernel_session("fbt:tracebench:tracebench_kmod_target:entry /pid == " + me +
                                "/ { @entry = count(); self->seq = arg0 + 1; }\n"
                                "fbt:tracebench:tracebench_kmod_target:return /pid == " +
                                me +
                                " && self->seq/ {\n"
                                "  @ret = count(); self->seq = 0;\n}\n"
                                "syscall::getpid:entry /tid == " +
                                tid_ +
                                "/ { @getpid = count(); }\n"
                                "fbt:tracebench:tb_dvm_fire_region:entry { @nested = count(); }\n");
  ASSERT_TRUE(session);
  Session& s = *session;
  fire(TB_KMOD_EV_TARGET, 2000);
  for (int i = 0; i < 100; i++) syscall(SYS_getpid);
  s.disable();
  std::map<std::string, int64_t> got = totals(s);
  EXPECT_EQ(got["entry"], 2000);
  EXPECT_EQ(got["ret"], 2000);
  EXPECT_EQ(got["getpid"], 100);
  EXPECT_EQ(got["nested"], 0);
  // Every firing calls the glue: the hit from a getpid firing found its CPU
  // busy (one from inside a kprobe handler kprobes itself skips as missed).
  EXPECT_GE(s.counters().busy_drops, 100u);
  EXPECT_EQ(s.counters().errors, 0u);
}

// profile-N fires on every CPU's timer and sees where it interrupted (the
// busy loop below: a user pc in this process); tick-N fires on one CPU at
// about its rate.
TEST_F(KmodDvmSession, ProfileAndTickFireOnTimers) {
  const std::string me = std::to_string(getpid());
  auto session = kernel_session("profile:::profile-997 { @profile = count(); @user_here[pid == " + me +
                                " && arg1 != 0 && arg0 == 0] = count(); }\n"
                                "profile:::tick-100 { @tick = count(); }\n");
  ASSERT_TRUE(session);
  Session& s = *session;
  timespec t0{}, t{};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  volatile uint64_t spin = 0;
  do {
    for (int i = 0; i < 10000; i++) spin = spin + 1;
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000l + (t.tv_nsec - t0.tv_nsec) < 500000000l);
  s.disable();
  std::map<std::string, int64_t> got = totals(s);
  std::printf("0.5 s: profile-997 fired %lld times (%lld in this process's user code), tick-100 %lld times\n",
              static_cast<long long>(got["profile"]), static_cast<long long>(got["user_here[1]"]),
              static_cast<long long>(got["tick"]));
  // Emulated timers run late, never early: bounds, not rates.
  EXPECT_GE(got["tick"], 10);
  EXPECT_LE(got["tick"], 60);
  EXPECT_GE(got["profile"], 100);
  EXPECT_LE(got["profile"], 2 * 600 * static_cast<int64_t>(s.nslots()));
  EXPECT_GE(got["user_here[1]"], 10);
  EXPECT_EQ(s.counters().errors, 0u);
}

// Stage timing: every firing of the probe is timed, and each stage costs
// something once the reads' floor is off.
TEST_F(KmodDvmSession, StageTimingSplitsEveryFiring) {
  Options o;
  o.stage_timing = true;
  const Outcome kern = run("syscall::getpid:entry /tid == " + tid_ + "/ { @ = count(); }", true, 1000, o);
  ASSERT_EQ(kern.error, "");
  const Counters::Stages& st = kern.counters.stages;
  EXPECT_EQ(st.firings, kern.counters.fired);
  ASSERT_GE(st.firings, 1000u);
  const double n = static_cast<double>(st.firings), floor = st.floor_cycles / n;
  std::printf("%llu timed firings: read pair %.0f, provider entry %.0f, VM %.0f cycles each (floor off)\n",
              static_cast<unsigned long long>(st.firings), floor, st.entry_cycles / n - floor,
              st.vm_cycles / n - floor);
  EXPECT_GT(st.entry_cycles / n, floor);
  EXPECT_GT(st.vm_cycles / n, floor);
  // The user-space home has no such stages: refused, not ignored.
  const Outcome user = run("syscall::getpid:entry { @ = count(); }", false, 1, o);
  EXPECT_NE(user.error.find("option stagetiming times the kernel home's stages"), std::string::npos) << user.error;
}

// The stages per provider (the paper's Table 6 for the kernel home): each
// provider's firings timed apart, adding up to the totals.
TEST_F(KmodDvmSession, StageTimingPerProvider) {
  Options o;
  o.stage_timing = true;
  const std::string me = std::to_string(getpid());
  auto session = kernel_session("syscall::getpid:entry /tid == " + tid_ +
                                    "/ { @a = count(); }\n"
                                    "syscall::getpid:return /tid == " +
                                    tid_ +
                                    "/ { @b = count(); }\n"
                                    "sdt:tracebench::tracebench_fixed /pid == " +
                                    me +
                                    "/ { @c = count(); }\n"
                                    "fbt:tracebench:tracebench_kmod_target:entry /pid == " +
                                    me +
                                    "/ { @d = count(); }\n"
                                    "profile:::profile-997 { @e = count(); }\n",
                                o);
  ASSERT_TRUE(session);
  for (int i = 0; i < 1000; i++) syscall(SYS_getpid);
  fire(TB_KMOD_EV_FIXED, 1000);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  while (std::chrono::steady_clock::now() < until) {}
  session->disable();
  const Counters c = session->counters();
  const Counters::Stages& st = c.stages;
  std::map<std::string, const Counters::Stages::Provider*> by;
  uint64_t firings = 0, entry = 0, vm = 0;
  for (const auto& p : st.providers) {
    by[p.name] = &p;
    firings += p.firings;
    entry += p.entry_cycles;
    vm += p.vm_cycles;
  }
  EXPECT_EQ(firings, st.firings);
  EXPECT_EQ(entry, st.entry_cycles);
  EXPECT_EQ(vm, st.vm_cycles);
  for (const char* name : {"syscall entry", "syscall return", "sdt", "fbt entry", "profile"})
    ASSERT_TRUE(by.count(name)) << name << " has no timed firing";
  EXPECT_GE(by["syscall entry"]->firings, 1000u);
  EXPECT_GE(by["syscall return"]->firings, 1000u);
  EXPECT_EQ(by["sdt"]->firings, 1000u);
  EXPECT_EQ(by["fbt entry"]->firings, 1000u);
  const double floor = static_cast<double>(st.floor_cycles) / static_cast<double>(st.firings);
  std::printf(
      "Table 6, kernel home (cycles per firing, a read pair's %.0f off each; the trap or dispatch before "
      "the callback is the run's overhead minus these):\n",
      floor);
  for (const auto& p : st.providers) {
    const double n = static_cast<double>(p.firings);
    std::printf("  %-15s %8llu firings: provider entry %6.0f, VM %6.0f\n", p.name.c_str(),
                static_cast<unsigned long long>(p.firings), p.entry_cycles / n - floor, p.vm_cycles / n - floor);
    EXPECT_GT(p.vm_cycles / n, floor) << p.name;
  }
}

// The pid provider: uprobes on a function of this test binary (a.out) see
// its entry with its arguments and its return with the value it returned,
// only in this process (a child calling it too is not counted), and time
// their stages as "pid entry"/"pid return".
extern "C" __attribute__((noinline, used)) uint64_t tb_pid_probe_target(uint64_t a, uint64_t b) {
  asm volatile("" ::: "memory");
  return a + b;
}

TEST_F(KmodDvmSession, PidProbesSeeThisProcesssCallsOnly) {
  Options o;
  o.stage_timing = true;
  const std::string me = std::to_string(getpid());
  auto session = kernel_session(
      "pid" + me +
          ":a.out:tb_pid_probe_target:entry { @entry = count(); @args = sum(arg1 - 2 * arg0); @a1 = sum(arg1); }\n"
          "pid" +
          me + ":a.out:tb_pid_probe_target:return { @ret = count(); @rv = sum(arg1); }\n",
      o);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->matched_probes().size(), 2u);
  const pid_t child = fork();
  if (child == 0) {
    uint64_t x = 0;
    for (int i = 0; i < 100; i++) x += tb_pid_probe_target(1, 1);
    _exit(x == 200 ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  uint64_t sum = 0;
  constexpr int kN = 500;
  for (int i = 0; i < kN; i++) sum += tb_pid_probe_target(i, 2ull * i);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  session->disable();
  std::map<std::string, int64_t> got = totals(*session);
  EXPECT_EQ(got["entry"], kN);
  EXPECT_EQ(got["ret"], kN);
  EXPECT_EQ(got["args"], 0);  // arg1 == 2 * arg0 on every call
  EXPECT_EQ(got["a1"], static_cast<int64_t>(kN) * (kN - 1));
  EXPECT_EQ(got["rv"], static_cast<int64_t>(sum));
  const Counters c = session->counters();
  EXPECT_EQ(c.errors, 0u);
  std::map<std::string, uint64_t> firings;
  for (const auto& p : c.stages.providers) firings[p.name] = p.firings;
  EXPECT_EQ(firings["pid entry"], static_cast<uint64_t>(kN));
  EXPECT_EQ(firings["pid return"], static_cast<uint64_t>(kN));
}

// What a description names must exist: the process, its module, a function.
TEST_F(KmodDvmSession, PidProbesOnMissingThingsAreRefusedWithWhy) {
  const std::string me = std::to_string(getpid());
  auto refusal = [](const std::string& script) {
    CompileResult c = compile_d(script);
    if (!c.program) return "compile: " + c.error;
    Options o;
    o.kernel = true;
    Session s(o);
    return s.enable(c.program).message;
  };
  EXPECT_NE(refusal("pid999999999:a.out:main:entry { }").find("no such process"), std::string::npos);
  EXPECT_NE(refusal("pid" + me + ":libnosuch.so:f:entry { }").find("maps no module libnosuch.so"), std::string::npos);
  EXPECT_NE(refusal("pid" + me + ":a.out:tb_no_such_function:entry { }").find("does not match any probes"),
            std::string::npos);
  // A library this process maps, by its basename: its functions are there.
  EXPECT_EQ(refusal("pid" + me + ":libc.so*:getpid:entry { }"), "");
}

// The note's site (usdt_site.h) fires in this process only, with every argument read
// where the note says; the semaphore is raised while the probe is
// registered and lowered when the session ends.
TEST_F(KmodDvmSession, UsdtProbesReadTheirArgumentsAndRaiseTheSemaphore) {
  TbUsdtPair pair{0, 0};
  ASSERT_EQ(tb_test_usdt_target(0, &pair), 0);
  Options o;
  o.stage_timing = true;
  const std::string me = std::to_string(getpid());
  auto session = kernel_session("tb_test_usdt" + me +
                                    ":a.out:tb_test_usdt_target:fired { @n = count(); "
                                    "@x = sum(arg0); @k = sum(arg1); @g = sum(arg2); @b = sum(arg3); }\n",
                                o);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->matched_probes().size(), 1u);
  EXPECT_EQ(tb_test_usdt_target(0, &pair), 1) << "semaphore not raised";
  EXPECT_EQ(tb_test_usdt_target(0, &pair), 1);
  const pid_t child = fork();
  if (child == 0) {
    TbUsdtPair q{0, 1000};
    int fired = 0;
    for (int i = 0; i < 50; i++) fired += tb_test_usdt_target(1000, &q);
    _exit(fired == 50 ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  constexpr int64_t kN = 400;
  for (int64_t i = 0; i < kN; i++) {
    tb_test_usdt_global = 3 * i;
    pair.b = static_cast<int>(-(i + 1));
    tb_test_usdt_target(-i, &pair);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // Stopped (a harness's baseline block): the site is lifted, the process
  // runs as if untraced; resumed, it is placed again.
  pair.b = 0;
  tb_test_usdt_global = 0;
  session->pause();
  EXPECT_EQ(tb_test_usdt_target(0, &pair), 0) << "semaphore raised while stopped";
  ASSERT_TRUE(session->resume().ok());
  EXPECT_EQ(tb_test_usdt_target(0, &pair), 1) << "semaphore not raised again";
  session->disable();
  std::map<std::string, int64_t> got = totals(*session);
  EXPECT_EQ(got["n"], kN + 3);  // three calls outside the loop, x, b and the global 0
  EXPECT_EQ(got["x"], -kN * (kN - 1) / 2);
  EXPECT_EQ(got["k"], -7 * (kN + 3));
  EXPECT_EQ(got["g"], 3 * kN * (kN - 1) / 2);
  EXPECT_EQ(got["b"], -kN * (kN + 1) / 2);
  const Counters c = session->counters();
  EXPECT_EQ(c.errors, 0u);
  std::map<std::string, uint64_t> firings;
  for (const auto& p : c.stages.providers) firings[p.name] = p.firings;
  EXPECT_EQ(firings["usdt"], static_cast<uint64_t>(kN + 3));
  session.reset();
  EXPECT_EQ(tb_test_usdt_fired_semaphore, 0) << "semaphore left raised";
  EXPECT_EQ(tb_test_usdt_target(0, &pair), 0);
}

// An indexed memory operand (usdt_site.h's hand-written note,
// -4@8(%rax,%rdx,4)): arg0 is p[i + 2], an int, sign-extended.
TEST_F(KmodDvmSession, UsdtIndexedOperandsReadTheElement) {
  const int values[10] = {0, 0, -5, 7, -11, 13, 1000000, -1000000, 42, -42};
  const std::string me = std::to_string(getpid());
  auto session =
      kernel_session("tb_test_usdt" + me + ":a.out::indexed { @n = count(); @v = sum(arg0); @i = sum(arg1); }");
  ASSERT_TRUE(session);
  int64_t want_v = 0, want_i = 0;
  for (long k = 0; k < 240; k++) {
    const long i = k % 8;
    tb_test_usdt_indexed(values, i);
    want_v += values[i + 2];
    want_i += i;
  }
  session->disable();
  std::map<std::string, int64_t> got = totals(*session);
  EXPECT_EQ(got["n"], 240);
  EXPECT_EQ(got["v"], want_v);
  EXPECT_EQ(got["i"], want_i);
}

// Stage 1 measured: getpid(tsc) and f(tsc) hand the module the TSC read
// just before the call, and it sums its callback's first read minus that
// (the syscall entry, or the breakpoint trap and uprobe dispatch).  An arg0
// that is not such a TSC (later than the callback, or older than 2^32
// cycles) is not summed.
TEST_F(KmodDvmSession, StageOneIsMeasuredFromTheCallersTsc) {
  Options o;
  o.stage_timing = true;
  o.stage_trap = true;
  const std::string me = std::to_string(getpid());
  auto session = kernel_session("syscall::getpid:entry /tid == " + tid_ +
                                    "/ { @a = count(); }\n"
                                    "syscall::getppid:entry /tid == " +
                                    tid_ +
                                    "/ { @c = count(); }\n"
                                    "pid" +
                                    me + ":a.out:tb_pid_probe_target:entry { @b = count(); }\n",
                                o);
  ASSERT_TRUE(session);
  auto tsc = [] {
    _mm_lfence();
    return __rdtsc();
  };
  constexpr int kN = 1000;
  for (int i = 0; i < kN; i++) syscall(SYS_getpid, tsc());
  for (int i = 0; i < kN; i++) tb_pid_probe_target(tsc(), 0);
  for (int i = 0; i < kN; i++) syscall(SYS_getppid, tsc() + (1ull << 40));
  for (int i = 0; i < kN; i++) syscall(SYS_getppid, tsc() - (1ull << 33));
  session->disable();
  const Counters c = session->counters();
  std::map<std::string, const Counters::Stages::Provider*> by;
  for (const auto& p : c.stages.providers) by[p.name] = &p;
  ASSERT_TRUE(by.count("syscall entry") && by.count("pid entry"));
  const auto& sys = *by["syscall entry"];
  const auto& pid = *by["pid entry"];
  EXPECT_GE(sys.firings, 3u * kN);
  EXPECT_GE(sys.trap_firings, static_cast<uint64_t>(kN));       // getpid's; not getppid's
  EXPECT_LE(sys.trap_firings, static_cast<uint64_t>(kN) + 20);  // another process's getpid, by chance
  EXPECT_EQ(pid.trap_firings, static_cast<uint64_t>(kN));
  const double floor = static_cast<double>(c.stages.floor_cycles) / static_cast<double>(c.stages.firings);
  const double sys1 = static_cast<double>(sys.trap_cycles) / sys.trap_firings - floor;
  const double pid1 = static_cast<double>(pid.trap_cycles) / pid.trap_firings - floor;
  std::printf(
      "stage 1, measured (cycles per firing, a read pair's %.0f off): syscall entry %.0f, pid entry %.0f "
      "(then provider entry %.0f / %.0f, VM %.0f / %.0f)\n",
      floor, sys1, pid1, sys.entry_cycles / double(sys.firings) - floor, pid.entry_cycles / double(pid.firings) - floor,
      sys.vm_cycles / double(sys.firings) - floor, pid.vm_cycles / double(pid.firings) - floor);
  EXPECT_GT(sys1, 0);
  EXPECT_GT(pid1, 0);
  // Without stage timing there is nothing to put stage 1 in.
  Options bad;
  bad.kernel = true;
  bad.stage_trap = true;
  Session s(bad);
  EXPECT_NE(s.enable(compile_d("syscall::getpid:entry { }").program).message.find("set both"), std::string::npos);
}

TEST_F(KmodDvmSession, OneSessionAtATimeAndClosingEndsIt) {
  CompileResult c = compile_d("syscall::getpid:entry { @ = count(); }");
  ASSERT_TRUE(c.program);
  Options o;
  o.kernel = true;
  {
    Session a(o), b(o);
    ASSERT_TRUE(a.enable(c.program).ok());
    Error e = b.enable(compile_d("syscall::getpid:entry { @ = count(); }").program);
    EXPECT_EQ(e.message, "another D-VM session is enabled in the module (one at a time)");
  }
  // Both closed: a new one is welcome; and disable() ends the module's
  // session (the counters stay readable) while its Session lives on.
  Session again(o);
  ASSERT_TRUE(again.enable(c.program).ok());
  syscall(SYS_getpid);
  again.disable();
  EXPECT_GE(again.counters().fired, 1u);
  EXPECT_GT(again.nslots(), 0u);  // the module's CPUs
  Session next(o);
  EXPECT_TRUE(next.enable(c.program).ok());
}

TEST_F(KmodDvmSession, UnknownProbesAreRefusedBeforeTheModuleSeesThem) {
  CompileResult c = compile_d("syscall::no_such_call:entry { @ = count(); }");
  ASSERT_TRUE(c.program);
  Options o;
  o.kernel = true;
  Session s(o);
  Error e = s.enable(c.program);
  EXPECT_NE(e.message.find("does not match any probes"), std::string::npos) << e.message;
}

// Raw DVM_ENABLE requests the compiler would never make: each is refused
// with EINVAL and a reason, and nothing is left behind (a good request on
// the same file then succeeds).
struct Parts {
  std::vector<Insn> insns{Insn{kOpRet, 0, 0, 0, 0}};  // returns %r0 = 0
  tb_kmod_dif_verify obj{};
  tb_kmod_dvm_action act{};
  tb_kmod_dvm_ecb ecb{};
  tb_kmod_dvm_probe probe{};
  Parts() {
    act.kind = kActTrace;
    act.value = 1;
    act.offset = 8;
    act.size = 8;
    ecb.epid = 1;
    ecb.nactions = 1;
    ecb.record_size = 16;
    set_probe(TB_KMOD_DVM_PROBE_SYSCALL_ENTRY, "syscall\0\0getpid\0entry", SYS_getpid);
    probe.id = 1;
  }
  // The probe replaced by one of `kind` named `names` ("prov\0mod\0func\0name").
  template <size_t N>
  void set_probe(uint32_t kind, const char (&names)[N], uint32_t arg = 0) {
    probe = {};
    probe.kind = kind;
    probe.arg = arg;
    std::memcpy(probe.names, names, N);
    probe.names_len = N;
  }
  // A pid probe of `kind` in process `pid` at `path` + `offset`.
  void set_pid_probe(uint32_t kind, uint32_t pid, const char* path, uint64_t offset = 0) {
    set_probe(kind, "pid1\0a.out\0main\0entry", pid);
    probe.path_ptr = reinterpret_cast<uint64_t>(path);
    probe.offset = offset;
  }
  // A usdt probe on this binary with one register argument.
  void set_usdt_probe() {
    set_pid_probe(TB_KMOD_DVM_PROBE_USDT, 1, "/proc/self/exe");
    probe.usdt_nargs = 1;
    probe.usdt_args[0].kind = TB_KMOD_USDT_ARG_REG;
    probe.usdt_args[0].size = 8;
    probe.usdt_args[0].reg = TB_KMOD_USDT_REG_DI;
  }
  tb_kmod_dvm_enable request() {
    obj.insns_ptr = reinterpret_cast<uint64_t>(insns.data());
    obj.n_insns = static_cast<uint32_t>(insns.size());
    tb_kmod_dvm_enable r{};
    r.version = TB_KMOD_DVM_VERSION;
    r.bufsize = 4096;
    r.aggsize = 4096;
    r.dynvarsize = 4096;
    r.strsize = 256;
    r.scratchsize = 4096;
    r.objects_ptr = reinterpret_cast<uint64_t>(&obj);
    r.n_objects = 1;
    r.actions_ptr = reinterpret_cast<uint64_t>(&act);
    r.n_actions = 1;
    r.ecbs_ptr = reinterpret_cast<uint64_t>(&ecb);
    r.n_ecbs = 1;
    r.probes_ptr = reinterpret_cast<uint64_t>(&probe);
    r.n_probes = 1;
    return r;
  }
};

// The refusal's reason; "" when accepted (the file is then closed, ending
// the session, and opened again).
std::string refusal(int* fd, tb_kmod_dvm_enable r) {
  if (ioctl(*fd, TB_KMOD_IOC_DVM_ENABLE, &r) == 0) {
    close(*fd);
    *fd = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
    return "";
  }
  return errno == EINVAL ? std::string(r.err) : std::string("errno ") + strerror(errno);
}

TEST_F(KmodDvmSession, HostileEnableRequestsAreRefusedWithAReasonAndLeaveNothing) {
  int fd = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(refusal(&fd, Parts().request()), "");
  struct Case {
    const char* what;
    std::function<void(Parts&, tb_kmod_dvm_enable&)> spoil;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"version", [](Parts&, tb_kmod_dvm_enable& r) { r.version = 99; }, "unknown DVM_ENABLE version"},
      {"flags", [](Parts&, tb_kmod_dvm_enable& r) { r.flags = 0x80; }, "unknown flag or non-zero reserved field"},
      {"trap without timing", [](Parts&, tb_kmod_dvm_enable& r) { r.flags = TB_KMOD_DVM_TIMED_TRAP; },
       "TIMED_TRAP needs TIMED and the TSC (x86)"},
      {"bufsize", [](Parts&, tb_kmod_dvm_enable& r) { r.bufsize = 1u << 30; },
       "bufsize: a multiple of 8 from 64 bytes to 64 MiB"},
      {"strsize", [](Parts&, tb_kmod_dvm_enable& r) { r.strsize = 1; }, "strsize: 16 to 4096 bytes"},
      {"no ECB", [](Parts&, tb_kmod_dvm_enable& r) { r.n_ecbs = 0; }, "no ECB or no probe"},
      {"syscall nr", [](Parts& p, tb_kmod_dvm_enable&) { p.probe.arg = 100000; },
       "probe: no such syscall number on this kernel"},
      {"probe kind", [](Parts& p, tb_kmod_dvm_enable&) { p.probe.kind = 77; }, "probe: unknown kind"},
      {"names", [](Parts& p, tb_kmod_dvm_enable&) { p.probe.names_len = 3; },
       "probe: names not NUL-terminated within their length"},
      {"bad object",
       [](Parts& p, tb_kmod_dvm_enable&) {
         p.insns = {Insn{0xff, 0, 0, 0, 0}, Insn{kOpRet, 0, 0, 0, 0}};
       },
       "unknown opcode"},
      {"value index", [](Parts& p, tb_kmod_dvm_enable&) { p.act.value = 2; }, "action: value object out of range"},
      {"record overflow", [](Parts& p, tb_kmod_dvm_enable&) { p.act.offset = 16; },
       "ECB: an action's data lies outside its record"},
      {"header overwrite", [](Parts& p, tb_kmod_dvm_enable&) { p.act.offset = 0; },
       "ECB: an action's data lies outside its record"},
      {"record in no buffer", [](Parts& p, tb_kmod_dvm_enable&) { p.ecb.record_size = 0; },
       "ECB: an action's data lies outside its record"},
      {"int size", [](Parts& p, tb_kmod_dvm_enable&) { p.act.size = 4; },
       "action: record size does not fit the value's type"},
      {"epid", [](Parts& p, tb_kmod_dvm_enable&) { p.ecb.epid = 2; }, "ECB: epid is not its index + 1"},
      {"actions range", [](Parts& p, tb_kmod_dvm_enable&) { p.ecb.nactions = 2; }, "ECB: actions out of range"},
      {"lquantize overflow",
       [](Parts& p, tb_kmod_dvm_enable&) {
         p.act = {};
         p.act.kind = kActAggregate;
         p.act.agg_kind = kAggLquantize;
         p.act.value = 1;
         p.act.lq_base = INT64_MIN;
         p.act.lq_limit = INT64_MAX;
         p.act.lq_step = 1;
       },
       "action: lquantize() needs limit > base and step > 0"},
      {"unknown action", [](Parts& p, tb_kmod_dvm_enable&) { p.act.kind = 99; }, "action: unknown kind"},
      {"llquantize factor",
       [](Parts& p, tb_kmod_dvm_enable&) {
         p.act = {};
         p.act.kind = kActAggregate;
         p.act.agg_kind = kAggLlquantize;
         p.act.value = 1;
         p.act.lq_base = 1;  // factor 1
         p.act.lq_limit = llquantize_limit(0, 2);
         p.act.lq_step = 10;
       },
       "action: llquantize() parameters refused (factor, magnitudes, steps or more than 4096 buckets)"},
      {"ERROR with an argument",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_probe(TB_KMOD_DVM_PROBE_ERROR, "dtrace\0\0\0ERROR", 1); },
       "probe: ERROR takes no argument"},
      {"pid without a process",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_pid_probe(TB_KMOD_DVM_PROBE_PID_ENTRY, 0, "/proc/self/exe"); },
       "probe: pid and usdt probes name a process (arg = its pid)"},
      {"pid without a file",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_pid_probe(TB_KMOD_DVM_PROBE_PID_RETURN, 1, nullptr); },
       "probe: pid and usdt probes name a file (path_ptr)"},
      {"pid on a missing file",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_pid_probe(TB_KMOD_DVM_PROBE_PID_ENTRY, 1, "/nonexistent/tb"); },
       "probe: pid or usdt probe's file does not exist"},
      {"pid past the file's end",
       [](Parts& p, tb_kmod_dvm_enable&) {
         p.set_pid_probe(TB_KMOD_DVM_PROBE_PID_ENTRY, 1, "/proc/self/exe", 1ull << 40);
       },
       "probe: pid or usdt probe's offset is not inside a regular file"},
      {"pid on a directory",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_pid_probe(TB_KMOD_DVM_PROBE_PID_ENTRY, 1, "/"); },
       "probe: pid or usdt probe's offset is not inside a regular file"},
      {"a file on a syscall probe", [](Parts& p, tb_kmod_dvm_enable&) { p.probe.offset = 16; },
       "probe: only pid and usdt probes take a file and an offset"},
      {"a semaphore on a pid probe",
       [](Parts& p, tb_kmod_dvm_enable&) {
         p.set_pid_probe(TB_KMOD_DVM_PROBE_PID_ENTRY, 1, "/proc/self/exe");
         p.probe.ref_ctr_offset = 8;
       },
       "probe: only usdt probes take a semaphore and argument specs"},
      {"probe reserved", [](Parts& p, tb_kmod_dvm_enable&) { p.probe.reserved = 1; },
       "probe: reserved fields must be 0"},
      {"usdt with 11 arguments", [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.usdt_nargs = 11; },
       "probe: usdt probes carry at most 10 arguments"},
      {"usdt argument of 3 bytes",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.usdt_args[0].size = -3; },
       "probe: usdt argument size is not 1, 2, 4 or 8 bytes"},
      {"usdt argument of kind 9",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.usdt_args[0].kind = 9; },
       "probe: usdt argument of unknown kind"},
      {"usdt argument in register 40",
       [](Parts& p, tb_kmod_dvm_enable&) {
         p.set_usdt_probe();
         p.probe.usdt_args[0].kind = TB_KMOD_USDT_ARG_MEM;
         p.probe.usdt_args[0].reg = 40;
       },
       "probe: usdt argument names no register this module reads"},
      {"usdt register with a displacement",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.usdt_args[0].value = 8; },
       "probe: usdt register argument has a displacement"},
      {"usdt argument past nargs",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.usdt_args[3].size = 8; },
       "probe: usdt argument past usdt_nargs is not zero"},
      {"usdt argument reserved",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.usdt_args[0].reserved[2] = 1; },
       "probe: usdt argument's reserved bytes must be 0"},
      {"usdt index on a register argument",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.usdt_args[0].scale = 2; },
       "probe: usdt argument's index is not a register scaled by 1, 2, 4 or 8 in a memory operand"},
      {"usdt index scaled by 3",
       [](Parts& p, tb_kmod_dvm_enable&) {
         p.set_usdt_probe();
         p.probe.usdt_args[0].kind = TB_KMOD_USDT_ARG_MEM;
         p.probe.usdt_args[0].index = TB_KMOD_USDT_REG_DX;
         p.probe.usdt_args[0].scale = 3;
       },
       "probe: usdt argument's index is not a register scaled by 1, 2, 4 or 8 in a memory operand"},
      {"usdt index register without a scale",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.usdt_args[0].index = 2; },
       "probe: usdt argument's index is not a register scaled by 1, 2, 4 or 8 in a memory operand"},
      {"usdt semaphore past the file's end",
       [](Parts& p, tb_kmod_dvm_enable&) { p.set_usdt_probe(), p.probe.ref_ctr_offset = 1ull << 40; },
       "probe: usdt probe's semaphore offset is not inside its file"},
      {"fbt on nothing",
       [](Parts& p, tb_kmod_dvm_enable&) {
         p.set_probe(TB_KMOD_DVM_PROBE_FBT_ENTRY, "fbt\0kernel\0tb_no_such_function\0entry");
       },
       "probe: fbt cannot probe this function (no such symbol, or kprobes refuse it)"},
  };
  for (const Case& c : cases) {
    Parts p;
    tb_kmod_dvm_enable ignored{};
    c.spoil(p, ignored);  // the parts (each spoiler is idempotent) ...
    tb_kmod_dvm_enable r = p.request();
    c.spoil(p, r);  // ... and the request made of them
    r = p.request(), c.spoil(p, r);
    EXPECT_EQ(refusal(&fd, r), c.reason) << c.what;
    // The good request is accepted again: nothing was left enabled.
    ASSERT_EQ(refusal(&fd, Parts().request()), "") << "after " << c.what;
  }
  close(fd);
}

// DVM_AGGRESET: no session, an aggregation no action updates, unknown flags,
// a key of a length the core never makes: refused; a good one changes what
// is there (nothing yet).
TEST_F(KmodDvmSession, HostileAggResetRequestsAreRefused) {
  int fd = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  tb_kmod_dvm_aggreset r{};
  EXPECT_EQ(ioctl(fd, TB_KMOD_IOC_DVM_AGGRESET, &r), -1);
  EXPECT_EQ(errno, ENOENT);
  Parts p;
  p.act = {};
  p.act.kind = kActAggregate;
  p.act.agg_kind = kAggMax;
  p.act.value = 1;
  p.act.agg_id = 3;
  p.ecb.record_size = 0;
  tb_kmod_dvm_enable e = p.request();
  ASSERT_EQ(ioctl(fd, TB_KMOD_IOC_DVM_ENABLE, &e), 0) << e.err;
  const std::vector<std::pair<const char*, std::function<void(tb_kmod_dvm_aggreset&)>>> bad = {
      {"agg no action updates", [](tb_kmod_dvm_aggreset& x) { x.agg_id = 4; }},
      {"unknown flag", [](tb_kmod_dvm_aggreset& x) { x.flags = 1u << 7; }},
      {"key of 12 bytes",
       [](tb_kmod_dvm_aggreset& x) {
         x.flags = TB_KMOD_DVM_AGGRESET_KEY;
         x.keylen = 12;
       }},
      {"key too long",
       [](tb_kmod_dvm_aggreset& x) {
         x.flags = TB_KMOD_DVM_AGGRESET_KEY;
         x.keylen = 520;
       }},
      {"keylen without a key", [](tb_kmod_dvm_aggreset& x) { x.keylen = 8; }},
  };
  for (const auto& [what, spoil] : bad) {
    tb_kmod_dvm_aggreset x{};
    x.agg_id = 3;
    spoil(x);
    EXPECT_EQ(ioctl(fd, TB_KMOD_IOC_DVM_AGGRESET, &x), -1) << what;
    EXPECT_EQ(errno, EINVAL) << what;
  }
  tb_kmod_dvm_aggreset ok{};
  ok.agg_id = 3;
  ok.flags = TB_KMOD_DVM_AGGRESET_TRUNC;
  ok.changed = 99;
  EXPECT_EQ(ioctl(fd, TB_KMOD_IOC_DVM_AGGRESET, &ok), 0) << strerror(errno);
  EXPECT_EQ(ok.changed, 0u);
  close(fd);
}

}  // namespace
