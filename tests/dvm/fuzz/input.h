// How a D-VM fuzz input becomes a DIF object.  The libFuzzer target (vm.cc)
// and the module's verifier test (tests/kmod/kmod_dvm_test.cc, which feeds
// corpus_vm to the in-kernel verifier) read inputs the same way.
//   byte 0: integer-table entries (mod 8); byte 1: string-table bytes;
//   byte 2: kinds (bit 0: returns a string; the rest the fuzz target's
//   action choices); byte 3: unused; then the integers, the strings and
//   8-byte instructions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kmod/dvm/core/dif.h"

namespace tbdvm::fuzz {

struct Input {
  std::vector<uint64_t> ints;
  std::string strtab;
  std::vector<Insn> insns;
  uint8_t kinds = 0;
  bool returns_string() const { return kinds & 1; }
};

// False when the input is too short or holds no instruction.
inline bool decode(const uint8_t* data, std::size_t size, Input* in) {
  if (size < 4) return false;
  const uint32_t nints = data[0] % 8, nstr = data[1];
  in->kinds = data[2];
  data += 4;
  size -= 4;
  if (size < nints * 8 + nstr) return false;
  in->ints.resize(nints);
  if (nints) std::memcpy(in->ints.data(), data, nints * 8);
  in->strtab.assign(reinterpret_cast<const char*>(data + nints * 8), nstr);
  data += nints * 8 + nstr;
  size -= nints * 8 + nstr;
  in->insns.resize(size / 8);
  if (in->insns.empty()) return false;
  std::memcpy(in->insns.data(), data, in->insns.size() * 8);
  return true;
}

}  // namespace tbdvm::fuzz
