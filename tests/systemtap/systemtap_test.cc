#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "build_id.h"
#include "compile.h"
#include "host_facts.h"
#include "script.h"
#include "session.h"
#include "systemtap_tracer.h"
#include "tests/common/usdt_site.h"
#include "tracers/common/proc.h"
#include "usdt_semaphore.h"

namespace tracebench::systemtap {
namespace {

HostFacts all_present() {
  HostFacts f;
  f.release = "6.1.0-56-amd64";
  f.stap = "/usr/bin/stap";
  f.staprun = "/usr/bin/staprun";
  f.build_tree = "/lib/modules/6.1.0-56-amd64/build";
  f.modules_supported = true;
  return f;
}

TEST(SystemtapAvailability, AllPresentIsAvailable) { EXPECT_TRUE(judge(all_present()).ok); }

TEST(SystemtapAvailability, StaprunMissing) {
  HostFacts f = all_present();
  f.staprun.clear();
  const Availability a = judge(f);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("`scripts/setup.sh --area systemtap` installs"), std::string::npos) << a.reason;
}

TEST(SystemtapAvailability, StapMissingWithoutPrecompiledModules) {
  HostFacts f = all_present();
  f.stap.clear();
  const Availability a = judge(f);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("stap not found"), std::string::npos) << a.reason;
  f.module_dir = kGuestModuleDir;  // the VM lab's guest: compiled on the host
  EXPECT_TRUE(judge(f).ok);
}

TEST(SystemtapAvailability, NoBuildTree) {
  HostFacts f = all_present();
  f.build_tree.clear();
  const Availability a = judge(f);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("no build tree for the running kernel (/lib/modules/6.1.0-56-amd64/build/.config)"),
            std::string::npos)
      << a.reason;
  EXPECT_NE(a.reason.find("tracebench vm"), std::string::npos) << a.reason;
}

TEST(SystemtapAvailability, ModulesRefused) {
  HostFacts f = all_present();
  f.modules_supported = false;
  Availability a = judge(f);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("cannot load modules (no /proc/modules)"), std::string::npos) << a.reason;
  f = all_present();
  f.modules_disabled = true;
  a = judge(f);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("kernel.modules_disabled = 1"), std::string::npos) << a.reason;
}

// This machine's case: both reasons are said, not only the first.
TEST(SystemtapAvailability, EveryReasonSaid) {
  HostFacts f = all_present();
  f.modules_supported = false;
  f.build_tree.clear();
  const Availability a = judge(f);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("no /proc/modules"), std::string::npos) << a.reason;
  EXPECT_NE(a.reason.find("no build tree"), std::string::npos) << a.reason;
}

ProbePoint syscall_probe(const std::string& name) {
  return ProbePoint{"syscall:" + name, ProbeKind::kSyscall, name, 0, "", -1, -1};
}

ProbePoint kmod_probe() {
  return ProbePoint{
      "kfunc:tracebench_kmod_target", ProbeKind::kKernelFunction, "tracebench_kmod_target", 0, "", -1, -1};
}

TEST(SystemtapScript, SyscallFilteredOnPidAndNumber) {
  StapScript s;
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "count", {}, &s));
  EXPECT_NE(s.text.find("probe kernel.trace(\"raw_syscalls:sys_enter\") { if (pid() == tb_pid && $id == tb_nr) "
                        "tb_hits++ }"),
            std::string::npos)
      << s.text;
  EXPECT_NE(s.text.find(kReadyLine), std::string::npos);
  EXPECT_NE(s.text.find(kCountPrefix), std::string::npos);
  EXPECT_TRUE(s.takes_syscall_nr);
  EXPECT_FALSE(s.needs_kmod);
  EXPECT_EQ(s.module.rfind("tracebench_stap_", 0), 0u);
  // The number is a load-time parameter: one module for every syscall.
  StapScript other;
  ASSERT_TRUE(make_script(syscall_probe("getppid"), "count", {}, &other));
  EXPECT_EQ(s.module, other.module);
  EXPECT_EQ(s.module, module_name(s.text));
}

TEST(SystemtapScript, KmodFunctionNamesTheModuleBuild) {
  StapScript s;
  const Status none = make_script(kmod_probe(), "count", {}, &s);
  EXPECT_FALSE(none);
  EXPECT_NE(none.message().find("companion module is not loaded"), std::string::npos) << none.message();
  StapScript a, b;
  ASSERT_TRUE(make_script(kmod_probe(), "count", {.kmod_build_id = "4127e7cc"}, &a));
  ASSERT_TRUE(make_script(kmod_probe(), "count", {.kmod_build_id = "e0253ad0"}, &b));
  EXPECT_TRUE(a.needs_kmod);
  EXPECT_NE(a.text.find(std::string("module(\"") + kKmodPathToken + "\").function(\"tracebench_kmod_target\")"),
            std::string::npos)
      << a.text;
  EXPECT_NE(a.module, b.module) << "a rebuilt companion module must be a different script";
}

TEST(SystemtapScript, RefusedWithReasons) {
  StapScript s;
  EXPECT_FALSE(make_script(syscall_probe("getpid"), "hash", {}, &s));
  EXPECT_FALSE(make_script(syscall_probe("getpid"), "record", {}, &s, Runtime::kModule, Handlers{2}));
  EXPECT_FALSE(make_script(syscall_probe("no_such_call"), "count", {}, &s));
  std::string why;
  // A user function the adapter cannot call itself (no address): refused.
  EXPECT_FALSE(script_supports(ProbePoint{"user:f", ProbeKind::kUserFunction, "f", 0, "", -1, -1}, &why));
  EXPECT_NE(why.find("calls it itself"), std::string::npos) << why;
  // Nor one that takes a buffer (the D-VM's sites).
  EXPECT_FALSE(script_supports(ProbePoint{"dvm:f", ProbeKind::kUserFunction, "f", 0x1234, "", 1, 2}, &why));
  EXPECT_FALSE(script_supports(ProbePoint{"usdt:x", ProbeKind::kUsdt, "nocolon", 0, "", -1, -1}, &why));
  EXPECT_NE(why.find("provider:name"), std::string::npos) << why;
  EXPECT_FALSE(
      script_supports(ProbePoint{"kfunc:vfs_read", ProbeKind::kKernelFunction, "vfs_read", 0, "", -1, -1}, &why));
  EXPECT_NE(why.find("symbol table"), std::string::npos) << why;
  EXPECT_FALSE(script_supports(ProbePoint{"kmod:x", ProbeKind::kKmodTracepoint, "tracebench:x", 0, "", -1, -1}, &why));
}

ProbePoint call_probe() {
  return ProbePoint{"user:tb_noinline_call", ProbeKind::kUserFunction, "tb_noinline_call", 0x1234, "", -1, -1};
}
ProbePoint usdt_probe() { return ProbePoint{"usdt:tracebench:hot", ProbeKind::kUsdt, "tracebench:hot", 0, "", -1, -1}; }
const ScriptTargets kGuestExe{.exe_path = "/tb/bin/tracebench", .exe_build_id = "0a1b2c"};

// Uprobes: the executable's path as the probed process sees it is in the
// script (where the module places them), its build-id names the build.
TEST(SystemtapScript, UserProbesNameTheExecutableAndItsBuild) {
  StapScript call, usdt;
  ASSERT_TRUE(make_script(call_probe(), "count", kGuestExe, &call));
  EXPECT_NE(call.text.find("probe process(\"/tb/bin/tracebench\").function(\"tb_noinline_call\") { if (pid() == "
                           "tb_pid) tb_hits++ }"),
            std::string::npos)
      << call.text;
  EXPECT_NE(call.text.find("# executable build-id 0a1b2c\n"), std::string::npos) << call.text;
  EXPECT_EQ(call.exe_path, "/tb/bin/tracebench");
  EXPECT_EQ(call.liveness, Liveness::kLiveCount) << "the adapter calls the function itself until it is counted";
  ASSERT_TRUE(make_script(usdt_probe(), "count", kGuestExe, &usdt));
  EXPECT_NE(usdt.text.find("process(\"/tb/bin/tracebench\").provider(\"tracebench\").mark(\"hot\")"), std::string::npos)
      << usdt.text;
  EXPECT_EQ(usdt.liveness, Liveness::kSemaphore);
  StapScript rebuilt;
  ASSERT_TRUE(make_script(call_probe(), "count", ScriptTargets{.exe_path = "/tb/bin/tracebench", .exe_build_id = "ff"},
                          &rebuilt));
  EXPECT_NE(rebuilt.module, call.module) << "a rebuilt executable must be a different script";
  const Status none = make_script(call_probe(), "count", {}, &call);
  EXPECT_FALSE(none);
  EXPECT_NE(none.message().find("build-id"), std::string::npos) << none.message();
}

// at=return: the function's `.return` probe (a uretprobe), in both
// runtimes, a script (and module) of its own; refused on a probe that is
// not a user function.
TEST(SystemtapScript, ReturnProbeOnAUserFunction) {
  for (Runtime runtime : {Runtime::kModule, Runtime::kBpf}) {
    StapScript entry, ret;
    ASSERT_TRUE(make_script(call_probe(), "count", kGuestExe, &entry, runtime));
    ASSERT_TRUE(make_script(call_probe(), "count", kGuestExe, &ret, runtime, Handlers{}, true));
    EXPECT_NE(ret.text.find("probe process(\"/tb/bin/tracebench\").function(\"tb_noinline_call\").return {"),
              std::string::npos)
        << ret.text;
    EXPECT_EQ(entry.text.find(".return"), std::string::npos) << entry.text;
    EXPECT_TRUE(ret.at_return);
    EXPECT_NE(ret.module, entry.module) << "a return probe is a script of its own";
  }
  StapScript s;
  const Status refused = make_script(syscall_probe("getpid"), "count", {}, &s, Runtime::kModule, Handlers{}, true);
  EXPECT_FALSE(refused);
  EXPECT_NE(refused.message().find("at=return applies to user-function probes"), std::string::npos)
      << refused.message();
}

// stap compiles a return probe only with the kernel's real System.map:
// Debian's /boot placeholder is not one, and the compile error then says
// how to get the real one.
TEST(SystemtapCompile, RealSystemMapAndTheHintWithoutOne) {
  char dir[] = "/tmp/tracebench-stap-map-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string placeholder = std::string(dir) + "/placeholder", real = std::string(dir) + "/real";
  std::ofstream(placeholder) << "ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n";
  std::ofstream(real) << "ffffffff81000000 T _text\nffffffff8107faf0 T arch_uretprobe_hijack_return_addr\n";
  EXPECT_FALSE(is_real_system_map(placeholder));
  EXPECT_TRUE(is_real_system_map(real));
  EXPECT_FALSE(is_real_system_map(std::string(dir) + "/absent"));
  std::filesystem::remove_all(dir);
  EXPECT_EQ(release_of_headers("/usr/src/linux-headers-6.1.0-57-amd64"), "6.1.0-57-amd64");
  EXPECT_EQ(release_of_headers("/lib/modules/6.1.0-57-amd64/build/"), "6.1.0-57-amd64");
  EXPECT_EQ(release_of_headers("/opt/kernel"), "");
  const std::string hint = compile_hint(
      "semantic error: process return probes not available [man error::inode-uprobes]\n", "6.1.0-57-amd64");
  EXPECT_NE(hint.find("scripts/vm/fetch-system-map.sh 6.1.0-57-amd64"), std::string::npos) << hint;
  EXPECT_EQ(compile_hint("semantic error: no match\n", "6.1.0-57-amd64"), "");
}

// An executable's path enters the script as a stap string: a quote in it
// stays inside the string (a path cannot add probes of its own), and a path
// stap would expand as a wildcard, or cannot be said, is refused.
TEST(SystemtapScript, ExecutablePathIsQuotedForStapTable) {
  struct Case {
    const char* path;
    const char* in_text;  // what the script says; nullptr: refused
  };
  const Case cases[] = {
      {"/tb/bin/tracebench", "process(\"/tb/bin/tracebench\")"},
      {"/x\") { } probe begin { system(\"id\") } probe process(\"/y",
       "process(\"/x\\\") { } probe begin { system(\\\"id\\\") } probe process(\\\"/y\")"},
      {"/a\\b", "process(\"/a\\\\b\")"},
      {"/usr/bin/*", nullptr},
      {"/opt/tb?/tracebench", nullptr},
      {"/opt/[ab]/tracebench", nullptr},
      {"/opt/tb\n/tracebench", nullptr},
  };
  for (const auto& c : cases) {
    StapScript s;
    const Status st = make_script(call_probe(), "count", ScriptTargets{.exe_path = c.path, .exe_build_id = "0a"}, &s);
    if (!c.in_text) {
      EXPECT_FALSE(st) << c.path;
      continue;
    }
    ASSERT_TRUE(st) << c.path << ": " << st.message();
    EXPECT_NE(s.text.find(c.in_text), std::string::npos) << s.text;
  }
}

// The BPF runtime's user function: target() is the liveness thread, whose
// first call names the process; only the process's other threads count.
TEST(SystemtapBpfScript, UserFunctionCountsOtherThreadsOfTheProcess) {
  StapScript s;
  ASSERT_TRUE(make_script(call_probe(), "count", kGuestExe, &s, Runtime::kBpf));
  EXPECT_EQ(s.liveness, Liveness::kLiveThread);
  EXPECT_NE(s.text.find("if (tid() == target()) {"), std::string::npos) << s.text;
  EXPECT_NE(s.text.find("if (tb_live == 0) { tb_live = pid(); printf(\"" + std::string(kLiveLine)), std::string::npos)
      << s.text;
  EXPECT_NE(s.text.find("} else if (tb_live != 0 && pid() == tb_live) tb_hits++"), std::string::npos) << s.text;
  // USDT: stapbpf raises no semaphore, so a guarded site never fires.
  StapScript u;
  const Status usdt = make_script(usdt_probe(), "count", kGuestExe, &u, Runtime::kBpf);
  EXPECT_FALSE(usdt);
  EXPECT_NE(usdt.message().find("semaphore"), std::string::npos) << usdt.message();
}

TEST(SystemtapScript, TracerValidatesUprobes) {
  SystemtapTracer t;
  AttachSpec spec;
  spec.probe = call_probe();
  spec.action = "count";
  EXPECT_TRUE(t.supports(spec.probe));
  EXPECT_TRUE(t.validate(spec)) << t.validate(spec).message();
  spec.probe = usdt_probe();
  EXPECT_TRUE(t.validate(spec)) << t.validate(spec).message();
  spec.probe = ProbePoint{"user:tb_hot_nop", ProbeKind::kUserFunction, "tb_hot_nop", 0, "", -1, -1};
  EXPECT_FALSE(t.validate(spec));
}

// Where a semaphore's file offset is in a process: the mapping of the
// executable that holds that offset.
// The semaphore of this test binary's guarded site, read through
// /proc/self/mem where its maps put it; a site without one is refused.
TEST(SystemtapUsdtSemaphore, ReadsThisProcesssSemaphore) {
  std::string exe;
  ASSERT_TRUE(common::executable_of(getpid(), &exe));
  UsdtSemaphore sem;
  const Status located = sem.locate(getpid(), exe, "tb_test_usdt", "fired");
  ASSERT_TRUE(located) << located.message();
  unsigned v = 9;
  ASSERT_TRUE(sem.read(&v));
  EXPECT_EQ(v, 0u);
  tb_test_usdt_fired_semaphore = 3;
  ASSERT_TRUE(sem.read(&v));
  tb_test_usdt_fired_semaphore = 0;
  EXPECT_EQ(v, 3u);
  UsdtSemaphore unguarded;
  const Status s = unguarded.locate(getpid(), exe, "tb_test_usdt", "indexed");
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("no semaphore-guarded USDT site"), std::string::npos) << s.message();
}

TEST(SystemtapUsdtSemaphore, MappedAddressFromMaps) {
  const std::string maps =
      "55d000000000-55d000100000 r--p 00000000 fd:01 123 /tb/bin/tracebench\n"
      "55d000100000-55d000400000 r-xp 00100000 fd:01 123 /tb/bin/tracebench\n"
      "55d000500000-55d000520000 rw-p 00480000 fd:01 123 /tb/bin/tracebench\n"
      "7f0000000000-7f0000001000 rw-p 00480000 fd:01 999 /usr/lib/other.so\n";
  EXPECT_EQ(mapped_address(maps, "/tb/bin/tracebench", 0x480010), 0x55d000500010u);
  EXPECT_EQ(mapped_address(maps, "/tb/bin/tracebench", 0x100020), 0x55d000100020u);
  EXPECT_EQ(mapped_address(maps, "/tb/bin/tracebench", 0x4a0000), 0u) << "past the mapping";
  EXPECT_EQ(mapped_address(maps, "/usr/lib/none.so", 0x10), 0u);
}

// The BPF runtime: stapbpf takes no script parameters, so the number is
// compiled in (one script per syscall), the pid is target() (-x), and the
// liveness syscall is filtered apart from the counted one.
TEST(SystemtapBpfScript, NumberCompiledInPidIsTarget) {
  StapScript s;
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "count", {}, &s, Runtime::kBpf));
  EXPECT_EQ(s.runtime, Runtime::kBpf);
  EXPECT_NE(s.text.find("if (pid() == target()) {"), std::string::npos) << s.text;
  EXPECT_NE(s.text.find("if ($id == " + std::to_string(syscall_number("getpid")) + ") tb_hits++"), std::string::npos)
      << s.text;
  EXPECT_NE(s.text.find("else if ($id == " + std::to_string(kLiveSyscallNr) + " && tb_live == 0)"), std::string::npos)
      << s.text;
  EXPECT_NE(s.text.find(kLiveLine), std::string::npos);
  EXPECT_NE(s.text.find(kCountPrefix), std::string::npos);
  EXPECT_EQ(s.text.find("tb_nr"), std::string::npos) << "no module parameter in a BPF script";
  EXPECT_EQ(s.text.find("procfs"), std::string::npos) << "stapbpf has no procfs probes";
  EXPECT_EQ(compiled_file(s), s.module + ".bo");
  StapScript other, mod;
  ASSERT_TRUE(make_script(syscall_probe("getppid"), "count", {}, &other, Runtime::kBpf));
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "count", {}, &mod));
  EXPECT_NE(s.module, other.module) << "the number is compiled in: one script per syscall";
  EXPECT_NE(s.module, mod.module);
  EXPECT_EQ(compiled_file(mod), mod.module + ".ko");
}

TEST(SystemtapBpfScript, KmodFunctionRefusedWithReason) {
  StapScript s;
  const Status st = make_script(kmod_probe(), "count", {.kmod_build_id = "4127e7cc"}, &s, Runtime::kBpf);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("module runtime (-t systemtap)"), std::string::npos) << st.message();
  EXPECT_FALSE(make_script(syscall_probe("getpid"), "hash", {}, &s, Runtime::kBpf));
}

// Two tracers, one per runtime, so a run measures them side by side.
TEST(SystemtapBpfScript, ATracerPerRuntime) {
  SystemtapTracer module, bpf(Runtime::kBpf);
  EXPECT_EQ(module.name(), "systemtap");
  EXPECT_EQ(bpf.name(), "systemtap_bpf");
  AttachSpec spec;
  spec.probe = syscall_probe("getpid");
  spec.action = "count";
  EXPECT_TRUE(bpf.validate(spec)) << bpf.validate(spec).message();
  spec.probe = kmod_probe();
  const Status st = bpf.validate(spec);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("BPF runtime"), std::string::npos) << st.message();
  EXPECT_TRUE(module.validate(spec)) << module.validate(spec).message();
  spec.options["runtime"] = "bpf";  // the runtime is the tracer's name, no option
  EXPECT_FALSE(module.validate(spec));
  // The model's scenarios: no fbt row where the runtime has no such probe.
  std::vector<std::string> names;
  for (const auto& sc : bpf.model().scenarios) names.push_back(sc.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sys", "pid"}));
  names.clear();
  for (const auto& sc : module.model().scenarios) names.push_back(sc.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sys", "sys10", "fbt", "pid"}));
}

// stapbpf needs no module support but raises its memory lock limit first.
TEST(SystemtapAvailability, BpfRuntimeNeedsStapbpfAndAMemlockItCanRaise) {
  HostFacts f = all_present();
  f.modules_supported = false;  // no matter to stapbpf
  EXPECT_FALSE(judge(f, Runtime::kBpf).ok) << "stapbpf missing";
  EXPECT_NE(judge(f, Runtime::kBpf).reason.find("stapbpf not found"), std::string::npos);
  f.stapbpf = "/usr/bin/stapbpf";
  f.memlock_raisable = true;
  EXPECT_TRUE(judge(f, Runtime::kBpf).ok) << judge(f, Runtime::kBpf).reason;
  f.memlock_raisable = false;
  Availability a = judge(f, Runtime::kBpf);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("RLIMIT_MEMLOCK"), std::string::npos) << a.reason;
  EXPECT_NE(a.reason.find("-t systemtap_bpf"), std::string::npos) << a.reason;
  f.memlock_raisable = true;
  f.build_tree.clear();
  a = judge(f, Runtime::kBpf);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.reason.find("no build tree"), std::string::npos) << a.reason;
  f.module_dir = kGuestModuleDir;  // compiled on the host for the guest
  EXPECT_TRUE(judge(f, Runtime::kBpf).ok);
}

// ecbs: more probes on the same point, each with its counter; a filter that
// holds (the first handler's) or never holds (a pid no task has), printed
// at the end and, when they hold, in the live count.
TEST(SystemtapScript, ExtraHandlersAreProbesOfTheirOwn) {
  StapScript one, holds, fails;
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "count", {}, &one));
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "count", {}, &holds, Runtime::kModule, Handlers{3, true}));
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "count", {}, &fails, Runtime::kModule, Handlers{3, false}));
  EXPECT_EQ(one.text.find("tb_extra"), std::string::npos);
  const std::string point = "probe kernel.trace(\"raw_syscalls:sys_enter\") ";
  EXPECT_NE(holds.text.find(point + "{ if (pid() == tb_pid && $id == tb_nr) tb_extra2++ }"), std::string::npos)
      << holds.text;
  EXPECT_NE(holds.text.find("printf(\"" + std::string(kExtraPrefix) + "2 %d\\n\", tb_extra2)"), std::string::npos)
      << holds.text;
  EXPECT_NE(holds.text.find("sprintf(\"%d %d %d\\n\", tb_hits, tb_extra1, tb_extra2)"), std::string::npos)
      << holds.text;
  EXPECT_NE(fails.text.find(point + "{ if (pid() == tb_nopid && $id == tb_nr) tb_extra1++ }"), std::string::npos)
      << fails.text;
  EXPECT_NE(fails.text.find("global tb_nopid = -1"), std::string::npos) << fails.text;
  EXPECT_NE(fails.text.find("sprintf(\"%d\\n\", tb_hits)"), std::string::npos) << fails.text;
  EXPECT_NE(one.module, holds.module);
  EXPECT_NE(holds.module, fails.module);
  StapScript bpf;
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "count", {}, &bpf, Runtime::kBpf, Handlers{2, false}));
  EXPECT_NE(bpf.text.find("if (pid() == target() + 1073741824 && $id == " + std::to_string(syscall_number("getpid")) +
                          ") tb_extra1++"),
            std::string::npos)
      << bpf.text;
  EXPECT_FALSE(make_script(syscall_probe("getpid"), "count", {}, &bpf, Runtime::kModule, Handlers{kMaxHandlers + 1}));
  SystemtapTracer t;
  AttachSpec spec;
  spec.probe = syscall_probe("getpid");
  spec.action = "count";
  spec.options = {{"ecbs", "10"}, {"extra_predicate", "false"}};
  EXPECT_TRUE(t.validate(spec)) << t.validate(spec).message();
  spec.options["ecbs"] = "17";
  EXPECT_FALSE(t.validate(spec));
}

// record: the first handler prints the event's number in the session.
TEST(SystemtapScript, RecordPrintsEachEventsNumber) {
  StapScript m, b;
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "record", {}, &m));
  EXPECT_NE(m.text.find("if (pid() == tb_pid && $id == tb_nr) { tb_hits++; printf(\"" + std::string(kRecordPrefix) +
                        "%d\\n\", tb_hits) }"),
            std::string::npos)
      << m.text;
  ASSERT_TRUE(make_script(call_probe(), "record", kGuestExe, &b, Runtime::kBpf));
  EXPECT_NE(b.text.find("} else if (tb_live != 0 && pid() == tb_live) { tb_hits++; printf("), std::string::npos)
      << b.text;
  StapScript count;
  ASSERT_TRUE(make_script(syscall_probe("getpid"), "count", {}, &count));
  EXPECT_NE(m.module, count.module);
}

// The records read back: lines of events past the liveness ones, each once.
TEST(SystemtapSession, RecordsReadBackOncePerEvent) {
  const SessionOutput o =
      parse_output(std::string(kRecordPrefix) + "1\n" + kRecordPrefix + "2\n" + kRecordPrefix + "3\n" + kRecordPrefix +
                       "3\n" + kRecordPrefix + "5\n" + kRecordPrefix + "9x\n" + kCountPrefix + "5\n",
                   "");
  EXPECT_EQ(o.records, (std::vector<std::uint64_t>{1, 2, 3, 3, 5}));
  EXPECT_EQ(o.count, 5u);
  // Event 1 was the adapter's own (liveness); 2..5 the workload's, 4 lost.
  EXPECT_EQ(records_in_range(o.records, 1, 5), 3u);
  EXPECT_EQ(records_in_range(o.records, 0, 5), 4u);
  EXPECT_EQ(records_in_range(o.records, 5, 5), 0u);
}

TEST(SystemtapSession, ParsesExtraHandlersCounts) {
  const SessionOutput o =
      parse_output(std::string(kCountPrefix) + "100\n" + kExtraPrefix + "1 100\n" + kExtraPrefix + "3 7\n", "");
  ASSERT_EQ(o.extra.size(), 3u);
  EXPECT_EQ(o.extra[0], 100u);
  EXPECT_EQ(o.extra[1], kNoCount);
  EXPECT_EQ(o.extra[2], 7u);
}

TEST(SystemtapSession, ParsesCountAndWarnings) {
  const SessionOutput o = parse_output(std::string(kReadyLine) + "\n" + kCountPrefix + "12345\n",
                                       "WARNING: Number of errors: 2, skipped probes: 7\n"
                                       "WARNING: There were 35 transport failures. Try stap -s\n");
  EXPECT_TRUE(o.count_seen);
  EXPECT_EQ(o.count, 12345u);
  EXPECT_EQ(o.errors, 2u);
  EXPECT_EQ(o.skipped, 7u);
  EXPECT_EQ(o.transport_failures, 35u);
  EXPECT_NE(o.warnings.find("skipped probes: 7"), std::string::npos);
  // No end line (stapio killed, the module gone first): no count.
  const SessionOutput none = parse_output(std::string(kReadyLine) + "\n" + kCountPrefix + "\n", "");
  EXPECT_FALSE(none.count_seen);
  EXPECT_TRUE(none.warnings.empty());
}

TEST(SystemtapBuildId, ReadsAGnuNote) {
  std::string note(12, '\0');
  const std::uint32_t namesz = 4, descsz = 4, type = 3;
  std::memcpy(&note[0], &namesz, 4);
  std::memcpy(&note[4], &descsz, 4);
  std::memcpy(&note[8], &type, 4);
  note += std::string("GNU\0", 4) + std::string("\x41\x27\xe7\xcc", 4);
  EXPECT_EQ(build_id_of_note(note), "4127e7cc");
  std::string other = note;
  other[8] = 1;  // not NT_GNU_BUILD_ID
  EXPECT_EQ(build_id_of_note(other), "");
  EXPECT_EQ(build_id_of_note(note.substr(0, 17)), "");  // cut short
}

TEST(SystemtapBuildId, OfThisTestBinary) {
  // The toolchain links a build-id into executables (ld --build-id, Debian's default).
  const std::string id = elf_build_id("/proc/self/exe");
  EXPECT_FALSE(id.empty());
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
}

}  // namespace
}  // namespace tracebench::systemtap
