// The per-CPU ring buffer size that holds one traced block, when the user
// did not set `buffer_kb`: the harness says how many events a block fires
// (Tracer::plan_block), the event's format says how long a record is.
#pragma once

#include <cstdint>

namespace tracebench::ftrace {

// Bytes one record takes in the ring buffer: the event's entry (common
// fields and its own, `entry_bytes`) behind the ring buffer's 4-byte event
// header, plus a 4-byte length word when the entry is longer than the
// header's small-data range (112 bytes), rounded up to 4 bytes.
std::uint64_t ring_record_bytes(std::uint64_t entry_bytes);

// `buffer_size_kb` (per CPU) whose sub-buffers hold `events` records of
// `record_bytes`: a record never spans two sub-buffers, each of which loses
// its 16-byte header, so the count is per sub-buffer (`subbuf_bytes`), then
// an eighth more and one sub-buffer for what the count leaves out (time
// extends, the sub-buffer the reader holds).  Never below `floor_kb` (the
// instance's own default), never above `bound_kb`.
std::uint64_t buffer_kb_for(std::uint64_t events, std::uint64_t record_bytes, std::uint64_t subbuf_bytes,
                            std::uint64_t floor_kb, std::uint64_t bound_kb);

// The bound of the automatic size, KiB per CPU: 256 MiB, and at most an
// eighth of the memory available now (MemAvailable) shared by every CPU's
// buffer of every instance the adapter sizes (`buffers_per_cpu`).
std::uint64_t auto_buffer_bound_kb(unsigned cpus, unsigned buffers_per_cpu);

}  // namespace tracebench::ftrace
