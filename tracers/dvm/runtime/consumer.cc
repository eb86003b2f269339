// A session's consumer: the thread that switches the buffers at the
// switch rate and snapshots the aggregations at the aggregation rate, and a
// pass of it (both homes' buffers; records.cc prints what it reads).
#include "tracers/dvm/runtime/internal.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <x86intrin.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <string>

namespace tbdvm {

void Session::start_consumer(std::FILE* out) {
  out_ = out;
  if (consumer_.joinable() || !enabled_) return;
  stop_ = false;
  consumer_ = std::thread([this] { consumer_loop(); });
  // Its tid is known (and its pin taken) once this returns: a caller that
  // reads its CPU time from now on misses none of it.
  while (consumer_tid_.load() == 0) std::this_thread::yield();
}

void Session::consumer_loop() {
  // The consumer never takes the profile signal.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPROF);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Before its tid is published: start_consumer() returns after both.
  if (opt_.consumer_cpu >= 0) {
    int rc = EINVAL;  // past the affinity mask
    if (opt_.consumer_cpu < CPU_SETSIZE) {
      cpu_set_t cpus;
      CPU_ZERO(&cpus);
      CPU_SET(opt_.consumer_cpu, &cpus);
      rc = pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);
    }
    if (rc != 0)
      pin_error_ = "pinning the consumer to CPU " + std::to_string(opt_.consumer_cpu) + ": " + std::strerror(rc);
  }
  consumer_tid_ = static_cast<int>(gettid());
  auto period = std::chrono::duration<double>(1.0 / opt_.switchrate_hz);
  const auto agg_period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(1.0 / opt_.aggrate_hz));
  auto last_aggs = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lk(stop_mu_);
  while (!stop_) {
    stop_cv_.wait_for(lk, std::chrono::duration_cast<std::chrono::microseconds>(period));
    if (stop_) break;
    lk.unlock();
    const auto now = std::chrono::steady_clock::now();
    const bool aggs = now - last_aggs >= agg_period;
    if (aggs) last_aggs = now;
    consume_pass(aggs);
    lk.lock();
  }
}

void Session::consume_once() { consume_pass(true); }

void Session::consume_pass(bool snapshot_aggregations) {
  std::lock_guard<std::mutex> g(consume_mu_);
  if (kernel_) {
    cstats_.passes++;
    uint64_t t0 = __rdtsc();
    Counters c;
    bool exit_requested = false;
    if (kernel_->status(&c, &exit_requested) && exit_requested)
      state_.exit_requested.store(true, std::memory_order_relaxed);
    cstats_.status_cycles += __rdtsc() - t0;
    for (uint32_t i = 0; i < kernel_->ncpus(); i++) {
      uint64_t a = __rdtsc();
      // Switched on that CPU by the module, the inactive half copied out.
      uint32_t len = kernel_->snap(false, i, buf_copy_.data(), static_cast<uint32_t>(buf_copy_.size()), nullptr);
      uint64_t b = __rdtsc();
      cstats_.buf_switch_cycles += b - a;
      cstats_.bytes_copied += len;
      chew(buf_copy_.data(), len);
      cstats_.chew_cycles += __rdtsc() - b;
    }
    if (snapshot_aggregations) snapshot_aggs();
    return;
  }
  if (!state_.slots) return;
  cstats_.passes++;
  uint64_t t0 = __rdtsc();
  Counters c = counters();  // status snapshot
  (void)c;
  uint64_t t1 = __rdtsc();
  cstats_.status_cycles += t1 - t0;
  for (uint32_t i = 0; i < state_.nslots; i++) {
    const uint8_t* data;
    uint32_t len;
    uint64_t a = __rdtsc();
    // The yielding wait: this thread is not pinned and may have preempted
    // the lock's holder on its CPU (a spin would last the whole time slice).
    lock_slot(state_.slots[i].lock);
    dvm_buffer_switch_locked(&state_, i, &data, &len);
    state_.slots[i].lock->unlock();
    uint64_t b = __rdtsc();
    cstats_.buf_switch_cycles += b - a;
    cstats_.bytes_copied += len;
    chew(data, len);
    cstats_.chew_cycles += __rdtsc() - b;
  }
  if (snapshot_aggregations) snapshot_aggs();
}

void Session::snapshot_aggs() {
  cstats_.agg_snapshots++;
  agg_merged_.clear();
  const uint32_t n = kernel_ ? kernel_->ncpus() : state_.nslots;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t a = __rdtsc();
    uint32_t used;
    if (kernel_) {
      used = kernel_->snap(true, i, agg_copy_.data(), static_cast<uint32_t>(agg_copy_.size()), nullptr);
    } else {
      Slot& s = state_.slots[i];
      lock_slot(s.lock);
      used = s.agg.used;
      std::memcpy(agg_copy_.data(), s.agg.arena, used);
      s.lock->unlock();
    }
    uint64_t b = __rdtsc();
    cstats_.agg_snapshot_cycles += b - a;
    cstats_.bytes_copied += used;
    cstats_.agg_bytes_copied += used;
    merge_aggs(agg_copy_.data(), used);
    cstats_.agg_rebuild_cycles += __rdtsc() - b;
  }
}

void Session::reset_agg(uint32_t agg_id, const std::string* key, bool unlink) {
  const uint16_t kind = prog_->aggs[agg_id].kind;
  if (kernel_) {
    Error e = kernel_->agg_reset(agg_id, key, unlink);
    if (!e.ok() && out_ && err_)
      std::fprintf(err_, "dtrace: %s() failed: %s\n", unlink ? "trunc" : "clear", e.message.c_str());
    return;
  }
  for (uint32_t i = 0; i < state_.nslots; i++) {
    Slot& s = state_.slots[i];
    lock_slot(s.lock);
    dvm_agg_reset(&s.agg, agg_id, kind, key ? reinterpret_cast<const uint8_t*>(key->data()) : nullptr,
                  key ? static_cast<uint32_t>(key->size()) : 0, unlink);
    s.lock->unlock();
  }
}

// Rebuild: merges one slot's aggregation entries into the consumer's view.
void Session::merge_aggs(const uint8_t* arena, uint32_t used) {
  for (uint32_t off = 8; off + sizeof(AggEntry) <= used;) {
    auto* e = reinterpret_cast<const AggEntry*>(arena + off);
    const uint64_t bytes = sizeof(AggEntry) + e->keylen + e->nvals * 8ull;
    if (bytes > used - off) break;  // a torn copy: nothing past it is whole
    if (e->agg_id == kAggDead) {    // trunc() took it out
      off += static_cast<uint32_t>(bytes);
      continue;
    }
    std::string key(reinterpret_cast<const char*>(e + 1), e->keylen);
    const int64_t* v = agg_values(e);
    auto it = agg_merged_.find({e->agg_id, key});
    if (it == agg_merged_.end()) {
      agg_merged_.emplace(std::make_pair(e->agg_id, key), std::vector<int64_t>(v, v + e->nvals));
    } else {
      AggKind kind = e->agg_id < prog_->aggs.size() ? prog_->aggs[e->agg_id].kind : kAggSum;
      auto& dst = it->second;
      if (kind == kAggStddev && e->nvals == 4 && dst.size() == 4) {
        // count and sum add; the 128-bit sum of squares adds with its carry.
        const uint64_t lo = static_cast<uint64_t>(dst[2]) + static_cast<uint64_t>(v[2]);
        const uint64_t carry = lo < static_cast<uint64_t>(dst[2]);
        dst[0] = static_cast<int64_t>(static_cast<uint64_t>(dst[0]) + static_cast<uint64_t>(v[0]));
        dst[1] = static_cast<int64_t>(static_cast<uint64_t>(dst[1]) + static_cast<uint64_t>(v[1]));
        dst[2] = static_cast<int64_t>(lo);
        dst[3] = static_cast<int64_t>(static_cast<uint64_t>(dst[3]) + static_cast<uint64_t>(v[3]) + carry);
        off += static_cast<uint32_t>(bytes);
        continue;
      }
      for (uint32_t k = 0; k < e->nvals && k < dst.size(); k++) {
        if (kind == kAggMin)
          dst[k] = std::min(dst[k], v[k]);
        else if (kind == kAggMax)
          dst[k] = std::max(dst[k], v[k]);
        else
          dst[k] = static_cast<int64_t>(static_cast<uint64_t>(dst[k]) + static_cast<uint64_t>(v[k]));
      }
    }
    off += static_cast<uint32_t>(bytes);
  }
}

}  // namespace tbdvm
