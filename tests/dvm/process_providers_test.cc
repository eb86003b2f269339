// The kernel home's providers of other processes, resolved in user space
// (no module needed): pid and usdt descriptions become uprobe targets
// (file, offset, semaphore, argument specs) that are where the functions
// and SDT notes really are in this process's mappings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "kmod/include/tracebench_kmod_abi.h"
#include "tests/common/usdt_site.h"
#include "tracers/dvm/runtime.h"

// ---------------------------------------------------------------------------
// pid: functions.
extern "C" __attribute__((noinline, used)) int tb_runtime_pid_target(int x) {
  asm volatile("" ::: "memory");
  return x + 1;
}

namespace pidprov {

// This process's mappings, as /proc/self/maps lists them.
struct Mapping {
  uint64_t lo, hi, offset;
  std::string path;
};
std::vector<Mapping> mappings() {
  std::vector<Mapping> out;
  std::FILE* f = std::fopen("/proc/self/maps", "r");
  char line[4096];
  while (f && std::fgets(line, sizeof line, f)) {
    unsigned long long lo, hi, o;
    char perms[8], file[4096] = "";
    if (std::sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi, perms, &o, file) >= 4)
      out.push_back({lo, hi, o, file});
  }
  if (f) std::fclose(f);
  return out;
}

// The file offset of `addr` in this process, or ~0; *path its file.
uint64_t file_offset_of(const void* addr, std::string* path) {
  const auto a = reinterpret_cast<uint64_t>(addr);
  for (const Mapping& m : mappings())
    if (a >= m.lo && a < m.hi) {
      *path = m.path;
      return a - m.lo + m.offset;
    }
  return ~0ull;
}

std::vector<tbdvm::ProbeInfo> made(const std::string& pattern, tbdvm::Error* e, tbdvm::Options o = {}) {
  std::vector<tbdvm::ProbeInfo> out;
  *e = tbdvm::kernel_pid_probes({pattern}, o, 100, &out);
  return out;
}

TEST(PidProvider, ResolvesFunctionsToWhereTheyAreMapped) {
  const std::string me = "pid" + std::to_string(getpid());
  tbdvm::Error e;
  std::vector<tbdvm::ProbeInfo> p = made(me + ":a.out:tb_runtime_pid_target:", &e);
  ASSERT_TRUE(e.ok()) << e.message;
  ASSERT_EQ(p.size(), 2u);
  std::string path;
  const uint64_t want = file_offset_of(reinterpret_cast<const void*>(&tb_runtime_pid_target), &path);
  char exe[4096] = "";
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  for (const auto& x : p) {
    EXPECT_EQ(x.provider, me);
    EXPECT_EQ(x.module, "a.out");
    EXPECT_EQ(x.function, "tb_runtime_pid_target");
    EXPECT_EQ(x.kernel_path, exe);
    EXPECT_EQ(x.kernel_offset, want);
    EXPECT_EQ(x.kernel_arg, static_cast<uint32_t>(getpid()));
  }
  EXPECT_EQ(p[0].id, 100u);
  EXPECT_EQ(p[0].name, "entry");
  EXPECT_EQ(p[1].name, "return");
  EXPECT_NE(p[0].kernel_kind, p[1].kernel_kind);
  // A library by its basename (globbed): libc's getpid where the loader put it.
  p = made(me + ":libc.so*:getpid:entry", &e);
  ASSERT_TRUE(e.ok()) << e.message;
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].module, "libc.so.6");
  const uint64_t libc_off = file_offset_of(reinterpret_cast<const void*>(&getpid), &path);
  EXPECT_EQ(p[0].kernel_offset, libc_off);
  char real[4096];
  ASSERT_TRUE(realpath(path.c_str(), real));
  char probed[4096];
  ASSERT_TRUE(realpath(p[0].kernel_path.c_str(), probed));
  EXPECT_STREQ(probed, real);
  // Other providers are not the pid provider's.
  EXPECT_TRUE(made("syscall::getpid:entry", &e).empty());
  EXPECT_TRUE(e.ok());
}

TEST(PidProvider, RefusesWhatIsNotThere) {
  const std::string me = "pid" + std::to_string(getpid());
  tbdvm::Error e;
  made("pid999999999:a.out:main:entry", &e);
  EXPECT_NE(e.message.find("no such process"), std::string::npos) << e.message;
  made("pid99999999999:a.out:main:entry", &e);
  EXPECT_NE(e.message.find("no such process"), std::string::npos) << e.message;
  made(me + ":libtb_nosuch.so:f:entry", &e);
  EXPECT_NE(e.message.find("maps no module libtb_nosuch.so"), std::string::npos) << e.message;
  // Every function of libc, entry and return: more uprobes than a session takes.
  made(me + ":libc.so.6::", &e);
  EXPECT_NE(e.message.find("more than 2048 pid probes"), std::string::npos) << e.message;
}

// -c: the command's process exists (held) before it runs its program, so
// a.out is the program it will run, and nothing else is mapped yet.
TEST(PidProvider, AHeldCommandsAOutIsTheProgramItWillRun) {
  tbdvm::Options o;
  o.target_pid = getpid();  // stands for the held child
  // Any ELF file with functions stands for the program (not this test's binary,
  // which /proc/<pid>/exe would give): libc's file.
  std::string libc;
  file_offset_of(reinterpret_cast<const void*>(&getpid), &libc);
  ASSERT_FALSE(libc.empty());
  o.target_exe = libc;
  const std::string me = "pid" + std::to_string(getpid());
  tbdvm::Error e;
  std::vector<tbdvm::ProbeInfo> p = made(me + ":a.out:getpid:entry", &e, o);
  ASSERT_TRUE(e.ok()) << e.message;
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].module, "a.out");
  EXPECT_EQ(p[0].kernel_path, libc);
  made(me + ":libc.so.6:getpid:entry", &e, o);
  EXPECT_NE(e.message.find("the -c command has not started, so a.out is its only module"), std::string::npos)
      << e.message;
  // A module field that a.out matches (empty, a glob) means a.out.
  p = made(me + "::getpid:entry", &e, o);
  ASSERT_TRUE(e.ok()) << e.message;
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].module, "a.out");
}

}  // namespace pidprov
// ---------------------------------------------------------------------------
// usdt: SDT notes (the site: usdt_site.h; notes without a semaphore:
// libstdc++'s, below).
namespace usdtprov {

std::vector<tbdvm::ProbeInfo> made(const std::string& pattern, tbdvm::Error* e, tbdvm::Options o = {}) {
  std::vector<tbdvm::ProbeInfo> out;
  *e = tbdvm::kernel_usdt_probes({pattern}, o, 100, &out);
  return out;
}

// The address file offset `off` of `path` is mapped at in this process, or 0.
uint64_t address_of(const std::string& path, uint64_t off) {
  for (const pidprov::Mapping& m : pidprov::mappings())
    if (m.path == path && off >= m.offset && off < m.offset + (m.hi - m.lo)) return m.lo + (off - m.offset);
  return 0;
}

tbdvm::UsdtArg parsed(const std::string& spec, std::string* error = nullptr) {
  auto symbol = [](const std::string& name, uint64_t* addr) {
    if (name != "tb_sym") return false;
    *addr = 0x2000;
    return true;
  };
  tbdvm::UsdtArg a;
  const tbdvm::Error e = tbdvm::parse_usdt_arg(spec, 0x1000, symbol, &a);
  if (error) *error = e.message;
  return a;
}

TEST(UsdtProvider, ParsesTheArgumentFormsCompilersWrite) {
  struct Want {
    const char* spec;
    uint8_t kind;
    int8_t size;
    uint8_t reg;
    int64_t value;
    uint8_t index = 0, scale = 0;
  };
  const Want wants[] = {
      {"-4@%edi", TB_KMOD_USDT_ARG_REG, -4, TB_KMOD_USDT_REG_DI, 0},
      {"8@%rax", TB_KMOD_USDT_ARG_REG, 8, TB_KMOD_USDT_REG_AX, 0},
      {"1@%r9b", TB_KMOD_USDT_ARG_REG, 1, TB_KMOD_USDT_REG_R9, 0},
      {"-2@%r15w", TB_KMOD_USDT_ARG_REG, -2, TB_KMOD_USDT_REG_R15, 0},
      {"-4@$-7", TB_KMOD_USDT_ARG_IMM, -4, 0, -7},
      {"8@$0x10", TB_KMOD_USDT_ARG_IMM, 8, 0, 16},
      {"-4@-20(%rbp)", TB_KMOD_USDT_ARG_MEM, -4, TB_KMOD_USDT_REG_BP, -20},
      {"8@(%rsi)", TB_KMOD_USDT_ARG_MEM, 8, TB_KMOD_USDT_REG_SI, 0},
      {"-4@112(%rsp)", TB_KMOD_USDT_ARG_MEM, -4, TB_KMOD_USDT_REG_SP, 112},
      // A global: its address relative to the probe's (pc 0x1000, tb_sym at 0x2000).
      {"8@tb_sym(%rip)", TB_KMOD_USDT_ARG_MEM, 8, TB_KMOD_USDT_REG_IP, 0x1000},
      {"8@tb_sym+8(%rip)", TB_KMOD_USDT_ARG_MEM, 8, TB_KMOD_USDT_REG_IP, 0x1008},
      {"-4@tb_sym-4(%rip)", TB_KMOD_USDT_ARG_MEM, -4, TB_KMOD_USDT_REG_IP, 0xffc},
      // base + index * scale + displacement
      {"8@(%rax,%rdx,8)", TB_KMOD_USDT_ARG_MEM, 8, TB_KMOD_USDT_REG_AX, 0, TB_KMOD_USDT_REG_DX, 8},
      {"-4@16(%rbx,%r12)", TB_KMOD_USDT_ARG_MEM, -4, TB_KMOD_USDT_REG_BX, 16, TB_KMOD_USDT_REG_R12, 1},
  };
  for (const Want& w : wants) {
    std::string error;
    const tbdvm::UsdtArg a = parsed(w.spec, &error);
    EXPECT_EQ(error, "") << w.spec;
    EXPECT_EQ(a.kind, w.kind) << w.spec;
    EXPECT_EQ(a.size, w.size) << w.spec;
    EXPECT_EQ(a.reg, w.reg) << w.spec;
    EXPECT_EQ(a.value, w.value) << w.spec;
    EXPECT_EQ(a.index, w.index) << w.spec;
    EXPECT_EQ(a.scale, w.scale) << w.spec;
  }
  const std::pair<const char*, const char*> refused[] = {
      {"3@%eax", "SIZE 1, 2, 4 or 8"},
      {"%eax", "not SIZE@OPERAND"},
      {"8@%ah", "not a general-purpose register"},
      {"8@%rip", "not a general-purpose register"},
      {"8@$x", "the immediate is not a number"},
      {"8@(,%rdx,8)", "a memory operand needs one"},
      {"8@(%rax,%rdx,3)", "scaled by 1, 2, 4 or 8"},
      {"8@(%rax,%rip,1)", "scaled by 1, 2, 4 or 8"},
      {"8@tb_sym(%rip,%rdx,8)", "%rip takes no index"},
      {"8@16(%rip)", "numeric displacement from %rip"},
      {"8@nosym(%rip)", "no symbol nosym"},
      {"8@4(%xmm0)", "the base is not a register"},
      {"8@4x(%rax)", "the displacement is not a number"},
      {"8@eax", "not a register, immediate or memory operand"},
  };
  for (const auto& [spec, why] : refused) {
    std::string error;
    parsed(spec, &error);
    EXPECT_NE(error.find(why), std::string::npos) << spec << ": " << error;
  }
}

TEST(UsdtProvider, FindsThisProcesssNotesWhereTheyAreMapped) {
  const std::string me = "tb_test_usdt" + std::to_string(getpid());
  tbdvm::Error e;
  std::vector<tbdvm::ProbeInfo> p = made(me + ":a.out:tb_test_usdt_target:", &e);
  ASSERT_TRUE(e.ok()) << e.message;
  ASSERT_EQ(p.size(), 2u);
  std::map<std::string, tbdvm::ProbeInfo> by_name;
  for (const auto& x : p) by_name.emplace(x.name, x);
  ASSERT_EQ(by_name.count("fired"), 1u);
  ASSERT_EQ(by_name.count("not-guarded"), 1u);  // not__guarded, as DTrace spells it
  char exe[4096] = "";
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof exe - 1), 0);
  const tbdvm::ProbeInfo& f = by_name.at("fired");
  EXPECT_EQ(f.provider, me);
  EXPECT_EQ(f.module, "a.out");
  EXPECT_EQ(f.function, "tb_test_usdt_target");
  EXPECT_EQ(f.kernel_kind, static_cast<uint32_t>(TB_KMOD_DVM_PROBE_USDT));
  EXPECT_EQ(f.kernel_arg, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(f.kernel_path, exe);
  // The site is the note's nop, inside the function, where this process runs it.
  std::string path;
  const uint64_t fn = pidprov::file_offset_of(reinterpret_cast<const void*>(&tb_test_usdt_target), &path);
  EXPECT_GT(f.kernel_offset, fn);
  EXPECT_LT(f.kernel_offset, fn + 256);
  std::ifstream file(exe, std::ios::binary);
  file.seekg(static_cast<std::streamoff>(f.kernel_offset));
  EXPECT_EQ(file.get(), 0x90);
  // The semaphore is this process's variable.
  EXPECT_EQ(f.kernel_ref_ctr,
            pidprov::file_offset_of(const_cast<unsigned short*>(&tb_test_usdt_fired_semaphore), &path));
  ASSERT_EQ(f.usdt_args.size(), 4u);
  EXPECT_EQ(f.usdt_args[0].size, -8);  // long
  EXPECT_EQ(f.usdt_args[1].kind, TB_KMOD_USDT_ARG_IMM);
  EXPECT_EQ(f.usdt_args[1].value, -7);
  EXPECT_EQ(f.usdt_args[1].size, -4);
  EXPECT_EQ(f.usdt_args[3].size, -4);
  // The global (a volatile in memory: the compiler names it, "-8@sym(%rip)"):
  // where a probe firing at the site would read it.
  ASSERT_EQ(f.usdt_args[2].kind, TB_KMOD_USDT_ARG_MEM);
  ASSERT_EQ(f.usdt_args[2].reg, TB_KMOD_USDT_REG_IP);
  const uint64_t site = address_of(exe, f.kernel_offset);
  ASSERT_NE(site, 0u);
  EXPECT_EQ(site + static_cast<uint64_t>(f.usdt_args[2].value), reinterpret_cast<uint64_t>(&tb_test_usdt_global));
  EXPECT_TRUE(by_name.at("not-guarded").usdt_args.empty());
  // The note written out with an indexed operand.
  p = made(me + ":a.out:tb_test_usdt_indexed:indexed", &e);
  ASSERT_TRUE(e.ok()) << e.message;
  ASSERT_EQ(p.size(), 1u);
  ASSERT_EQ(p[0].usdt_args.size(), 2u);
  EXPECT_EQ(p[0].usdt_args[0].kind, TB_KMOD_USDT_ARG_MEM);
  EXPECT_EQ(p[0].usdt_args[0].reg, TB_KMOD_USDT_REG_AX);
  EXPECT_EQ(p[0].usdt_args[0].index, TB_KMOD_USDT_REG_DX);
  EXPECT_EQ(p[0].usdt_args[0].scale, 4);
  EXPECT_EQ(p[0].usdt_args[0].value, 8);
  EXPECT_EQ(p[0].usdt_args[1].reg, TB_KMOD_USDT_REG_DX);
  // Globs over function and name; other providers are not usdt's.
  EXPECT_EQ(made(me + ":a.out:tb_test_usdt_*:fi*", &e).size(), 1u);
  EXPECT_TRUE(e.ok()) << e.message;
  EXPECT_TRUE(made("syscall::getpid:entry", &e).empty());
  EXPECT_TRUE(made("pid" + std::to_string(getpid()) + ":a.out::entry", &e).empty());
  EXPECT_TRUE(e.ok());
}

TEST(UsdtProvider, RefusesWhatIsNotThere) {
  const std::string pid = std::to_string(getpid());
  tbdvm::Error e;
  made("tb_test_usdt999999999:a.out::", &e);
  EXPECT_NE(e.message.find("no such process"), std::string::npos) << e.message;
  made("tb_nosuch_provider" + pid + ":::", &e);
  EXPECT_NE(e.message.find("has no USDT probe of provider tb_nosuch_provider"), std::string::npos) << e.message;
  made("tb_test_usdt" + pid + ":a.out::not__guarded", &e);
  EXPECT_NE(e.message.find("each \"__\" as \"-\": not-guarded"), std::string::npos) << e.message;
  made("tb_test_usdt" + pid + ":libtb_nosuch.so::", &e);
  EXPECT_NE(e.message.find("maps no module libtb_nosuch.so"), std::string::npos) << e.message;
  // A note whose argument this reader does not take is refused when named,
  // with the note, the argument and why; the file's other notes stay usable.
  made("tb_test_usdt" + pid + ":a.out::unreadable", &e);
  EXPECT_NE(e.message.find("SDT note tb_test_usdt:unreadable: arg0: '8@16(%rip)': a numeric displacement"),
            std::string::npos)
      << e.message;
  made("tb_test_usdt" + pid + ":a.out::", &e);
  EXPECT_NE(e.message.find("unreadable: arg0"), std::string::npos) << e.message;
  EXPECT_EQ(made("tb_test_usdt" + pid + ":a.out::fired", &e).size(), 1u);
  EXPECT_TRUE(e.ok()) << e.message;
}

// What binutils' readelf says a file's SDT notes are, by probe name as D
// spells it.
struct ReadelfNote {
  std::string provider;
  bool semaphore = false;
  size_t nargs = 0;
};
std::map<std::string, ReadelfNote> readelf_notes(const std::string& file) {
  std::map<std::string, ReadelfNote> notes;
  std::FILE* r = popen(("readelf -n --wide " + file + " 2>/dev/null").c_str(), "r");
  if (!r) return notes;
  ReadelfNote cur;
  std::string name;
  char line[8192];
  while (std::fgets(line, sizeof line, r)) {
    const std::string s(line);
    auto value = [&](const char* key) {
      const auto at = s.find(key);
      if (at == std::string::npos) return std::string();
      std::string v = s.substr(at + std::strlen(key));
      while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
      return v;
    };
    if (auto v = value("Provider: "); !v.empty()) cur = ReadelfNote{v};
    if (auto v = value("Name: "); !v.empty()) name = v;
    if (auto v = value("Semaphore: "); !v.empty()) cur.semaphore = std::strtoull(v.c_str(), nullptr, 16) != 0;
    if (s.find("Arguments:") != std::string::npos) {
      const std::string args = value("Arguments: ");
      for (char c : args) cur.nargs += c == '@';
      std::string d;
      for (size_t i = 0; i < name.size(); i++) d += name.compare(i, 2, "__") == 0 ? (i++, '-') : name[i];
      notes[d] = cur;
    }
  }
  pclose(r);
  return notes;
}

// Files this project did not build, read as readelf reads them: the same
// probes, argument counts and semaphores.  Debian's python (SDT probes with
// semaphores) stands in as a held -c command's program; libstdc++ (probes
// without) is a library this process maps.
TEST(UsdtProvider, AgreesWithReadelfOnOtherFiles) {
  char python[4096] = "", libstdcxx[4096] = "";
  std::string path;
  pidprov::file_offset_of(reinterpret_cast<const void*>(&std::terminate), &path);
  if (!realpath(path.c_str(), libstdcxx) || path.find("libstdc++") == std::string::npos) libstdcxx[0] = 0;
  if (!realpath("/usr/bin/python3", python)) python[0] = 0;
  size_t checked = 0;
  for (const char* file : {python, libstdcxx}) {
    if (!*file) continue;
    std::map<std::string, ReadelfNote> want = readelf_notes(file);
    if (want.empty()) continue;
    const std::string provider = want.begin()->second.provider;
    tbdvm::Options o;
    std::string module = "libstdc++.so*";
    if (file == python) {
      o.target_pid = getpid();  // stands for the held child
      o.target_exe = file;
      module = "a.out";
    }
    tbdvm::Error e;
    const std::vector<tbdvm::ProbeInfo> p = made(provider + std::to_string(getpid()) + ":" + module + "::", &e, o);
    ASSERT_TRUE(e.ok()) << file << ": " << e.message;
    size_t of_provider = 0;
    for (const auto& [n, note] : want) of_provider += note.provider == provider;
    EXPECT_EQ(p.size(), of_provider) << file;
    for (const auto& x : p) {
      ASSERT_EQ(want.count(x.name), 1u) << file << ": " << x.name;
      EXPECT_EQ(x.usdt_args.size(), std::min<size_t>(want[x.name].nargs, TB_KMOD_DVM_USDT_ARGS)) << x.name;
      EXPECT_EQ(x.kernel_ref_ctr != 0, want[x.name].semaphore) << x.name;
      char probed[4096];
      ASSERT_TRUE(realpath(x.kernel_path.c_str(), probed));
      EXPECT_STREQ(probed, file);
    }
    checked++;
    std::printf("%s: %zu notes of provider %s agree\n", file, p.size(), provider.c_str());
  }
  if (!checked) GTEST_SKIP() << "neither python3 nor libstdc++ has SDT notes here (or no readelf)";
}

}  // namespace usdtprov
