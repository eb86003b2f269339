// Table 5: the context switch (the paper's 8 µs on an idle system), the
// 2·R·csw term of the consumer's cost (eq. 6).  Measured as lmbench's
// lat_ctx measures it: a one-byte token passed through two pipes between
// two threads pinned to one CPU, so every hop is a write, a switch and a
// read; the baseline is the same write and read in one thread, with no
// switch.  A second cell puts the partner on another CPU: each hop then
// wakes a thread sleeping there (the IPI, the idle exit), what a consumer on
// a CPU of its own pays per wakeup.
#include "tracers/dvm/costs/costs.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>

#include <thread>

namespace tbdvm::costs {

namespace {

bool pin(pthread_t t, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(t, sizeof set, &set) == 0;
}

// A partner thread on `cpu` that sends every byte it reads back, until 'q'.
class Partner {
 public:
  explicit Partner(int cpu) {
    ok_ = pipe2(to_, O_CLOEXEC) == 0 && pipe2(from_, O_CLOEXEC) == 0;
    if (!ok_) return;
    thread_ = std::thread([this] {
      char c = 0;
      while (read(to_[0], &c, 1) == 1 && c != 'q')
        if (write(from_[1], &c, 1) != 1) break;
    });
    ok_ = pin(thread_.native_handle(), cpu);
  }
  ~Partner() {
    if (thread_.joinable()) {
      const char q = 'q';
      if (write(to_[1], &q, 1) == 1)
        thread_.join();
      else
        thread_.detach();
    }
    for (int fd : {to_[0], to_[1], from_[0], from_[1]})
      if (fd >= 0) close(fd);
  }
  bool ok() const { return ok_; }
  // n hops (n / 2 round trips): each a write, a switch (or wakeup), a read.
  void hops(uint32_t n) {
    char c = 'x';
    for (uint32_t i = 0; i < n / 2; i++)
      if (write(to_[1], &c, 1) != 1 || read(from_[0], &c, 1) != 1) return;
  }

 private:
  int to_[2] = {-1, -1}, from_[2] = {-1, -1};
  std::thread thread_;
  bool ok_ = false;
};

}  // namespace

void register_table5() {
  const long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (const bool same : {true, false}) {
    if (!same && ncpus < 2) continue;  // no other CPU to wake
    const std::string name = same ? "table5/switch_one_cpu" : "table5/wakeup_other_cpu";
    benchmark::RegisterBenchmark(name.c_str(), [same, name, ncpus](benchmark::State& s) {
      cpu_set_t old;
      pthread_getaffinity_np(pthread_self(), sizeof old, &old);
      const int me = sched_getcpu();
      const int partner_cpu = same ? me : static_cast<int>((me + 1) % ncpus);
      int self[2];
      if (me < 0 || !pin(pthread_self(), me) || pipe2(self, O_CLOEXEC) != 0) {
        s.SkipWithError("cannot pin this thread or make a pipe");
        return;
      }
      {
        Partner p(partner_cpu);
        if (!p.ok()) {
          s.SkipWithError(("cannot pin the partner thread to CPU " + std::to_string(partner_cpu)).c_str());
        } else {
          timed(
              s, name, 200, [&p](uint32_t n) { p.hops(n); },
              [&self](uint32_t n) {
                char c = 'x';
                for (uint32_t i = 0; i < n; i++)
                  if (write(self[1], &c, 1) != 1 || read(self[0], &c, 1) != 1) return;
              });
        }
      }
      close(self[0]);
      close(self[1]);
      pthread_setaffinity_np(pthread_self(), sizeof old, &old);
    })->Iterations(51);
  }
}

}  // namespace tbdvm::costs
