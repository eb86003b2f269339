#include "channel_config.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace tracebench::lttng {
namespace {

bool parse_u64(const std::string& s, std::uint64_t* out, bool allow_suffix) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno || end == s.c_str()) return false;
  std::uint64_t mult = 1;
  std::string rest(end);
  if (allow_suffix && (rest == "k" || rest == "K")) mult = 1024, rest.clear();
  if (allow_suffix && (rest == "m" || rest == "M")) mult = 1024 * 1024, rest.clear();
  if (!rest.empty()) return false;
  if (v > UINT64_MAX / mult) return false;
  *out = v * mult;
  return true;
}

bool parse_bool(const std::string& s, bool* out) {
  if (s == "on" || s == "true" || s == "1" || s == "yes") return *out = true, true;
  if (s == "off" || s == "false" || s == "0" || s == "no") return *out = false, true;
  return false;
}

bool power_of_two(std::uint64_t v) { return v && !(v & (v - 1)); }

constexpr const char* kKeys =
    "subbuf_size, num_subbuf, overwrite, blocking_timeout_us, buffers, switch_timer_us, read_timer_us, "
    "register_timeout_ms";

}  // namespace

Status parse_options(const std::map<std::string, std::string>& options, LttngConfig* out) {
  LttngConfig c;
  for (const auto& [key, value] : options) {
    auto bad = [&, &key = key, &value = value](const std::string& want) {
      return Status::error("lttng option " + key + "='" + value + "': " + want);
    };
    std::uint64_t v = 0;
    if (key == "subbuf_size") {
      if (!parse_u64(value, &v, true) || !power_of_two(v) || v < 4096) {
        return bad("expected a power of two >= 4096 bytes (suffix k or M allowed)");
      }
      c.subbuf_size = v;
    } else if (key == "num_subbuf") {
      if (!parse_u64(value, &v, false) || !power_of_two(v) || v < 2) return bad("expected a power of two >= 2");
      c.num_subbuf = v;
    } else if (key == "overwrite") {
      if (!parse_bool(value, &c.overwrite)) return bad("expected on or off (off = discard mode)");
    } else if (key == "blocking_timeout_us") {
      c.blocking_set = true;
      if (value == "inf") {
        c.blocking_timeout_us = -1;
      } else if (!parse_u64(value, &v, false) || v > INT32_MAX) {
        return bad("expected microseconds (0..2147483647) or inf");
      } else {
        c.blocking_timeout_us = static_cast<std::int64_t>(v);
      }
    } else if (key == "buffers") {
      if (value == "uid") {
        c.per_pid_buffers = false;
      } else if (value == "pid") {
        c.per_pid_buffers = true;
      } else {
        return bad("expected uid (per-user buffers, LTTng's default) or pid (per-process buffers)");
      }
    } else if (key == "switch_timer_us" || key == "read_timer_us") {
      if (!parse_u64(value, &v, false) || v > UINT32_MAX) return bad("expected microseconds");
      (key == "switch_timer_us" ? c.switch_timer_us : c.read_timer_us) = static_cast<unsigned>(v);
    } else if (key == "register_timeout_ms") {
      if (!parse_u64(value, &v, false) || v == 0 || v > 600000) return bad("expected 1..600000 ms");
      c.register_timeout_ms = static_cast<unsigned>(v);
    } else {
      return Status::error("unknown lttng option '" + key + "' (known: " + kKeys + ")");
    }
  }
  if (c.overwrite && c.blocking_set && c.blocking_timeout_us != 0) {
    return Status::error("lttng options overwrite=on and blocking_timeout_us exclude each other "
                         "(LTTng blocks only in discard mode)");
  }
  *out = c;
  return Status::ok();
}

lttng_channel* channel_for(const lttng_domain& dom, const LttngConfig& config, const char* name) {
  lttng_channel* chan = lttng_channel_create(const_cast<lttng_domain*>(&dom));
  if (!chan) return nullptr;
  std::snprintf(chan->name, sizeof chan->name, "%s", name);
  chan->attr.overwrite = config.overwrite ? 1 : 0;
  chan->attr.subbuf_size = config.subbuf_size;
  chan->attr.num_subbuf = config.num_subbuf;
  if (config.switch_timer_us) chan->attr.switch_timer_interval = config.switch_timer_us;
  if (config.read_timer_us) chan->attr.read_timer_interval = config.read_timer_us;
  return chan;
}

Status track_only(const std::string& session, lttng_domain_type domain, pid_t pid) {
  const bool user = domain == LTTNG_DOMAIN_UST;
  const char* what = user ? "vpid" : "pid";
  lttng_process_attr_tracker_handle* tracker = nullptr;
  lttng_error_code code = lttng_session_get_tracker_handle(
      session.c_str(), domain, user ? LTTNG_PROCESS_ATTR_VIRTUAL_PROCESS_ID : LTTNG_PROCESS_ATTR_PROCESS_ID, &tracker);
  if (code != LTTNG_OK) return Status::error(std::string(what) + " tracker: " + lttng_strerror(-code));
  bool tracked =
      lttng_process_attr_tracker_handle_set_tracking_policy(tracker, LTTNG_TRACKING_POLICY_INCLUDE_SET) ==
          LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK &&
      (user ? lttng_process_attr_virtual_process_id_tracker_handle_add_pid(tracker, pid)
            : lttng_process_attr_process_id_tracker_handle_add_pid(tracker, pid)) ==
          LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK;
  lttng_process_attr_tracker_handle_destroy(tracker);
  if (!tracked) return Status::error("cannot restrict session " + session + " to " + what + " " + std::to_string(pid));
  return Status::ok();
}

}  // namespace tracebench::lttng
