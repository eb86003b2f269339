#include "live_thread.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace tracebench::systemtap {

void LiveThread::start(void (*fn)()) {
  if (thread_.joinable()) return;
  fn_ = fn;
  quit_ = firing_ = false;
  tid_ = 0;
  thread_ = std::thread([this] { loop(); });
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return tid_ != 0; });
}

void LiveThread::loop() {
  std::unique_lock lock(mu_);
  tid_ = static_cast<pid_t>(::syscall(SYS_gettid));
  cv_.notify_all();
  for (;;) {
    cv_.wait(lock, [this] { return firing_ || quit_; });
    if (quit_) return;
    lock.unlock();
    fn_();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    lock.lock();
  }
}

Status LiveThread::fire_until(const std::function<bool()>& live, unsigned timeout_s) {
  if (!thread_.joinable()) return Status::error("systemtap: the liveness thread is not running");
  {
    std::lock_guard lock(mu_);
    firing_ = true;
  }
  cv_.notify_all();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool seen = false;
  while (!(seen = live()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  {
    std::lock_guard lock(mu_);
    firing_ = false;
  }
  if (seen) return Status::ok();
  return Status::error("systemtap: the script did not see its probe fire from thread " + std::to_string(tid_) +
                       " within " + std::to_string(timeout_s) + " s");
}

void LiveThread::stop() noexcept {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
  tid_ = 0;
}

}  // namespace tracebench::systemtap
