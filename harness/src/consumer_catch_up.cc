#include "tracebench/consumer_catch_up.h"

#include <thread>

#include <fmt/format.h>

#include "tracebench/system.h"

namespace tracebench {

char parse_stat_state(const std::string& stat) {
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 1] != ' ') return 0;
  return stat[close + 2];
}

namespace {

bool thread_busy(int pid, int tid) {
  const char state = parse_stat_state(read_file_trimmed(fmt::format("/proc/{}/task/{}/stat", pid, tid)));
  return state == 'R' || state == 'D';
}

}  // namespace

bool consumer_busy(const std::vector<ConsumerTask>& tasks) {
  for (const ConsumerTask& task : tasks) {
    if (task.spins) continue;
    if (task.tid != 0) {
      if (thread_busy(task.pid, task.tid)) return true;
      continue;
    }
    for (int tid : process_threads(task.pid))
      if (thread_busy(task.pid, tid)) return true;
  }
  return false;
}

void ConsumerCatchUp::before_traced_block(const Tracer& t) {
  const std::vector<ConsumerTask> tasks = t.consumer_tasks();
  if (tasks.empty() || !busy_(tasks)) return;
  ++tally_.waits;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + bound_;
  bool idle = false;
  while (!idle && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    idle = !busy_(tasks);
  }
  if (!idle) ++tally_.timeouts;
  tally_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tracebench
