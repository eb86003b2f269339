// A D-VM State with one slot (one CPU's buffers and aggregation arena), its
// memory owned, built without a Session: for running the interpreter in one
// thread.  The cost tables' core measurements (costs/costs.h), the
// interpreter tests (tests/dvm/vm_fixture.h) and the VM fuzzer
// (tests/dvm/fuzz/vm.cc) each build theirs from this, with their own sizes,
// host functions and probe; a Session builds its States from its Options.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kmod/dvm/core/vm.h"

namespace tbdvm {

struct OneSlotSizes {
  uint32_t strsize = 64;      // the State's string size (dynvar chunks, global strings)
  uint32_t scratch = 4096;    // clause-local scratch
  uint32_t buf_half = 4096;   // each of the principal buffer's two halves
  uint32_t agg = 1 << 16;     // the aggregation arena
  uint32_t agg_buckets = 64;  // its hash buckets
  uint32_t dyn_chunks = 64;   // dynamic-variable chunks (buckets: the next power of two)
};

struct OneSlot {
  SpinLock lock;
  Slot slot;
  State st;
  Probe probe;
  FireArgs fa;
  std::string names;  // provider, module, function, name: each NUL-terminated
  std::vector<uint8_t> scratch, chunks, gstr, bufmem, aggmem;
  std::vector<uint32_t> buckets, aggbuckets;
  std::vector<uint64_t> gvals = std::vector<uint64_t>(kMaxGlobals);

  // `probe_names`: the four parts of the probe's name, each ending in NUL
  // (std::string("prov\0mod\0func\0name\0", 19)).  The host functions are
  // the caller's to set (st.host).
  OneSlot(const OneSlotSizes& z, std::string probe_names, const char* execname)
      : names(std::move(probe_names)),
        scratch(z.scratch),
        gstr(static_cast<size_t>(kMaxGlobals) * z.strsize),
        bufmem(2 * static_cast<size_t>(z.buf_half)),
        aggmem(z.agg),
        aggbuckets(z.agg_buckets) {
    st.strsize = z.strsize;
    std::strncpy(st.execname, execname, sizeof st.execname - 1);
    slot.lock = &lock;
    slot.scratch = scratch.data();
    slot.scratch_size = z.scratch;
    slot.buf.data[0] = bufmem.data();
    slot.buf.data[1] = bufmem.data() + z.buf_half;
    slot.buf.size = z.buf_half;
    slot.agg.arena = aggmem.data();
    slot.agg.size = z.agg;
    slot.agg.used = 8;  // offset 0 stays "no entry"
    slot.agg.buckets = aggbuckets.data();
    slot.agg.nbuckets = z.agg_buckets;
    st.slots = &slot;
    st.nslots = 1;
    const uint32_t cb = dynvar_chunk_bytes(st.strsize);
    chunks.assign(static_cast<size_t>(z.dyn_chunks) * cb, 0);
    uint32_t nb = 1;
    while (nb < z.dyn_chunks) nb <<= 1;
    buckets.assign(nb, 0);
    dynvar_init(&st.dyn, chunks.data(), cb, z.dyn_chunks, buckets.data(), nb);
    st.gvals = gvals.data();
    st.gstr = gstr.data();
    probe.names = names.data();
    probe.names_len = static_cast<uint32_t>(names.size());
    const char* part[4] = {};
    for (size_t i = 0, at = 0; i < 4 && at < names.size(); i++, at += std::strlen(names.data() + at) + 1)
      part[i] = names.data() + at;
    probe.provider = part[0];
    probe.module = part[1];
    probe.function = part[2];
    probe.name = part[3];
  }
  // Points into itself: neither copied nor moved.
  OneSlot(const OneSlot&) = delete;
  OneSlot& operator=(const OneSlot&) = delete;

  // Fresh per-firing state for one ECB of the probe.
  void begin_firing(uint32_t ecb) {
    dvm_prepare_firing(&slot.ms, &st, &slot, &probe, &fa);
    dvm_prepare_ecb(&slot.ms, &slot, ecb);
  }
};

}  // namespace tbdvm
