// Opens, configures and loads one program of one generated skeleton, hiding
// which skeleton it is: the adapter sees a bpf_object, the chosen program and
// the shared maps (every family defines the same maps and .rodata).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tracebench/status.h"

struct bpf_object;
struct bpf_program;
struct bpf_map;

namespace tracebench::ebpf {

enum class AttachType {
  kTracepoint,
  kRawTp,
  kTpBtf,
  kUprobe,
  kUretprobe,
  kUprobeMulti,
  kUsdt,
  kFentry,
  kFexit,
  kKprobe,
  kPerfEvent
};

inline constexpr AttachType kAllAttachTypes[] = {
    AttachType::kTracepoint, AttachType::kRawTp,       AttachType::kTpBtf,    AttachType::kUprobe,
    AttachType::kUretprobe,  AttachType::kUprobeMulti, AttachType::kUsdt,     AttachType::kFentry,
    AttachType::kFexit,      AttachType::kKprobe,      AttachType::kPerfEvent};

const char* to_string(AttachType t);
bool parse_attach_type(const std::string& s, AttachType* out);
// Program name prefix inside the family ("tb_tp", "tb_rtp", ...).
const char* program_prefix(AttachType t);
// The skeleton (= .bpf.c family) the attach type lives in.
const char* family_of(AttachType t);

struct LoadConfig {
  AttachType attach = AttachType::kTracepoint;
  std::string action = "count";  // empty|count|hash|update|ringbuf|perfbuf
  std::uint32_t tgid = 0;
  std::int64_t sys_nr = -1;
  std::uint32_t record_bytes = 64;
  // ringbuf/perfbuf: the probe arguments holding the workload's buffer and
  // its length (records copy it with bpf_probe_read_user()); -1 = none, the
  // program generates its records.
  std::int32_t payload_arg = -1;
  std::int32_t payload_len_arg = -1;
  std::uint64_t wakeup_flags = 0;
  bool hash_shared = false;
  std::uint32_t hash_entries = 10240;
  std::uint32_t ringbuf_bytes = 4096;  // power of two, multiple of the page size
  std::string btf_target;              // fentry/fexit: kernel function
};

struct LoadedObject {
  bpf_object* obj = nullptr;
  bpf_program* prog = nullptr;
  bpf_map* count = nullptr;
  bpf_map* drops = nullptr;
  bpf_map* faults = nullptr;  // failed copies of the workload's buffer
  bpf_map* hash = nullptr;    // the one the action uses
  bpf_map* rb = nullptr;
  bpf_map* pb = nullptr;
  std::string program_name;
  std::function<void()> destroy;
  ~LoadedObject() {
    if (destroy) destroy();
  }
};

// Opens the family's skeleton, sets .rodata and map sizes, enables only the
// program "<prefix>_<action>" and loads it.  Errors quote libbpf and the
// kernel (verifier log included when there is one).
Status load_program(const LoadConfig& cfg, std::unique_ptr<LoadedObject>* out);

}  // namespace tracebench::ebpf
