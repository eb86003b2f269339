// Drains the ring buffer or perf buffer of one loaded program on its own
// thread, pinned away from the measured CPU, and checks every record.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tracebench/status.h"

struct ring_buffer;
struct perf_buffer;

namespace tracebench::ebpf {

enum class BufferKind { kRingbuf, kPerfbuf };
enum class ConsumerMode { kEpoll, kSpin };

struct ConsumerConfig {
  BufferKind kind = BufferKind::kRingbuf;
  ConsumerMode mode = ConsumerMode::kEpoll;
  int map_fd = -1;
  std::size_t perf_pages = 64;  // per CPU, perfbuf only (power of two)
  std::uint32_t record_bytes = 64;
  int cpu = 0;                  // consumer thread's CPU (-1 = not pinned)
  int poll_ms = 50;             // epoll timeout; bounds how long stop() waits
};

class Consumer {
 public:
  Consumer() = default;
  ~Consumer() { stop(); }
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  Status start(const ConsumerConfig& cfg);
  // Stops the thread, then consumes what is left on the calling thread.
  Status drain();
  // Restarts the thread after drain() (another enable() after a drain).
  void resume();
  // Stops the thread and frees the buffer manager; safe to call repeatedly.
  void stop() noexcept;

  std::uint64_t records() const { return records_.load(); }
  std::uint64_t bad_records() const { return bad_records_.load(); }
  std::uint64_t payload_verified() const { return payload_verified_.load(); }
  std::uint64_t perf_lost() const { return perf_lost_.load(); }
  nlohmann::json details() const;

  // Callbacks (public for the C trampolines).
  void on_record(const void* data, std::size_t size);
  void on_lost(std::uint64_t n) { perf_lost_ += n; }

 private:
  void run();
  int consume_once(bool block);

  ConsumerConfig cfg_;
  ring_buffer* rb_ = nullptr;
  perf_buffer* pb_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> ready_{false};
  std::string pin_error_;
  std::atomic<std::uint64_t> records_{0}, bad_records_{0}, payload_verified_{0}, perf_lost_{0};
  std::atomic<std::uint64_t> polls_{0}, polls_with_data_{0};
};

}  // namespace tracebench::ebpf
