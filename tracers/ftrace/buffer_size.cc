#include "buffer_size.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace tracebench::ftrace {

namespace {
constexpr std::uint64_t kEventHeader = 4;        // type_len:5, time_delta:27
constexpr std::uint64_t kSmallDataMax = 28 * 4;  // RB_MAX_SMALL_DATA: longer entries carry a length word
constexpr std::uint64_t kSubbufHeader = 16;      // buffer_data_page: u64 time stamp + commit
constexpr std::uint64_t kBoundKb = 256 * 1024;

std::uint64_t mem_available_kb() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kb = 0;
    if (fields >> key >> kb && key == "MemAvailable:") return kb;
  }
  return 0;
}
}  // namespace

std::uint64_t ring_record_bytes(std::uint64_t entry_bytes) {
  std::uint64_t bytes = kEventHeader + (entry_bytes > kSmallDataMax ? 4 : 0) + entry_bytes;
  return (bytes + 3) / 4 * 4;
}

std::uint64_t buffer_kb_for(std::uint64_t events, std::uint64_t record_bytes, std::uint64_t subbuf_bytes,
                            std::uint64_t floor_kb, std::uint64_t bound_kb) {
  const std::uint64_t data = subbuf_bytes > kSubbufHeader ? subbuf_bytes - kSubbufHeader : 1;
  const std::uint64_t per_subbuf = std::max<std::uint64_t>(1, data / std::max<std::uint64_t>(1, record_bytes));
  std::uint64_t subbufs = (events + per_subbuf - 1) / per_subbuf;
  subbufs += subbufs / 8 + 1;
  // buffer_size_kb counts the sub-buffers' data bytes (the kernel divides a
  // written size by them, rounding up).
  const std::uint64_t kb = (subbufs * data + 1023) / 1024;
  return std::min(std::max(kb, floor_kb), std::max(bound_kb, floor_kb));
}

std::uint64_t auto_buffer_bound_kb(unsigned cpus, unsigned buffers_per_cpu) {
  const std::uint64_t share = std::max(1u, cpus) * static_cast<std::uint64_t>(std::max(1u, buffers_per_cpu));
  const std::uint64_t avail = mem_available_kb();
  return avail ? std::min(kBoundKb, avail / 8 / share) : kBoundKb;
}

}  // namespace tracebench::ftrace
