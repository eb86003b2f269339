// Reads an LTTng CTF trace back with babeltrace2's C API (a graph of
// source.ctf.fs -> filter.utils.muxer -> a sink implemented here) and counts
// and checks the events the adapter asked for.  No text is parsed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench::lttng {

// An integer field (signed or unsigned) that every event of a name must carry
// with one value, e.g. the `ret` of syscall_exit_getpid.
struct IntFieldCheck {
  std::string event_name;
  std::string field;
  std::int64_t value = 0;
};

struct TraceExpectation {
  std::string event_name;  // "tracebench:payload"
  // An event expected once per `event_name` event (a syscall's exit, a
  // kretprobe's return); counted apart, "" when there is none.
  std::string paired_event_name;
  std::optional<std::size_t> payload_bytes;  // check field `data` (text sequence) when set
  std::optional<std::uint64_t> hot_tag;      // check integer field `tag` when set
  std::vector<IntFieldCheck> int_fields;
  // The companion module's events (kmod/include/tracebench_kmod_abi.h):
  // tracebench_fixed's `value` is `seq` ^ TB_KMOD_FIXED_MAGIC, and
  // tracebench_payload's `data` (a byte sequence) holds payload_bytes bytes
  // of tb_kmod_expected_byte(seq, i).
  bool kmod_pattern = false;
};

struct TraceSummary {
  std::size_t traces = 0;           // CTF trace directories found
  std::uint64_t events = 0;         // events named event_name
  std::uint64_t paired_events = 0;  // events named paired_event_name
  std::uint64_t other_events = 0;   // any other event (must stay 0)
  // The `data` payload field (when payload_bytes or kmod_pattern is set):
  std::uint64_t payload_checked_events = 0;     // events whose `data` was compared
  std::uint64_t payload_mismatched_events = 0;  // of those: bytes differ (or no such field)
  std::uint64_t payload_truncated_events = 0;   // of those: another length than payload_bytes
  std::uint64_t payload_kept_bytes = 0;         // the length of the first truncated one
  std::string first_payload_problem;
  std::uint64_t payload_bytes_verified = 0;  // bytes of events that matched completely
  std::uint64_t fields_verified = 0;         // events whose fields all matched
  // Other fields (tag, seq/value, syscall return values) that do not match.
  std::uint64_t mismatches = 0;
  std::string first_mismatch;
  std::uint64_t discarded_events = 0;  // from discarded-events messages
  std::uint64_t discarded_events_msgs = 0;
  std::uint64_t discarded_packets = 0;  // from discarded-packets messages
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;  // size of every file under the trace root
  double read_ms = 0;       // how long reading took
};

// The part of the verification contract (tracers/tracer.h) a trace holds,
// for both LTTng adapters: the `data` payload checks (payload_source
// "workload" when payload_bytes > 0), and, as tracer errors, events whose
// other fields do not match and events of another name.  Leaves recorded,
// lost and exact to the adapter.
void report_trace(const TraceSummary& t, const TraceExpectation& expect, std::size_t payload_bytes, EventCounts* c);

// The summary as the adapters report it in details()["trace"].
nlohmann::json to_json(const TraceSummary& t);

// Every directory under `root` holding a CTF `metadata` file.
std::vector<std::string> find_ctf_traces(const std::string& root);

// Reads every trace under `root`; an error only when babeltrace2 cannot read
// them (a payload mismatch is reported in `out`, not as an error).  With
// `by_channel`, each channel's events (checked the same way), discarded
// events and packets are also tallied apart, keyed by channel name (the
// stream file's name less its `_<cpu>`); `traces`, `bytes` and `read_ms`
// are in `out` only.
Status read_traces(const std::string& root, const TraceExpectation& expect, TraceSummary* out,
                   std::map<std::string, TraceSummary>* by_channel = nullptr);

// "tracebench_h2" for a stream named ".../tracebench_h2_1" (LTTng names a
// channel's stream files <channel>_<cpu>).
std::string channel_of_stream(const std::string& stream_name);

std::string babeltrace2_version();

// babeltrace2's `ctf` plugin loads (the reader needs it).
bool ctf_plugin_present();

}  // namespace tracebench::lttng
