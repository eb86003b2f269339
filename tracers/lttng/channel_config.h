// The channel options of both LTTng adapters (user space and kernel):
// `--option lttng.<key>=<value>` parsed into an LttngConfig.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include <lttng/lttng.h>
#include <nlohmann/json.hpp>

#include "tracebench/options.h"
#include "tracebench/status.h"
#include "tracebench/tracer.h"

namespace tracebench::lttng {

struct LttngConfig {
  // 16 MiB per CPU by default (LTTng's UST default is 4 x 512 KiB): a 50 ms
  // traced block of 64-byte events overruns 2 MiB, and discarded events take
  // a cheaper path, so the default would measure a mix of recording and
  // discarding.  `subbuf_size=512k,num_subbuf=4` gives LTTng's default back.
  std::uint64_t subbuf_size = 2 << 20;  // bytes, power of two
  std::uint64_t num_subbuf = 8;         // power of two >= 2
  // subbuf_size or num_subbuf given: the channel is the user's, and blocks
  // are not shrunk to fit it (LttngTracer::block_event_capacity).
  bool geometry_given = false;
  bool overwrite = false;  // false = discard mode
  bool blocking_set = false;
  std::int64_t blocking_timeout_us = 0;  // -1 = wait forever
  bool per_pid_buffers = false;          // buffers=pid; default per-UID (LTTng's UST default)
  unsigned switch_timer_us = 0;          // 0 = LTTng's default
  unsigned read_timer_us = 0;            // 0 = LTTng's default
  unsigned register_timeout_ms = 10000;
  // The handler-count sweep (user space only): `ecbs` handlers on the
  // tracepoint, one channel and event rule each; the extra ones record too
  // (extra_predicate) or carry kFalseFilter.
  unsigned ecbs = 1;
  bool extra_predicate = true;
};

inline constexpr unsigned kMaxHandlers = 16;
// The extra handlers' filter with extra_predicate=false: lttng-ust's filter
// interpreter evaluates it on every event (the context field needs no
// channel context) and it never holds, as no process has vpid 0.
inline constexpr const char* kFalseFilter = "$ctx.vpid == 0";

// The channel options: `--option lttng.<key>=<value>` (user_space) or
// `lttng_kernel.<key>=<value>` (buffers, blocking_timeout_us and
// register_timeout_ms refused: kernel channels have global buffers, never
// block, and nothing registers).
const OptionSchema& option_schema(bool user_space);
bool is_user_space_only(const std::string& key);
// A spec's options: the values the plan parsed, when it carries them, else its raw options.
Status parse_spec_options(const AttachSpec& spec, LttngConfig* out, bool user_space = true);

// A channel description named `name` with config's geometry, mode and
// timers (not the UST-only blocking timeout); the caller destroys it with
// lttng_channel_destroy().  nullptr when out of memory.
lttng_channel* channel_for(const lttng_domain& dom, const LttngConfig& config, const char* name);

// Restricts what `session` records in `domain` to one process: the vpid
// tracker (user space) or the pid tracker (kernel), include set {pid}; a
// bounded control call (ctl_call.h).  `who` ("lttng", "lttng_kernel")
// begins its messages.
Status track_only(const std::string& who, const std::string& session, lttng_domain_type domain, pid_t pid);

// Creates session `name` writing a local trace into `dir`, afresh: a session
// of that name (one of this process's own names, common/names.h) can only be
// a leftover of this process and is destroyed first.  `*created` is set
// before the daemon is asked, since a call that timed out may have created
// it: the caller destroys the session whenever it is set.
Status create_local_session(const std::string& who, const std::string& name, const std::string& dir, bool* created);

// The channel geometry both adapters report in details().
void put_channel_details(nlohmann::json* details, const LttngConfig& config);

}  // namespace tracebench::lttng
