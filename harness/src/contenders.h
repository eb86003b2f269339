// Internal to the runner: helper threads for thread scaling.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tracebench/status.h"
#include "tracebench/system.h"
#include "tracebench/workload.h"

namespace tracebench {

// Helper threads that fire the same workload on other CPUs while a block
// runs, for thread scaling.  They only fire between start() and stop().
class Contenders {
 public:
  Status start_threads(const Workload& w, const WorkloadParams& base, int count, int measured_cpu) {
    const std::vector<int> cpus = online_cpus();
    const auto n = static_cast<int>(cpus.size());
    const int at = static_cast<int>(std::find(cpus.begin(), cpus.end(), measured_cpu) - cpus.begin());
    for (int i = 0; i < count; ++i) {
      auto slot = std::make_unique<Slot>();
      Slot* s = slot.get();
      slots_.push_back(std::move(slot));
      // The online CPUs after the measured one in turn, never the measured one while there is another.
      int cpu = cpus[static_cast<std::size_t>((at + 1 + i) % n)];
      if (cpu == measured_cpu && n > 1) cpu = cpus[static_cast<std::size_t>((at + 2 + i) % n)];
      WorkloadParams p = base;
      p.thread_index = i + 1;
      s->thread = std::thread([this, s, &w, p, cpu] { body(s, w, p, cpu); });
      std::unique_lock<std::mutex> lock(s->mu);
      s->cv.wait(lock, [s] { return s->ready; });
      if (!s->setup_status) return s->setup_status;
    }
    return Status::ok();
  }
  // Starts (on) or stops the firing, returning once every helper fires (or
  // has stopped): a block timed from here has every thread firing from its
  // start.  Waking a helper's idle CPU can take hundreds of microseconds on a
  // VM, longer than a block of a cheap workload, which then ran mostly alone.
  // A helper fires `batch` events a call, as the measured thread does a
  // sample: in calls of a few events a cheap workload's loop exit and the
  // call itself cost more than its events (a helper fired a function call
  // at a fifth of the measured thread's rate), and a stop waits at most one
  // batch.
  void run(bool on, std::uint64_t batch = 1) {
    for (auto& s : slots_) {
      s->batch.store(std::max<std::uint64_t>(batch, 1));
      s->go.store(on);
      s->go.notify_one();
    }
    for (auto& s : slots_) {
      while (s->running.load() != on) std::this_thread::yield();
    }
  }
  std::uint64_t take_fired() {
    std::uint64_t n = 0;
    for (auto& s : slots_) n += s->fired.exchange(0);
    return n;
  }
  void stop_threads() {
    for (auto& s : slots_) {
      s->quit.store(true);
      s->go.store(true);
      s->go.notify_one();
    }
    for (auto& s : slots_) {
      if (s->thread.joinable()) s->thread.join();
    }
    slots_.clear();
  }
  ~Contenders() { stop_threads(); }

 private:
  struct Slot {
    std::thread thread;
    std::mutex mu;
    std::condition_variable cv;
    bool ready = false;
    Status setup_status = Status::ok();
    std::atomic<bool> go{false}, quit{false}, running{false};
    std::atomic<std::uint64_t> fired{0}, batch{1};
  };
  static void body(Slot* s, const Workload& w, WorkloadParams p, int cpu) {
    std::unique_ptr<WorkloadState> st;
    Status status = pin_current_thread(cpu);
    if (status) status = w.setup(p, &st);
    {
      std::lock_guard<std::mutex> lock(s->mu);
      s->setup_status = status;
      s->ready = true;
    }
    s->cv.notify_one();
    if (!status) return;
    for (;;) {
      s->go.wait(false);
      if (s->quit.load()) break;
      s->running.store(true);
      // Counted here and published once: an atomic add every batch would
      // cost the helper more than a cheap workload's events do.
      std::uint64_t fired = 0;
      const std::uint64_t batch = s->batch.load();
      while (s->go.load(std::memory_order_relaxed)) {
        st->fire(batch);
        fired += batch;
      }
      s->fired.fetch_add(fired);
      s->running.store(false);
    }
  }
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace tracebench
