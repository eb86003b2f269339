#include "consumer.h"

#include <bpf/libbpf.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bpf/tb_shared.h"
#include "tracebench/payload_pattern.h"
#include "libbpf_log.h"

namespace tracebench::ebpf {
namespace {

int ringbuf_cb(void* ctx, void* data, std::size_t size) {
  static_cast<Consumer*>(ctx)->on_record(data, size);
  return 0;
}
void perf_sample_cb(void* ctx, int /*cpu*/, void* data, __u32 size) {
  static_cast<Consumer*>(ctx)->on_record(data, size);
}
void perf_lost_cb(void* ctx, int /*cpu*/, __u64 n) { static_cast<Consumer*>(ctx)->on_lost(n); }

}  // namespace

Status Consumer::start(const ConsumerConfig& cfg) {
  stop();
  cfg_ = cfg;
  records_ = bad_records_ = payload_verified_ = perf_lost_ = polls_ = polls_with_data_ = timeout_reads_ = 0;
  truncated_records_ = kept_bytes_ = 0;
  pattern_ = cfg.workload_payload ? payload_pattern(cfg.payload_bytes) : std::vector<char>{};
  {
    std::lock_guard<std::mutex> lock(problem_mu_);
    first_problem_.clear();
  }
  clear_libbpf_messages();
  if (cfg.kind == BufferKind::kRingbuf) {
    rb_ = ring_buffer__new(cfg.map_fd, ringbuf_cb, this, nullptr);
    if (!rb_) return Status::error("ring_buffer__new: " + std::string(std::strerror(errno)) + " " + libbpf_messages());
  } else {
    pb_ = perf_buffer__new(cfg.map_fd, cfg.perf_pages, perf_sample_cb, perf_lost_cb, this, nullptr);
    if (!pb_) return Status::error("perf_buffer__new: " + std::string(std::strerror(errno)) + " " + libbpf_messages());
  }
  stop_ = false;
  ready_ = false;
  thread_ = std::thread([this] { run(); });
  // The thread pins itself before it consumes anything.
  while (!ready_.load()) std::this_thread::yield();
  return Status::ok();
}

int Consumer::consume_once(bool block) {
  if (rb_) return block ? ring_buffer__poll(rb_, cfg_.poll_ms) : ring_buffer__consume(rb_);
  return block ? perf_buffer__poll(pb_, cfg_.poll_ms) : perf_buffer__consume(pb_);
}

void Consumer::run() {
  if (cfg_.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cfg_.cpu, &set);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc != 0) pin_error_ = "pinning the consumer to CPU " + std::to_string(cfg_.cpu) + ": " + std::strerror(rc);
  }
  tid_ = static_cast<int>(gettid());
  ready_ = true;
  const bool block = cfg_.mode == ConsumerMode::kEpoll;
  while (!stop_.load(std::memory_order_relaxed)) {
    int n = consume_once(block);
    if (block) {
      polls_.fetch_add(1, std::memory_order_relaxed);
      if (n > 0) polls_with_data_.fetch_add(1, std::memory_order_relaxed);
      // A timeout: poll consumes only what woke it, and records submitted
      // without a wakeup (BPF_RB_NO_WAKEUP, perf's wakeup_events) wake
      // nothing, so read what is there.  Counted apart: the timer woke the
      // reader, not the producer.
      if (n == 0 && !stop_.load(std::memory_order_relaxed) && consume_once(false) > 0)
        timeout_reads_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

Status Consumer::drain() {
  if (!rb_ && !pb_) return Status::ok();
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  // Everything was committed before disable() returned; consume until empty.
  for (int i = 0; i < 1000000; i++) {
    std::uint64_t before = records_.load();
    int n = consume_once(false);
    if (n < 0 && n != -EINTR)
      return Status::error("consuming the " + std::string(rb_ ? "ring buffer" : "perf buffer") +
                           " failed: " + std::strerror(-n));
    if (records_.load() == before) break;
  }
  return Status::ok();
}

void Consumer::resume() {
  if ((!rb_ && !pb_) || thread_.joinable()) return;
  stop_ = false;
  ready_ = false;
  thread_ = std::thread([this] { run(); });
  while (!ready_.load()) std::this_thread::yield();
}

void Consumer::stop() noexcept {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (rb_) ring_buffer__free(rb_);
  if (pb_) perf_buffer__free(pb_);
  rb_ = nullptr;
  pb_ = nullptr;
}

void Consumer::problem(const std::string& what) {
  std::lock_guard<std::mutex> lock(problem_mu_);
  if (first_problem_.empty()) first_problem_ = "record " + std::to_string(records_.load()) + ": " + what;
}

std::string Consumer::first_problem() const {
  std::lock_guard<std::mutex> lock(problem_mu_);
  return first_problem_;
}

void Consumer::on_record(const void* data, std::size_t size) {
  records_.fetch_add(1, std::memory_order_relaxed);
  // perf samples are padded to 8 bytes after a u32 size, so size may exceed
  // the record; the record itself must be exactly what the program wrote.
  const std::uint32_t n = cfg_.record_bytes;
  const auto* p = static_cast<const unsigned char*>(data);
  if (size < n || n < 8) {
    bad_records_.fetch_add(1, std::memory_order_relaxed);
    problem(std::to_string(size) + " bytes, shorter than the " + std::to_string(n) + "-byte record");
    return;
  }
  std::uint64_t w0;
  std::memcpy(&w0, p, 8);
  const std::uint64_t tid = w0 >> 32;
  const std::uint32_t len = static_cast<std::uint32_t>(w0 & 0xffffffffu);
  if (cfg_.workload_payload) {
    // Header, then the bytes bpf_probe_read_user() copied from the
    // workload's buffer: `len` of them.
    if (len > n - 8) {
      bad_records_.fetch_add(1, std::memory_order_relaxed);
      problem("header claims " + std::to_string(len) + " bytes in a " + std::to_string(n) + "-byte record");
    } else if (len != cfg_.payload_bytes) {
      if (truncated_records_.fetch_add(1, std::memory_order_relaxed) == 0) kept_bytes_ = len;
      problem("copied " + std::to_string(len) + " of the " + std::to_string(cfg_.payload_bytes) +
              " bytes the workload passed");
    } else if (std::memcmp(p + 8, pattern_.data(), len) == 0) {
      payload_verified_.fetch_add(len, std::memory_order_relaxed);
    } else {
      bad_records_.fetch_add(1, std::memory_order_relaxed);
      std::size_t i = 0;
      while (i < len && p[8 + i] == static_cast<unsigned char>(pattern_[i])) ++i;
      problem("byte " + std::to_string(i) + " of the copied payload differs from the workload's pattern");
    }
    return;
  }
  // Generated by the program: every word is known.
  bool ok = len == n;
  for (std::uint32_t i = 1; ok && i < n / 8; i++) {
    std::uint64_t w;
    std::memcpy(&w, p + 8 * i, 8);
    ok = w == ((tid * TB_PATTERN_MUL) ^ i);
  }
  if (ok) {
    payload_verified_.fetch_add(n, std::memory_order_relaxed);
  } else {
    bad_records_.fetch_add(1, std::memory_order_relaxed);
    problem("the record the program wrote came back corrupted");
  }
}

nlohmann::json Consumer::details() const {
  nlohmann::json j;
  j["buffer"] = cfg_.kind == BufferKind::kRingbuf ? "ringbuf" : "perfbuf";
  j["mode"] = cfg_.mode == ConsumerMode::kEpoll ? "epoll" : "spin";
  j["cpu"] = cfg_.cpu;
  if (!pin_error_.empty()) j["pin_error"] = pin_error_;
  j["records_consumed"] = records_.load();
  j["records"] = cfg_.workload_payload ? "copied from the workload (bpf_probe_read_user)" : "generated by the program";
  j["bad_records"] = bad_records_.load();
  if (cfg_.workload_payload) j["truncated_records"] = truncated_records_.load();
  j["bytes_verified"] = payload_verified_.load();
  if (cfg_.kind == BufferKind::kPerfbuf) {
    j["perf_pages_per_cpu"] = cfg_.perf_pages;
    j["perf_lost_reported"] = perf_lost_.load();
  }
  if (cfg_.mode == ConsumerMode::kEpoll) {
    j["poll_timeout_ms"] = cfg_.poll_ms;
    j["polls"] = polls_.load();
    j["polls_with_data"] = polls_with_data_.load();
    j["timeout_reads"] = timeout_reads_.load();
  }
  return j;
}

}  // namespace tracebench::ebpf
