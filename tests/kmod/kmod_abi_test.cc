// ABI tests of the tracebench companion module.  They need /dev/tracebench,
// i.e. a kernel that loaded kmod/tracebench.ko: the VM lab runs them in the
// guest (tests/vm, ctest "vm.kmod_abi").  On a host without the module every
// test skips and says why.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tracers/common/tracefs_cxx.h"

#include "kmod/include/tracebench_kmod_abi.h"

namespace {

constexpr const char* kInstance = "tracebench_kmod_test";

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

int open_dev() { return open(TB_KMOD_DEVICE_PATH, O_RDWR | O_CLOEXEC); }

tb_kmod_fire fire_req(uint32_t id, uint64_t count, uint32_t payload = 0) {
  tb_kmod_fire f{};
  f.event_id = id;
  f.count = count;
  f.payload_size = payload;
  return f;
}

// Returns errno of the ioctl (0 on success).
int do_fire(int fd, tb_kmod_fire* f) { return ioctl(fd, TB_KMOD_IOC_FIRE, f) == 0 ? 0 : errno; }

uint64_t seq_next(int fd) {
  tb_kmod_info info{};
  if (ioctl(fd, TB_KMOD_IOC_INFO, &info) != 0) return ~0ull;
  return info.seq_next;
}

class KmodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = open_dev();
    if (fd_ < 0) {
      GTEST_SKIP() << TB_KMOD_DEVICE_PATH << ": " << strerror(errno)
                   << " (the module is not loaded; run these tests through `ctest -R vm.kmod` "
                      "which boots the VM lab)";
    }
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
  }
  int fd_ = -1;
};

TEST_F(KmodTest, DeviceIsRootOnly0600) {
  struct stat st {};
  ASSERT_EQ(stat(TB_KMOD_DEVICE_PATH, &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);
  // An unprivileged process cannot open it.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    int fd = open_dev();
    _exit(fd < 0 && (errno == EACCES || errno == EPERM) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "non-root open was not refused";
}

TEST_F(KmodTest, InfoReportsAbiAndEvents) {
  tb_kmod_info info;
  memset(&info, 0xAA, sizeof(info));  // anything the kernel leaves would show
  ASSERT_EQ(ioctl(fd_, TB_KMOD_IOC_INFO, &info), 0) << strerror(errno);
  EXPECT_EQ(info.abi_version, TB_KMOD_ABI_VERSION);
  EXPECT_EQ(info.n_events, 3u);
  EXPECT_EQ(info.max_payload, TB_KMOD_MAX_PAYLOAD);
  EXPECT_EQ(info.max_count, TB_KMOD_MAX_COUNT);
  EXPECT_EQ(info.max_batch, TB_KMOD_MAX_BATCH);
  EXPECT_EQ(info.max_samples, TB_KMOD_MAX_SAMPLES);
  EXPECT_GE(info.nr_syscalls, 300u);  // x86-64 has had more since 4.x
  EXPECT_LT(info.nr_syscalls, 1024u);
  EXPECT_STREQ(info.target_symbol, TB_KMOD_TARGET_SYMBOL);
  EXPECT_NE(info.kernel_release[0], '\0');
  EXPECT_TRUE(info.caps & TB_KMOD_CAP_PAYLOAD);
#if defined(__x86_64__)
  EXPECT_TRUE(info.caps & TB_KMOD_CAP_TSC);
  EXPECT_GT(info.tsc_khz, 0u);
#endif
  const char* names[] = {"tracebench:tracebench_fixed", "tracebench:tracebench_payload",
                         "function:tracebench_kmod_target"};
  for (uint32_t i = 0; i < TB_KMOD_MAX_EVENTS; i++) {
    const tb_kmod_event_desc& e = info.events[i];
    if (i < info.n_events) {
      EXPECT_EQ(e.id, i);
      EXPECT_STREQ(e.name, names[i]);
      EXPECT_EQ(e.reserved, 0u);
    }
    // Unused entries and the bytes after each name are zero, not 0xAA.
    size_t len = strnlen(e.name, sizeof(e.name));
    for (size_t b = len; b < sizeof(e.name); b++) ASSERT_EQ(e.name[b], 0) << "event " << i;
    if (i >= info.n_events) {
      EXPECT_EQ(e.id, 0u);
      EXPECT_EQ(e.kind, 0u);
    }
  }
  for (size_t b = strlen(info.target_symbol); b < sizeof(info.target_symbol); b++) ASSERT_EQ(info.target_symbol[b], 0);
  for (size_t b = strlen(info.kernel_release); b < sizeof(info.kernel_release); b++)
    ASSERT_EQ(info.kernel_release[b], 0);
}

// The VM lab always loads a module with BTF when the kernel has BTF (Kbuild
// makes it when the headers ship vmlinux; scripts/vm/build-kmod.sh otherwise
// generates it against the kernel image's BTF), so BPF fentry/fexit and
// tp_btf can attach to the module.
TEST_F(KmodTest, ModuleBtfInTheVmLab) {
  if (!getenv("TB_VM_GUEST")) GTEST_SKIP() << "only checked in the VM lab (TB_VM_GUEST unset)";
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
    std::printf("note: kernel without BTF: no module BTF expected\n");
    return;
  }
  EXPECT_EQ(access("/sys/kernel/btf/tracebench", R_OK), 0)
      << "module BTF not registered (TB_KMOD_PATH=" << (getenv("TB_KMOD_PATH") ? getenv("TB_KMOD_PATH") : "") << ")";
}

TEST_F(KmodTest, UnknownIoctlIsEnotty) {
  errno = 0;
  EXPECT_EQ(ioctl(fd_, _IO(TB_KMOD_IOC_MAGIC, 0x7f)), -1);
  EXPECT_EQ(errno, ENOTTY);
  // Same number with a different size (an old/new ABI) is unknown too.
  char big[sizeof(tb_kmod_fire) + 8] = {};
  errno = 0;
  EXPECT_EQ(ioctl(fd_, _IOWR(TB_KMOD_IOC_MAGIC, 0x02, decltype(big)), big), -1);
  EXPECT_EQ(errno, ENOTTY);
  errno = 0;
  EXPECT_EQ(ioctl(fd_, 0x5401 /* TCGETS */, big), -1);
  EXPECT_EQ(errno, ENOTTY);
}

TEST_F(KmodTest, BadFireInputIsEinvalAndChangesNothing) {
  const uint64_t before = seq_next(fd_);
  struct Case {
    const char* what;
    tb_kmod_fire f;
  };
  std::vector<Case> cases;
  cases.push_back({"unknown event id", fire_req(TB_KMOD_EV_COUNT, 1)});
  cases.push_back({"huge event id", fire_req(0xffffffffu, 1)});
  cases.push_back({"payload 4097", fire_req(TB_KMOD_EV_PAYLOAD, 1, TB_KMOD_MAX_PAYLOAD + 1)});
  cases.push_back({"payload 4 GiB-1", fire_req(TB_KMOD_EV_PAYLOAD, 1, 0xffffffffu)});
  cases.push_back({"count 0", fire_req(TB_KMOD_EV_FIXED, 0)});
  cases.push_back({"count max+1", fire_req(TB_KMOD_EV_FIXED, TB_KMOD_MAX_COUNT + 1)});
  cases.push_back({"count UINT64_MAX", fire_req(TB_KMOD_EV_FIXED, ~0ull)});
  {
    tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, 1);
    f.batch = TB_KMOD_MAX_BATCH + 1;
    cases.push_back({"batch too large", f});
  }
  {
    tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, 1);
    f.flags = 0x80000000u;
    cases.push_back({"unknown flag", f});
  }
  {
    tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, 1);
    f.reserved_in = 1;
    cases.push_back({"reserved_in set", f});
  }
  static uint64_t small[4];
  {
    tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, 10);
    f.samples_ptr = reinterpret_cast<uintptr_t>(small);
    f.samples_cap = 4;  // needs 10
    cases.push_back({"samples_cap too small", f});
  }
  {
    tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, TB_KMOD_MAX_SAMPLES + 1ull);
    f.samples_ptr = reinterpret_cast<uintptr_t>(small);
    f.samples_cap = 0xffffffffu;
    cases.push_back({"more samples than max_samples", f});
  }
  {
    // ceil(count / batch) overflow: count near max with batch 1 and a cap that fits u32.
    tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, TB_KMOD_MAX_COUNT);
    f.samples_ptr = reinterpret_cast<uintptr_t>(small);
    f.samples_cap = 0xffffffffu;
    cases.push_back({"samples count overflows cap", f});
  }
  for (auto& c : cases) {
    tb_kmod_fire copy = c.f;
    EXPECT_EQ(do_fire(fd_, &c.f), EINVAL) << c.what;
    // Rejected requests leave the caller's struct as it was.
    EXPECT_EQ(memcmp(&copy, &c.f, sizeof(copy)), 0) << c.what;
  }
  EXPECT_EQ(seq_next(fd_), before) << "a rejected FIRE consumed sequence numbers";
}

TEST_F(KmodTest, BadPointersAreEfault) {
  errno = 0;
  EXPECT_EQ(ioctl(fd_, TB_KMOD_IOC_FIRE, nullptr), -1);
  EXPECT_EQ(errno, EFAULT);
  errno = 0;
  EXPECT_EQ(ioctl(fd_, TB_KMOD_IOC_INFO, reinterpret_cast<void*>(16)), -1);
  EXPECT_EQ(errno, EFAULT);
  tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, 4);
  f.samples_ptr = 0xffffffffffff0000ull;  // kernel half
  f.samples_cap = 4;
  EXPECT_EQ(do_fire(fd_, &f), EFAULT);
}

TEST_F(KmodTest, SampleCountsAndTotals) {
  for (uint32_t batch : {1u, 7u, 64u, 4096u}) {
    const uint64_t count = 10000;
    const uint64_t expect_samples = (count + batch - 1) / batch;
    std::vector<uint64_t> samples(expect_samples + 3, 0xdeadbeefdeadbeefull);
    tb_kmod_fire f = fire_req(TB_KMOD_EV_TARGET, count, 16);
    f.batch = batch;
    f.samples_ptr = reinterpret_cast<uintptr_t>(samples.data());
    f.samples_cap = static_cast<uint32_t>(samples.size());
    ASSERT_EQ(do_fire(fd_, &f), 0) << "batch " << batch;
    EXPECT_EQ(f.fired, count);
    EXPECT_EQ(f.samples_written, expect_samples) << "batch " << batch;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < expect_samples; i++) {
      EXPECT_GT(samples[i], 0u);
      sum += samples[i];
    }
    EXPECT_EQ(sum, f.loop_cycles);
    EXPECT_GT(f.wall_ns, 0u);
    for (size_t i = expect_samples; i < samples.size(); i++)
      EXPECT_EQ(samples[i], 0xdeadbeefdeadbeefull) << "wrote past samples_written";
    for (uint64_t r : f.reserved_out) EXPECT_EQ(r, 0u);
  }
  // Without a samples buffer: no samples, totals still there; IRQs-off works.
  tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, 5000);
  f.flags = TB_KMOD_FIRE_IRQS_OFF;
  f.batch = 100;
  ASSERT_EQ(do_fire(fd_, &f), 0);
  EXPECT_EQ(f.samples_written, 0u);
  EXPECT_EQ(f.fired, 5000u);
  EXPECT_GT(f.loop_cycles, 0u);
}

TEST_F(KmodTest, SequenceNumbersAreDisjointAcrossThreads) {
  constexpr int kThreads = 4;
  constexpr uint64_t kCount = 20000;
  std::vector<uint64_t> firsts(kThreads);
  std::vector<int> errs(kThreads, -1);
  std::vector<std::thread> ts;
  const uint64_t before = seq_next(fd_);
  for (int t = 0; t < kThreads; t++) {
    ts.emplace_back([&, t] {
      tb_kmod_fire f = fire_req(TB_KMOD_EV_PAYLOAD, kCount, 64);
      errs[t] = do_fire(fd_, &f);
      firsts[t] = f.seq_first;
    });
  }
  for (auto& t : ts) t.join();
  for (int e : errs) ASSERT_EQ(e, 0);
  std::sort(firsts.begin(), firsts.end());
  for (int t = 1; t < kThreads; t++) EXPECT_GE(firsts[t], firsts[t - 1] + kCount);
  EXPECT_EQ(seq_next(fd_), before + kThreads * kCount);
}

// Records the module's tracepoints in a private tracefs instance and checks
// every event: count, sequence numbers, and the payload byte for byte.
class KmodTraceTest : public KmodTest {
 protected:
  void SetUp() override {
    KmodTest::SetUp();
    if (IsSkipped()) return;
    if (tracefs_instance_exists(kInstance)) {  // left by a killed run
      tracefs_instance* old = tracefs_instance_alloc(nullptr, kInstance);
      if (old) {
        tracefs_instance_destroy(old);
        tracefs_instance_free(old);
      }
    }
    inst_ = tracefs_instance_create(kInstance);
    ASSERT_NE(inst_, nullptr) << "tracefs_instance_create: " << strerror(errno);
    const char* systems[] = {"tracebench", nullptr};
    tep_ = tracefs_local_events_system(nullptr, systems);
    ASSERT_NE(tep_, nullptr);
    ASSERT_EQ(tracefs_instance_file_write(inst_, "buffer_size_kb", "8192"), 4);
  }
  void TearDown() override {
    if (inst_) {
      tracefs_event_disable(inst_, "tracebench", nullptr);
      tracefs_instance_destroy(inst_);
      tracefs_instance_free(inst_);
    }
    if (tep_) tep_free(tep_);
    KmodTest::TearDown();
  }
  struct Seen {
    uint64_t events = 0;
    uint64_t bad = 0;
    uint64_t bytes_checked = 0;
    uint64_t seq_min = ~0ull, seq_max = 0;
    uint32_t want_len = 0;
    std::string first_error;
  };
  static int on_event(tep_event* ev, tep_record* rec, int /*cpu*/, void* ctx) {
    auto* s = static_cast<Seen*>(ctx);
    if (strcmp(ev->system, "tracebench") != 0) return 0;
    unsigned long long seq = 0;
    tep_format_field* f = tep_find_field(ev, "seq");
    if (!f || tep_read_number_field(f, rec->data, &seq) != 0) {
      s->bad++;
      return 0;
    }
    s->events++;
    s->seq_min = std::min<uint64_t>(s->seq_min, seq);
    s->seq_max = std::max<uint64_t>(s->seq_max, seq);
    if (strcmp(ev->name, "tracebench_fixed") == 0) {
      unsigned long long value = 0;
      tep_read_number_field(tep_find_field(ev, "value"), rec->data, &value);
      if (value != (seq ^ TB_KMOD_FIXED_MAGIC)) s->bad++;
    } else if (strcmp(ev->name, "tracebench_payload") == 0) {
      int len = 0;
      auto* data = static_cast<const uint8_t*>(tep_get_field_raw(nullptr, ev, "data", rec, &len, 0));
      if (len != static_cast<int>(s->want_len) || (len > 0 && !data)) {
        if (s->first_error.empty())
          s->first_error = "len " + std::to_string(len) + " want " + std::to_string(s->want_len);
        s->bad++;
        return 0;
      }
      for (int i = 0; i < len; i++) {
        if (data[i] != tb_kmod_expected_byte(seq, static_cast<uint32_t>(i))) {
          if (s->first_error.empty()) s->first_error = "seq " + std::to_string(seq) + " byte " + std::to_string(i);
          s->bad++;
          return 0;
        }
      }
      s->bytes_checked += static_cast<uint64_t>(len);
    }
    return 0;
  }
  Seen record(const char* event, uint32_t id, uint64_t count, uint32_t payload, tb_kmod_fire* out) {
    Seen s;
    s.want_len = payload;
    EXPECT_EQ(tracefs_instance_file_write(inst_, "trace", "\n"), 1);  // clear
    EXPECT_EQ(tracefs_event_enable(inst_, "tracebench", event), 0);
    tb_kmod_fire f = fire_req(id, count, payload);
    f.batch = 256;
    EXPECT_EQ(do_fire(fd_, &f), 0);
    EXPECT_EQ(tracefs_event_disable(inst_, "tracebench", event), 0);
    tracefs_iterate_raw_events(tep_, inst_, nullptr, 0, on_event, &s);
    char* overrun = tracefs_instance_file_read(inst_, "per_cpu/cpu0/stats", nullptr);
    free(overrun);
    *out = f;
    return s;
  }
  tracefs_instance* inst_ = nullptr;
  tep_handle* tep_ = nullptr;
};

TEST_F(KmodTraceTest, FixedEventsAllRecorded) {
  tb_kmod_fire f{};
  Seen s = record("tracebench_fixed", TB_KMOD_EV_FIXED, 20000, 0, &f);
  EXPECT_EQ(f.fired, 20000u);
  EXPECT_EQ(s.bad, 0u);
  EXPECT_EQ(s.events, 20000u);
  EXPECT_EQ(s.seq_min, f.seq_first);
  EXPECT_EQ(s.seq_max, f.seq_first + 20000 - 1);
}

TEST_F(KmodTraceTest, PayloadPatternByteForByte) {
  // A 4096-byte payload does not fit a page-sized ftrace sub-buffer (the
  // default; larger sub-buffers, Linux 6.8+, are not readable by libtracefs
  // 1.6), so the byte-for-byte check stops at 4000 and 4096 is reported.
  std::vector<uint32_t> sizes = {0u, 1u, 7u, 8u, 9u, 32u, 100u, 1024u, 4000u};
  for (uint32_t size : sizes) {
    tb_kmod_fire f{};
    const uint64_t n = size >= 1024 ? 500 : 2000;
    Seen s = record("tracebench_payload", TB_KMOD_EV_PAYLOAD, n, size, &f);
    EXPECT_EQ(s.bad, 0u) << "size " << size << ": " << s.first_error;
    EXPECT_EQ(s.events, n) << "size " << size;
    EXPECT_EQ(s.bytes_checked, n * size);
    EXPECT_EQ(s.seq_min, f.seq_first);
    EXPECT_EQ(s.seq_max, f.seq_first + n - 1);
  }
  {
    // The tracepoint still fires with 4096 bytes (perf and BPF see it); ftrace
    // with page-sized sub-buffers cannot hold it: documented, not hidden.
    tb_kmod_fire f{};
    Seen s = record("tracebench_payload", TB_KMOD_EV_PAYLOAD, 10, 4096, &f);
    EXPECT_EQ(f.fired, 10u);
    EXPECT_EQ(s.bad, 0u);
    std::printf("note: ftrace recorded %llu of 10 4096-byte events (page-sized sub-buffers)\n",
                static_cast<unsigned long long>(s.events));
  }
}

TEST_F(KmodTest, FatalSignalStopsALongFire) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    tb_kmod_fire f = fire_req(TB_KMOD_EV_PAYLOAD, TB_KMOD_MAX_COUNT, 4096);
    do_fire(fd_, &f);  // hours at full size: only the signal ends it
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  pid_t r = 0;
  while ((r = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(r, pid) << "FIRE did not stop within 20 s of SIGKILL";
  EXPECT_TRUE(WIFSIGNALED(status));
}

// The delay probe (kmod/delay_probe.c): refused input, one owner, the
// calibration's figures, firings counted on tracebench_fixed only and only
// while enabled, and the known cost present in FIRE's own timing.
int delay_set(int fd, tb_kmod_delay_set* r) { return ioctl(fd, TB_KMOD_IOC_DELAY_SET, r) == 0 ? 0 : errno; }
int delay_enable(int fd, uint32_t on) {
  tb_kmod_delay_enable e{};
  e.on = on;
  return ioctl(fd, TB_KMOD_IOC_DELAY_ENABLE, &e) == 0 ? 0 : errno;
}
int delay_status(int fd, tb_kmod_delay_status* st) { return ioctl(fd, TB_KMOD_IOC_DELAY_STATUS, st) == 0 ? 0 : errno; }

TEST_F(KmodTest, DelayProbeRefusesBadInputAndHasOneOwner) {
  tb_kmod_info info{};
  ASSERT_EQ(ioctl(fd_, TB_KMOD_IOC_INFO, &info), 0);
  EXPECT_TRUE(info.caps & TB_KMOD_CAP_DELAY);
  tb_kmod_delay_status st{};
  EXPECT_EQ(delay_enable(fd_, 1), EINVAL) << "enabled before DELAY_SET";
  EXPECT_EQ(delay_status(fd_, &st), EINVAL);
  tb_kmod_delay_set r{};
  EXPECT_EQ(delay_set(fd_, &r), EINVAL) << "ns = 0";
  r.ns = TB_KMOD_DELAY_MAX_NS + 1;
  EXPECT_EQ(delay_set(fd_, &r), EINVAL);
  r = {};
  r.ns = 1000;
  r.reserved = 1;
  EXPECT_EQ(delay_set(fd_, &r), EINVAL);
  // Below the shortest firing: ERANGE, with what that costs.
  r = {};
  r.ns = 1;
  ASSERT_EQ(delay_set(fd_, &r), ERANGE);
  EXPECT_GT(r.least_mcycles, 0u);
  EXPECT_GT(r.tsc_hz, 0u);
  EXPECT_EQ(delay_enable(fd_, 1), EINVAL) << "a refused DELAY_SET owns nothing";
  r = {};
  r.ns = 2000;
  ASSERT_EQ(delay_set(fd_, &r), 0);
  Fd other(open_dev());
  ASSERT_GE(other.get(), 0);
  tb_kmod_delay_set r2{};
  r2.ns = 2000;
  EXPECT_EQ(delay_set(other.get(), &r2), EBUSY);
  EXPECT_EQ(delay_enable(other.get(), 1), EBUSY);
  EXPECT_EQ(delay_enable(fd_, 2), EINVAL);
  ASSERT_EQ(delay_enable(fd_, 1), 0);
  // Closing the owner's file detaches the probe and frees it for another.
  close(fd_);
  fd_ = -1;
  ASSERT_EQ(delay_set(other.get(), &r2), 0);
  tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, 100);
  ASSERT_EQ(do_fire(other.get(), &f), 0);
  ASSERT_EQ(delay_status(other.get(), &st), 0);
  EXPECT_EQ(st.firings, 0u) << "the closed owner's probe still fired";
  EXPECT_EQ(st.enabled, 0u);
}

TEST_F(KmodTest, DelayProbeSpinsOnTracedFixedEventsOnly) {
  constexpr uint32_t kNs = 2000;
  constexpr uint64_t kEvents = 2000;
  tb_kmod_delay_set r{};
  r.ns = kNs;
  ASSERT_EQ(delay_set(fd_, &r), 0);
  ASSERT_GT(r.tsc_hz, 0u);
  // The calibration hit its target: a firing costs N by the module's clock.
  const double target = kNs * 1e-9 * static_cast<double>(r.tsc_hz);
  EXPECT_NEAR(r.firing_mcycles / 1000.0, target, 0.1 * target);
  EXPECT_GT(r.spin_cycles, 0u);
  EXPECT_LT(r.spin_cycles, static_cast<uint64_t>(target));
  if (r.tsc_khz) { EXPECT_NEAR(static_cast<double>(r.tsc_hz), r.tsc_khz * 1e3, 0.02 * r.tsc_khz * 1e3); }

  tb_kmod_fire off = fire_req(TB_KMOD_EV_FIXED, kEvents);
  ASSERT_EQ(do_fire(fd_, &off), 0);
  tb_kmod_delay_status st{};
  ASSERT_EQ(delay_status(fd_, &st), 0);
  EXPECT_EQ(st.firings, 0u) << "the probe fired while disabled";

  ASSERT_EQ(delay_enable(fd_, 1), 0);
  tb_kmod_fire on = fire_req(TB_KMOD_EV_FIXED, kEvents);
  ASSERT_EQ(do_fire(fd_, &on), 0);
  tb_kmod_fire other = fire_req(TB_KMOD_EV_PAYLOAD, kEvents, 16);
  ASSERT_EQ(do_fire(fd_, &other), 0);
  other = fire_req(TB_KMOD_EV_TARGET, kEvents);
  ASSERT_EQ(do_fire(fd_, &other), 0);
  ASSERT_EQ(delay_status(fd_, &st), 0);
  EXPECT_EQ(st.enabled, 1u);
  ASSERT_EQ(delay_enable(fd_, 0), 0);
  tb_kmod_fire after = fire_req(TB_KMOD_EV_FIXED, kEvents);
  ASSERT_EQ(do_fire(fd_, &after), 0);

  tb_kmod_delay_status end{};
  ASSERT_EQ(delay_status(fd_, &end), 0);
  EXPECT_EQ(end.firings, kEvents) << "firings of tracebench_fixed while enabled, and only those";
  EXPECT_EQ(end.enabled, 0u);
  EXPECT_GE(end.spent_cycles, kEvents * r.spin_cycles);
  EXPECT_GE(end.min_spent_cycles, r.spin_cycles);
  EXPECT_LE(end.min_spent_cycles, end.spent_cycles / kEvents);
  EXPECT_GT(end.enabled_ns, 0u);
  // The enabled interval by both clocks: the rate the calibration measured.
  EXPECT_NEAR(static_cast<double>(end.enabled_cycles) / (end.enabled_ns * 1e-9), static_cast<double>(r.tsc_hz),
              0.02 * static_cast<double>(r.tsc_hz));
  // FIRE's own timing sees the cost on the traced FIRE only: at least 90% of
  // N per event more than the untraced ones.  Disturbance only adds (interrupts,
  // and in a TCG guest the host taking the emulator's CPU: one untraced FIRE
  // has been seen at 6x the other), so the quicker untraced FIRE is the floor.
  const double extra = (static_cast<double>(on.loop_cycles) - std::min(off.loop_cycles, after.loop_cycles)) / kEvents;
  EXPECT_GE(extra, 0.9 * target) << "traced FIRE " << on.loop_cycles << " cycles, untraced " << off.loop_cycles
                                 << " and " << after.loop_cycles;
}

// Last: unloading while a FIRE runs is refused (the open fd pins the module),
// and works once the fd is closed.  Reloads the module from TB_KMOD_PATH.
TEST_F(KmodTest, UnloadDuringFireIsRefused) {
  const char* path = getenv("TB_KMOD_PATH");
  if (!path) GTEST_SKIP() << "TB_KMOD_PATH is not set (path of tracebench.ko for the reload)";
  std::atomic<bool> started{false};
  int fire_err = -1;
  std::thread t([&] {
    tb_kmod_fire f = fire_req(TB_KMOD_EV_PAYLOAD, 3000000, 256);
    started = true;
    fire_err = do_fire(fd_, &f);
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  errno = 0;
  long r = syscall(SYS_delete_module, TB_KMOD_MODULE_NAME, O_NONBLOCK);
  int err = errno;
  t.join();
  EXPECT_EQ(fire_err, 0);
  EXPECT_EQ(r, -1);
  EXPECT_TRUE(err == EBUSY || err == EWOULDBLOCK) << strerror(err);
  close(fd_);
  fd_ = -1;
  ASSERT_EQ(syscall(SYS_delete_module, TB_KMOD_MODULE_NAME, O_NONBLOCK), 0) << strerror(errno);
  EXPECT_NE(access(TB_KMOD_DEVICE_PATH, F_OK), 0);
  int kfd = open(path, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(kfd, 0) << path;
  ASSERT_EQ(syscall(SYS_finit_module, kfd, "", 0), 0) << strerror(errno);
  close(kfd);
  Fd again(open_dev());
  ASSERT_GE(again.get(), 0);
  tb_kmod_fire f = fire_req(TB_KMOD_EV_FIXED, 10);
  EXPECT_EQ(do_fire(again.get(), &f), 0);
}

}  // namespace
