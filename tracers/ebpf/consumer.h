// Drains the ring buffer or perf buffer of one loaded program on its own
// thread, pinned away from the measured CPU, and checks every record.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <mutex>
#include <thread>
#include <vector>

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
  // Records copy the workload's buffer (bpf_probe_read_user()) and are
  // checked against the suite's payload pattern, `payload_bytes` long; else
  // the program generates them and the consumer checks its pattern.
  bool workload_payload = false;
  std::size_t payload_bytes = 0;
  int cpu = 0;       // consumer thread's CPU (-1 = not pinned)
  int poll_ms = 50;  // epoll timeout; bounds how long stop() waits
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

  // Records consumed; every one is checked.
  std::uint64_t records() const { return records_.load(); }
  // Records whose bytes differ from what was expected (or too short to hold
  // their header).
  std::uint64_t bad_records() const { return bad_records_.load(); }
  // Copied records holding another length than payload_bytes, and the
  // length the first of them held.
  std::uint64_t truncated_records() const { return truncated_records_.load(); }
  std::uint64_t kept_bytes() const { return kept_bytes_.load(); }
  // Bytes of records that matched completely (workload bytes when copied).
  std::uint64_t payload_verified() const { return payload_verified_.load(); }
  std::string first_problem() const;
  std::uint64_t perf_lost() const { return perf_lost_.load(); }
  // The consumer thread's tid (0 before it runs) and the times the producer
  // woke it with records to read (epoll mode; -1 when spinning: it never
  // sleeps).  Reads after a poll timed out are not wakeups the producer paid
  // for; details() counts them as timeout_reads.
  int tid() const { return tid_.load(); }
  std::int64_t wakeups() const {
    return cfg_.mode == ConsumerMode::kEpoll ? static_cast<std::int64_t>(polls_with_data_.load()) : -1;
  }
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
  std::atomic<int> tid_{0};
  std::string pin_error_;
  std::atomic<std::uint64_t> records_{0}, bad_records_{0}, payload_verified_{0}, perf_lost_{0};
  std::atomic<std::uint64_t> truncated_records_{0}, kept_bytes_{0};
  std::vector<char> pattern_;  // the payload pattern, payload_bytes long
  mutable std::mutex problem_mu_;
  std::string first_problem_;
  void problem(const std::string& what);
  std::atomic<std::uint64_t> polls_{0}, polls_with_data_{0}, timeout_reads_{0};
};

}  // namespace tracebench::ebpf
