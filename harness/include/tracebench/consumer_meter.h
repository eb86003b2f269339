// The CPU time a tracer's consumer spends over one
// benchmark (ConsumerResult in the results schema).  Snapshots of the
// tracer's consumer tasks after attach() and before drain(), plus the
// measuring thread's own CPU time inside disable() and drain() for a tracer
// that reads there (Tracer::reads_on_caller).
#pragma once

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tracebench/clock.h"
#include "tracebench/results.h"
#include "tracebench/system.h"
#include "tracebench/tracer.h"

namespace tracebench {

class ConsumerMeter {
 public:
  // After attach(): the tasks the tracer names now and their CPU so far.
  void start(const Tracer& t) {
    wall0_ = std::chrono::steady_clock::now();
    for (const ConsumerTask& task : t.consumer_tasks()) {
      TaskCpu c;
      if (read_task_cpu(task.pid, task.tid, &c)) begin_[{task.pid, task.tid}] = c;
    }
    started_ = true;
  }

  // Before drain(): the tasks named now (one that was not there at start
  // was created since: all its time counts), read now and again after
  // drain(), which may stop a reader thread (its time up to here counts)
  // or make a daemon flush (counted too).  Returns notes on tasks that
  // could not be read.
  std::vector<std::string> before_drain(const Tracer& t) {
    std::vector<std::string> notes;
    if (!started_) return notes;
    for (const ConsumerTask& task : t.consumer_tasks()) {
      TaskCpu c;
      if (!read_task_cpu(task.pid, task.tid, &c)) {
        notes.push_back(fmt::format("consumer task {} (pid {} tid {}) ended before drain: its CPU time is not counted",
                                    task.role, task.pid, task.tid));
        continue;
      }
      end_.push_back({task, c});
    }
    return notes;
  }

  // Around each disable() and drain(): the calling thread's CPU time counts
  // when the tracer reads its records there.
  // Its user/kernel split comes from getrusage(RUSAGE_THREAD), whose split
  // rests on ticks too: counted in tick equivalents.
  void caller_begin(const Tracer& t) {
    caller_reads_ = t.reads_on_caller();
    if (!caller_reads_) return;
    caller0_ = thread_cpu_ns();
    getrusage(RUSAGE_THREAD, &ru0_);
  }
  void caller_end() {
    if (caller_reads_ && started_) {
      caller_ns_ += std::max(0.0, thread_cpu_ns() - caller0_);
      rusage ru{};
      getrusage(RUSAGE_THREAD, &ru);
      caller_user_us_ += std::max(0.0, us(ru.ru_utime) - us(ru0_.ru_utime));
      caller_sys_us_ += std::max(0.0, us(ru.ru_stime) - us(ru0_.ru_stime));
    }
    caller_reads_ = false;
  }

  // At each enable() of the tracer after start().
  void enabled() {
    if (started_) ++enables_;
  }

  // Around a traced block, outside the enabled window (reading /proc is a
  // read(2), an event for tracers of that syscall): the tasks' CPU inside
  // the traced blocks alone.
  void block_begin(const Tracer& t) {
    block0_.clear();
    if (!started_) return;
    for (const ConsumerTask& task : t.consumer_tasks()) {
      TaskCpu c;
      if (read_task_cpu(task.pid, task.tid, &c)) block0_[{task.pid, task.tid}] = c.ns;
    }
  }
  void block_end(const Tracer& t) {
    if (!started_) return;
    for (const ConsumerTask& task : t.consumer_tasks()) {
      TaskCpu c;
      if (!read_task_cpu(task.pid, task.tid, &c)) continue;
      auto it = block0_.find({task.pid, task.tid});  // a task begun in the block counts whole
      traced_ns_ += std::max(0.0, c.ns - (it == block0_.end() ? 0.0 : it->second));
      traced_read_ = true;
    }
  }

  void after_drain() {
    if (!started_) return;
    for (auto& [task, c] : end_) {
      TaskCpu later;
      if (read_task_cpu(task.pid, task.tid, &later)) c = later;
    }
  }

  // The result, or nothing when there was no consumer to speak of.
  std::optional<ConsumerResult> result(std::uint64_t records, std::int64_t wakeups) {
    if (!started_ || (end_.empty() && caller_ns_ <= 0)) return std::nullopt;
    ConsumerResult r;
    std::uint64_t user_ticks = 0, sys_ticks = 0;
    for (const auto& [task, c] : end_) {
      TaskCpu b;
      if (auto it = begin_.find({task.pid, task.tid}); it != begin_.end()) b = it->second;
      ConsumerTaskResult x;
      x.role = task.role;
      x.pid = task.pid;
      x.tid = task.tid;
      x.cpu_ns = std::max(0.0, c.ns - b.ns);
      r.cpu_ns += x.cpu_ns;
      user_ticks += c.user_ticks - std::min(c.user_ticks, b.user_ticks);
      sys_ticks += c.sys_ticks - std::min(c.sys_ticks, b.sys_ticks);
      r.precise = r.precise && c.precise;
      r.tasks.push_back(x);
    }
    r.caller_cpu_ns = caller_ns_;
    r.cpu_ns += caller_ns_;
    const double tick_us = 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
    const double user = static_cast<double>(user_ticks) + caller_user_us_ / tick_us;
    const double all = user + static_cast<double>(sys_ticks) + caller_sys_us_ / tick_us;
    r.ticks = static_cast<std::uint64_t>(std::llround(all));
    r.user_ticks = std::min(user, static_cast<double>(r.ticks));  // ticks are rounded
    if (r.ticks >= 20) r.user_fraction = std::clamp(user / all, 0.0, 1.0);
    r.records = records;
    if (wakeups >= 0) r.wakeups = static_cast<std::uint64_t>(wakeups);
    r.enables = enables_;
    if (traced_read_) r.traced_cpu_ns = traced_ns_;
    r.window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    return r;
  }

 private:
  static double us(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); }
  static double thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

  bool started_ = false;
  std::chrono::steady_clock::time_point wall0_;
  std::map<std::pair<int, int>, TaskCpu> begin_;
  std::vector<std::pair<ConsumerTask, TaskCpu>> end_;
  bool caller_reads_ = false;
  double caller0_ = 0, caller_ns_ = 0;
  std::uint64_t enables_ = 0;
  std::map<std::pair<int, int>, double> block0_;
  double traced_ns_ = 0;
  bool traced_read_ = false;
  rusage ru0_{};
  double caller_user_us_ = 0, caller_sys_us_ = 0;
};

}  // namespace tracebench
