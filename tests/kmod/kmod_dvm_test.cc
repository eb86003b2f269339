// The D-VM's DIF core inside the companion module: the module's verifier
// (TB_KMOD_IOC_DIF_VERIFY) is the user-space verifier compiled for the
// kernel, so both must give every DIF object the same verdict: the same
// rule at the same instruction, or both accept.  Checked on what the D
// compiler makes of the golden scripts (tests/dvm/golden), on seeded
// mutations of those objects, and on the libFuzzer corpus
// (tests/dvm/fuzz/corpus_vm); and bad requests are refused with a reason.
// DIF_EXEC runs an object once in the module; the same glue
// (kmod/dvm/dif_glue.cc) is compiled into this test, so the object can be run
// in user space in an identical world: both homes must give the same fault,
// the same value (where it is not an address) and the same string.
// Runs in the VM lab (ctest "vm.kmod_dvm"): the scripts and the corpus come
// in through $TB_DIF_GOLDEN and $TB_DIF_CORPUS.  Without the module every
// test skips and says why.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kmod/dvm/dif_glue.h"
#include "kmod/include/tracebench_kmod_abi.h"
#include "tests/dvm/fuzz/input.h"
#include "tracers/dvm/compiler/dcompile.h"
#include "kmod/dvm/core/vm.h"

// The core's host services for a run in user space: the same sources as the
// module's (the process's own memory for copyin, all or nothing).
extern "C" unsigned long long tb_dif_host_timestamp(void) { return 1; }
extern "C" unsigned long long tb_dif_host_vtimestamp(void) { return 1; }
extern "C" unsigned long long tb_dif_host_walltimestamp(void) { return 1; }
extern "C" unsigned long long tb_dif_host_cpu(void) { return 0; }
extern "C" int tb_dif_host_copyin(void* dst, unsigned long long src, unsigned long long len) {
  iovec local{dst, len}, remote{reinterpret_cast<void*>(src), len};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}
extern "C" unsigned int tb_dif_host_stack(unsigned long*, unsigned int) { return 0; }

namespace {

using namespace tbdvm;
namespace fs = std::filesystem;

// A DIF object as plain vectors (what a mutation changes).
struct Object {
  std::vector<Insn> insns;
  std::vector<uint64_t> ints;
  std::string strtab;
  bool returns_string = false;
  std::string origin;
};

struct Verdict {
  int err = 0;  // errno of the ioctl; 0 = accepted
  uint32_t pc = 0;
  std::string rule;
  bool operator==(const Verdict& o) const { return err == o.err && pc == o.pc && rule == o.rule; }
};

std::ostream& operator<<(std::ostream& os, const Verdict& v) {
  return os << (v.err ? "rejected (" + std::string(strerror(v.err)) + ") at pc " + std::to_string(v.pc) + ": " + v.rule
                      : std::string("accepted"));
}

Verdict user_verdict(const Object& o) {
  Program p;
  p.insns = o.insns.empty() ? nullptr : o.insns.data();
  p.ninsns = static_cast<uint32_t>(o.insns.size());
  p.inttab = o.ints.empty() ? nullptr : o.ints.data();
  p.nints = static_cast<uint32_t>(o.ints.size());
  p.strtab = o.strtab.empty() ? nullptr : o.strtab.data();
  p.strtab_len = static_cast<uint32_t>(o.strtab.size());
  p.returns_string = o.returns_string;
  static VerifyWork work;
  const VerifyError e = dif_verify(&p, &work);
  if (!e.rule) return {};
  return {EINVAL, e.pc, e.rule};
}

tb_kmod_dif_verify request(const Object& o) {
  tb_kmod_dif_verify r{};
  r.insns_ptr = reinterpret_cast<uintptr_t>(o.insns.data());
  r.n_insns = static_cast<uint32_t>(o.insns.size());
  r.ints_ptr = o.ints.empty() ? 0 : reinterpret_cast<uintptr_t>(o.ints.data());
  r.n_ints = static_cast<uint32_t>(o.ints.size());
  r.strtab_ptr = o.strtab.empty() ? 0 : reinterpret_cast<uintptr_t>(o.strtab.data());
  r.strtab_len = static_cast<uint32_t>(o.strtab.size());
  r.flags = o.returns_string ? TB_KMOD_DIF_RETURNS_STRING : 0;
  return r;
}

Verdict kernel_verdict(int fd, tb_kmod_dif_verify r) {
  std::memset(r.err_rule, 'x', sizeof r.err_rule);  // the module must write it
  if (ioctl(fd, TB_KMOD_IOC_DIF_VERIFY, &r) == 0) {
    EXPECT_EQ(r.err_rule[0], '\0') << "accepted, yet a rule came back";
    return {};
  }
  const int err = errno;
  EXPECT_NE(std::memchr(r.err_rule, '\0', sizeof r.err_rule), nullptr) << "rule not NUL-terminated";
  return {err, r.err_pc, std::string(r.err_rule, strnlen(r.err_rule, sizeof r.err_rule))};
}

Object from_dif(const DifObject& d, std::string origin) {
  return {d.insns, d.ints, d.strtab, d.returns_string, std::move(origin)};
}

// Every DIF object of every golden script: predicates, action values, keys.
std::vector<Object> golden_objects(std::string* why) {
  const char* dir = std::getenv("TB_DIF_GOLDEN");
  const fs::path root = dir ? dir : TB_SOURCE_DIR "/tests/dvm/golden";
  std::vector<Object> out;
  std::error_code ec;
  std::vector<fs::path> scripts;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.path().extension() == ".d") scripts.push_back(e.path());
  if (scripts.empty()) {
    *why = "no .d scripts in " + root.string() + " (set TB_DIF_GOLDEN)";
    return out;
  }
  std::sort(scripts.begin(), scripts.end());
  for (const auto& s : scripts) {
    std::ifstream in(s);
    std::stringstream text;
    text << in.rdbuf();
    CompileResult c = compile_d(text.str());
    if (!c.program) {
      *why = s.string() + ": " + c.error;
      return {};
    }
    const std::string name = s.filename().string();
    int k = 0;
    for (const auto& cl : c.program->clauses) {
      if (cl.predicate) out.push_back(from_dif(*cl.predicate, name + " predicate " + std::to_string(k)));
      for (const auto& a : cl.actions) {
        if (a.value) out.push_back(from_dif(*a.value, name + " action " + std::to_string(k)));
        for (const auto& key : a.keys) out.push_back(from_dif(*key, name + " key " + std::to_string(k)));
      }
      k++;
    }
  }
  return out;
}

// A corpus input as the libFuzzer target reads it.
bool from_fuzz_input(const std::string& bytes, Object* o) {
  fuzz::Input in;
  if (!fuzz::decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), &in)) return false;
  o->insns = std::move(in.insns);
  o->ints = std::move(in.ints);
  o->strtab = std::move(in.strtab);
  o->returns_string = in.returns_string();
  return true;
}

// One seeded mutation: an instruction field, the tables or the length.
Object mutate(const Object& o, std::mt19937_64& rng) {
  Object m = o;
  auto pick = [&](uint64_t n) { return static_cast<uint32_t>(rng() % n); };
  switch (pick(8)) {
    case 0:  // an opcode
      if (!m.insns.empty()) m.insns[pick(m.insns.size())].op = static_cast<uint8_t>(pick(kOpCount + 4));
      break;
    case 1: {  // a register
      if (m.insns.empty()) break;
      Insn& i = m.insns[pick(m.insns.size())];
      uint8_t* r[] = {&i.rd, &i.r1, &i.r2};
      *r[pick(3)] = static_cast<uint8_t>(pick(20));
      break;
    }
    case 2:  // an immediate: near its value or anywhere
      if (!m.insns.empty()) {
        Insn& i = m.insns[pick(m.insns.size())];
        i.imm = pick(2) ? i.imm + pick(9) - 4 : static_cast<uint32_t>(rng());
      }
      break;
    case 3:  // a shorter program
      if (!m.insns.empty()) m.insns.resize(pick(m.insns.size()));
      break;
    case 4:  // a shorter integer table
      if (!m.ints.empty()) m.ints.resize(pick(m.ints.size()));
      break;
    case 5:  // a shorter or unterminated string table
      if (!m.strtab.empty()) m.strtab.resize(pick(m.strtab.size()));
      break;
    case 6: m.returns_string = !m.returns_string; break;
    default: {  // a random byte of a random instruction
      if (m.insns.empty()) break;
      auto* b = reinterpret_cast<uint8_t*>(&m.insns[pick(m.insns.size())]);
      b[pick(8)] ^= static_cast<uint8_t>(1u << pick(8));
      break;
    }
  }
  m.origin = o.origin + " (mutated)";
  return m;
}

class KmodDif : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC);
    if (fd_ < 0)
      GTEST_SKIP() << TB_KMOD_DEVICE_PATH << ": " << strerror(errno)
                   << " (the companion module is not loaded: run in the VM lab, ctest -R vm.kmod_dvm)";
    tb_kmod_info info{};
    ASSERT_EQ(ioctl(fd_, TB_KMOD_IOC_INFO, &info), 0) << strerror(errno);
    ASSERT_EQ(info.abi_version, TB_KMOD_ABI_VERSION);
    ASSERT_TRUE(info.caps & TB_KMOD_CAP_DIF) << "the module has no DIF core";
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }
  int fd_ = -1;
};

TEST_F(KmodDif, CompiledScriptsAreAcceptedInBothHomes) {
  std::string why;
  const std::vector<Object> objs = golden_objects(&why);
  ASSERT_FALSE(objs.empty()) << why;
  for (const Object& o : objs) {
    EXPECT_EQ(user_verdict(o), Verdict{}) << o.origin;
    EXPECT_EQ(kernel_verdict(fd_, request(o)), Verdict{}) << o.origin;
  }
  std::printf("%zu DIF objects of the golden scripts accepted by both verifiers\n", objs.size());
}

// The bar the issue sets: the kernel's verdict is the user-space verifier's,
// rule and instruction, on thousands of near-miss objects.
TEST_F(KmodDif, MutatedObjectsGetTheSameVerdictInBothHomes) {
  std::string why;
  const std::vector<Object> objs = golden_objects(&why);
  ASSERT_FALSE(objs.empty()) << why;
  std::mt19937_64 rng(20261125);
  std::map<std::string, int> rules;
  int accepted = 0, checked = 0;
  for (int round = 0; round < 200; round++) {
    for (const Object& o : objs) {
      Object m = mutate(o, rng);
      if (round % 2) m = mutate(m, rng);  // two mutations at once, every other round
      const Verdict u = user_verdict(m), k = kernel_verdict(fd_, request(m));
      ASSERT_EQ(k, u) << m.origin << ", mutation " << checked;
      if (u.err)
        rules[u.rule]++;
      else
        accepted++;
      checked++;
    }
  }
  std::printf("%d mutated objects: %d accepted by both, the rest rejected by both with the same rule at the same pc:\n",
              checked, accepted);
  for (const auto& [rule, n] : rules) std::printf("  %6d  %s\n", n, rule.c_str());
  // The mutations must reach many rules, and not only rejections.
  EXPECT_GE(rules.size(), 8u);
  EXPECT_GT(accepted, 0);
}

TEST_F(KmodDif, FuzzCorpusGetsTheSameVerdictInBothHomes) {
  const char* dir = std::getenv("TB_DIF_CORPUS");
  const fs::path root = dir ? dir : TB_SOURCE_DIR "/tests/dvm/fuzz/corpus_vm";
  std::error_code ec;
  int n = 0;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    Object o;
    if (!from_fuzz_input(bytes.str(), &o)) continue;
    EXPECT_EQ(kernel_verdict(fd_, request(o)), user_verdict(o)) << e.path();
    n++;
  }
  ASSERT_GT(n, 0) << "no corpus inputs in " << root << " (set TB_DIF_CORPUS)";
}

TEST_F(KmodDif, BadRequestsAreRefusedWithAReason) {
  Object ok;
  ok.insns = {Insn{kOpRet, 0, 0, 0, 0}};
  ASSERT_EQ(kernel_verdict(fd_, request(ok)), Verdict{});

  tb_kmod_dif_verify r = request(ok);
  r.reserved_in = 1;
  EXPECT_EQ(kernel_verdict(fd_, r), (Verdict{EINVAL, 0, "unknown flag or non-zero reserved field"}));
  r = request(ok);
  r.flags = 0x80;
  EXPECT_EQ(kernel_verdict(fd_, r), (Verdict{EINVAL, 0, "unknown flag or non-zero reserved field"}));
  // Limits: the verifier's own length rule, and the module's table caps;
  // nothing is copied from the (bogus) pointers.
  r = request(ok);
  r.n_insns = TB_KMOD_DIF_MAX_INSNS + 1;
  EXPECT_EQ(kernel_verdict(fd_, r), (Verdict{EINVAL, TB_KMOD_DIF_MAX_INSNS, "program too long"}));
  r = request(ok);
  r.n_ints = TB_KMOD_DIF_MAX_INTS + 1;
  EXPECT_EQ(kernel_verdict(fd_, r), (Verdict{EINVAL, 0, "integer table too large"}));
  r = request(ok);
  r.strtab_len = TB_KMOD_DIF_MAX_STRTAB + 1;
  EXPECT_EQ(kernel_verdict(fd_, r), (Verdict{EINVAL, 0, "string table too large"}));
  // An empty program is the verifier's first rule.
  Object empty;
  EXPECT_EQ(kernel_verdict(fd_, request(empty)), (Verdict{EINVAL, 0, "empty program"}));
  // Bad pointers: EFAULT, nothing else.
  r = request(ok);
  r.insns_ptr = 8;
  EXPECT_EQ(ioctl(fd_, TB_KMOD_IOC_DIF_VERIFY, &r), -1);
  EXPECT_EQ(errno, EFAULT);
  EXPECT_EQ(ioctl(fd_, TB_KMOD_IOC_DIF_VERIFY, reinterpret_cast<void*>(8)), -1);
  EXPECT_EQ(errno, EFAULT);
  // Another struct size is another ioctl number: not this one.
  EXPECT_EQ(ioctl(fd_, _IOWR(TB_KMOD_IOC_MAGIC, 0x03, uint64_t), &r), -1);
  EXPECT_EQ(errno, ENOTTY);
}

// A program the size of the verifier's limit is verified (the work memory
// is the module's, ~24 KB, not the stack's).
TEST_F(KmodDif, LongestProgramIsVerified) {
  Object o;
  o.insns.assign(TB_KMOD_DIF_MAX_INSNS, Insn{kOpNop, 0, 0, 0, 0});
  o.insns.back() = Insn{kOpRet, 0, 0, 0, 0};
  EXPECT_EQ(kernel_verdict(fd_, request(o)), Verdict{});
  o.insns[100] = Insn{kOpBa, 0, 0, 0, 50};  // backward
  EXPECT_EQ(kernel_verdict(fd_, request(o)), user_verdict(o));
  EXPECT_EQ(user_verdict(o).rule, "backward branch");
}

// ---- DIF_EXEC ---------------------------------------------------------------

struct ExecRun {
  int err = 0;
  uint32_t fault = 0;
  uint64_t value = 0;
  std::string str;
};

// Values that differ between the homes by nature: time, CPU, and addresses
// (a string's, a scratch buffer's, a probe name's).
bool reads_time_or_cpu(const Object& o) {
  for (const Insn& i : o.insns)
    if (i.op == kOpLdgs &&
        (i.imm == kVarTimestamp || i.imm == kVarVtimestamp || i.imm == kVarWalltimestamp || i.imm == kVarCpu))
      return true;
  return false;
}
bool may_return_address(const Object& o) {
  if (o.returns_string) return true;
  for (const Insn& i : o.insns) {
    if (i.op == kOpSets) return true;
    if (i.op >= kOpLdgs && i.op <= kOpStta && (i.imm & kVarRef)) return true;
    if (i.op == kOpLdgs && i.imm >= kVarProbeprov && i.imm <= kVarCurthread) return true;
    if (i.op == kOpCall && i.imm != kSubrStrlen && i.imm != kSubrRand && i.imm != kSubrBcopy) return true;
  }
  return false;
}

std::string comm() {
  std::ifstream f("/proc/self/comm");
  std::string s;
  std::getline(f, s);
  return s;
}

ExecRun user_run(const Object& o, const std::vector<uint64_t>& args) {
  static std::vector<uint8_t> work;
  work.assign(tb_dif_exec_work_size() + 64, 0);
  void* w = work.data() + (64 - reinterpret_cast<uintptr_t>(work.data()) % 64) % 64;
  tb_dif_object d{
      o.insns.data(),  static_cast<unsigned>(o.insns.size()),  o.ints.data(),   static_cast<unsigned>(o.ints.size()),
      o.strtab.data(), static_cast<unsigned>(o.strtab.size()), o.returns_string};
  std::vector<unsigned long long> a(args.begin(), args.end());
  a.resize(TB_KMOD_DIF_MAX_ARGS);
  tb_dif_result r{};
  tb_dif_exec(&d, w, a.data(), getpid(), gettid(), comm().c_str(), &r);
  return {0, r.fault, r.value, r.str};
}

ExecRun kernel_run(int fd, const Object& o, const std::vector<uint64_t>& args) {
  tb_kmod_dif_exec x{};
  x.object = request(o);
  for (std::size_t i = 0; i < args.size() && i < TB_KMOD_DIF_MAX_ARGS; i++) x.args[i] = args[i];
  std::memset(x.result_str, 'x', sizeof x.result_str);
  if (ioctl(fd, TB_KMOD_IOC_DIF_EXEC, &x) != 0) return {errno, 0, 0, x.object.err_rule};
  EXPECT_EQ(x.result_len, strnlen(x.result_str, sizeof x.result_str));
  return {0, x.fault, x.result, std::string(x.result_str, strnlen(x.result_str, sizeof x.result_str))};
}

// Compares a run in each home; returns what differs ("" = nothing).
std::string compare(const Object& o, const ExecRun& u, const ExecRun& k) {
  std::ostringstream d;
  if (k.err)
    d << "the module refused it: " << strerror(k.err) << " " << k.str;
  else if (u.fault != k.fault)
    d << "fault " << fault_name(u.fault) << " in user space, " << fault_name(k.fault) << " in the module";
  else if (u.str != k.str)
    d << "string \"" << u.str << "\" in user space, \"" << k.str << "\" in the module";
  else if (!u.fault && !may_return_address(o) && u.value != k.value)
    d << "value " << u.value << " in user space, " << k.value << " in the module";
  return d.str();
}

const std::vector<std::vector<uint64_t>> kArgs = {
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {7, 3, 100, 0, 5, 1, 2, 3, 4, 9},
    {~0ull, 42, 1ull << 63, 3, 0x123456789abcdefull, 64, 8, 1, 0, 2},
};

TEST_F(KmodDif, ExpressionsGiveTheSameResultsInBothHomes) {
  // Arithmetic and its faults, comparisons, strings, variables of every
  // scope, subroutines, built-ins the homes share (pid, tid, execname,
  // probe names).
  const char* script = R"D(
tracebench:dif:exec:run
{
  trace(arg0 * 3 + arg1 - (arg2 >> 3));
  trace(arg2 / arg3);
  trace(arg4 % 7 + (arg5 << 4) ^ ~arg6);
  trace(arg0 == arg1 ? 10 : arg0 > arg1 ? 20 : 30);
  trace(arg0 > 5 && arg1 < 50 || arg9 == 2);
  trace(-arg2 + (arg1 & 0xff | arg7));
  trace(strlen("hello, kernel"));
  trace(strjoin("trace", "bench"));
  trace(strjoin(probeprov, probename));
  trace(execname);
  trace(pid);
  trace(tid);
  trace(probefunc);
  this->x = arg0 + arg1;
  trace(this->x * 2);
  self->t = arg1 + 1;
  trace(self->t * self->t);
  g = arg2 | 1;
  trace(g);
  a[arg0, "k"] = arg1 + 5;
  trace(a[arg0, "k"]);
  trace(a[arg1, "none"]);
  trace(rand() + 0);
  trace(copyinstr(arg0));
  trace(strlen(copyinstr(arg1)));
}
)D";
  CompileResult c = compile_d(script);
  ASSERT_TRUE(c.program) << c.error;
  std::vector<Object> objs;
  for (const auto& cl : c.program->clauses)
    for (const auto& a : cl.actions)
      if (a.value) objs.push_back(from_dif(*a.value, "expression " + std::to_string(objs.size())));
  ASSERT_GE(objs.size(), 20u);
  int faults = 0, strings = 0, values = 0;
  for (const auto& args : kArgs)
    for (const Object& o : objs) {
      const ExecRun u = user_run(o, args), k = kernel_run(fd_, o, args);
      EXPECT_EQ(compare(o, u, k), "") << o.origin << " with arg0 = " << args[0];
      faults += u.fault != 0;
      strings += !u.str.empty();
      values += !u.fault && !may_return_address(o);
    }
  std::printf("%zu runs: %d faulted, %d gave a string, %d a value compared exactly, the same in both homes\n",
              objs.size() * kArgs.size(), faults, strings, values);
  EXPECT_GT(faults, 0);
  EXPECT_GT(strings, 0);
  EXPECT_GT(values, 0);
}

// Whatever the verifiers accept of the mutations runs alike in both homes:
// the same faults (bad addresses, division by zero, full scratch, ...).
TEST_F(KmodDif, AcceptedMutationsRunAlikeInBothHomes) {
  std::string why;
  const std::vector<Object> objs = golden_objects(&why);
  ASSERT_FALSE(objs.empty()) << why;
  std::mt19937_64 rng(20261126);
  int ran = 0, faulted = 0;
  for (int round = 0; round < 200 && ran < 1500; round++)
    for (const Object& o : objs) {
      const Object m = mutate(mutate(o, rng), rng);
      if (user_verdict(m).err || reads_time_or_cpu(m)) continue;
      const auto& args = kArgs[ran % kArgs.size()];
      const ExecRun u = user_run(m, args), k = kernel_run(fd_, m, args);
      ASSERT_EQ(compare(m, u, k), "") << m.origin << ", run " << ran;
      faulted += u.fault != 0;
      ran++;
    }
  std::printf("%d accepted mutations ran alike in both homes (%d of them faulted)\n", ran, faulted);
  EXPECT_GT(ran, 100);
}

TEST_F(KmodDif, ExecOfARejectedObjectSaysWhy) {
  Object o;
  o.insns = {Insn{kOpAdd, 0, 1, 2, 0}, Insn{kOpRet, 0, 0, 0, 0}};
  tb_kmod_dif_exec x{};
  x.object = request(o);
  EXPECT_EQ(ioctl(fd_, TB_KMOD_IOC_DIF_EXEC, &x), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_STREQ(x.object.err_rule, "write to %r0");
  EXPECT_EQ(x.object.err_pc, 0u);
}

}  // namespace
