// Session options (`-x key=value`: buffer sizes, slots, rates) and the
// finalized view of a DIF object the VM runs.
#include "tracers/dvm/runtime/internal.h"

#include <cerrno>
#include <cstdlib>

namespace tbdvm {

// ---------------------------------------------------------------------------
// Options.
Error set_option(Options* o, const std::string& key, const std::string& value) {
  auto size = [&](uint32_t* out) -> Error {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(value.c_str(), &end, 10);
    if (errno || end == value.c_str()) return {"option " + key + "=" + value + ": expected a size like 64k or 4m"};
    std::string suf(end);
    if (suf == "k" || suf == "K")
      v <<= 10;
    else if (suf == "m" || suf == "M")
      v <<= 20;
    else if (!suf.empty())
      return {"option " + key + "=" + value + ": unknown size suffix '" + suf + "' (use k or m)"};
    if (v == 0 || v > (1ull << 30)) return {"option " + key + "=" + value + ": must be between 1 and 1g"};
    *out = static_cast<uint32_t>(v);
    return Error::none();
  };
  if (key == "bufsize") return size(&o->bufsize);
  if (key == "aggsize") return size(&o->aggsize);
  if (key == "dynvarsize") return size(&o->dynvarsize);
  if (key == "scratchsize") return size(&o->scratchsize);
  if (key == "strsize") {
    Error e = size(&o->strsize);
    if (e.ok() && (o->strsize < 16 || o->strsize > 4096)) return {"option strsize must be in 16..4096"};
    return e;
  }
  if (key == "nslots" || key == "cpus") {
    Error e = size(&o->nslots);
    if (e.ok() && o->nslots > kMaxSlots) return {"option nslots must be <= 256"};
    return e;
  }
  if (key == "switchrate" || key == "aggrate") {
    std::string v = value;
    if (v.size() > 2 && v.substr(v.size() - 2) == "hz") v.resize(v.size() - 2);
    char* end = nullptr;
    double hz = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end || hz <= 0 || hz > 10000)
      return {"option " + key + "=" + value + ": expected a rate like 1hz or 100hz (at most 10000hz)"};
    (key == "switchrate" ? o->switchrate_hz : o->aggrate_hz) = hz;
    return Error::none();
  }
  if (key == "zdefs" || key == "Z") {
    o->allow_zero_probes = true;
    return Error::none();
  }
  if (key == "stagetiming") {
    if (!value.empty() && value != "true" && value != "false")
      return {"option stagetiming=" + value + ": expected true or false (or no value: true)"};
    o->stage_timing = value != "false";
    return Error::none();
  }
  if (key == "syscallprobe") {
    if (value != "tracepoint" && value != "kprobe")
      return {"option syscallprobe=" + value + ": expected tracepoint or kprobe"};
    o->syscall_kprobe = value == "kprobe";
    return Error::none();
  }
  return {"unknown D-VM option '" + key +
          "' (known: bufsize, aggsize, dynvarsize, scratchsize, strsize, nslots, switchrate, aggrate, stagetiming, "
          "syscallprobe)"};
}

// ---------------------------------------------------------------------------
// DIF objects.
const Program* DifObject::finalize() {
  prog.insns = insns.data();
  prog.ninsns = static_cast<uint32_t>(insns.size());
  prog.inttab = ints.empty() ? nullptr : ints.data();
  prog.nints = static_cast<uint32_t>(ints.size());
  prog.strtab = strtab.empty() ? nullptr : strtab.data();
  prog.strtab_len = static_cast<uint32_t>(strtab.size());
  prog.returns_string = returns_string;
  return &prog;
}

}  // namespace tbdvm
