#include "channel_config.h"
#include "ctl_call.h"
#include "ctl_status.h"
#include "tracebench/handler_count.h"

#include <cstdint>
#include <cstdio>

namespace tracebench::lttng {
// The two domains' option tables (~80 lines), one entry per key: a table,
// not steps.
const OptionSchema& option_schema(bool user_space) {
  using T = OptionSpec::Type;
  static const OptionSchema user = {
      {.name = "subbuf_size",
       .type = T::kUint,
       .help = "sub-buffer size in bytes; with this and `num_subbuf` left at their defaults (16 MiB per CPU), a "
               "traced block fires at most what half the channel holds, (size x (count - 1) / 2) / (payload + 32 "
               "bytes) records, so none is discarded while lttng-consumerd falls behind (the harness shrinks the "
               "block: a 1 KiB quick block holds ~7,000 events); given, the channel is yours and blocks keep "
               "their size",
       .default_value = "2M",
       .min = 4096,
       .size_suffix = true,
       .power_of_two = true,
       .sizes_buffer = true},
      {.name = "num_subbuf",
       .type = T::kUint,
       .help = "sub-buffers per ring",
       .default_value = "8",
       .min = 2,
       .max = 1u << 20,
       .power_of_two = true,
       .sizes_buffer = true},
      {.name = "overwrite",
       .type = T::kBool,
       .help = "flight-recorder mode (off = discard mode); then `exact` = false, see below",
       .default_value = "off"},
      {.name = "blocking_timeout_us",
       .type = T::kUint,
       .help = "the application waits for room instead of discarding (the provider loader sets "
               "`LTTNG_UST_ALLOW_BLOCKING=1`, which lttng-ust requires); inf = wait forever",
       .default_help = "non-blocking",
       .max = INT32_MAX,
       .words = {"inf"}},
      {.name = "buffers",
       .type = T::kChoice,
       .help = "per-user or per-process ring buffers",
       .default_value = "uid",
       .default_help = "LTTng's UST default",
       .words = {"uid", "pid"}},
      {.name = "switch_timer_us",
       .type = T::kUint,
       .help = "channel switch timer (0 = LTTng's default)",
       .default_value = "0",
       .max = UINT32_MAX},
      {.name = "read_timer_us",
       .type = T::kUint,
       .help = "channel read timer (0 = LTTng's default)",
       .default_value = "0",
       .max = UINT32_MAX},
      {.name = "register_timeout_ms",
       .type = T::kUint,
       .help = "how long `attach()` waits for the process to show its tracepoint to the daemon",
       .default_value = "10000",
       .min = 1,
       .max = 600000},
      ecbs_option("handlers on the tracepoint: one channel each, each with its own event rule for it (a "
                  "handler-count sweep for `tracebench model fit`); the extra ones as `extra_predicate` says",
                  kMaxHandlers),
      extra_predicate_option("with ecbs > 1: the extra handlers record every event too (`true`, each channel's copy "
                             "checked), or their event rule has a filter lttng-ust evaluates on every event and that "
                             "never holds (`false`: `" +
                             std::string(kFalseFilter) + "`)"),
  };
  // Kernel channels have global buffers, never block, and nothing registers:
  // the user-space keys are refused, saying so.
  static const OptionSchema kernel = [] {
    OptionSchema k;
    // The handler-count sweep is the user-space adapter's only.
    for (const auto& o : user)
      if (o.name != kEcbsOption && o.name != kExtraPredicateOption) k.push_back(o);
    for (auto& o : k) {
      if (o.name == "subbuf_size") o.help = "sub-buffer size in bytes";  // kernel blocks are not shrunk to fit
      if (!is_user_space_only(o.name)) continue;
      o.default_value.reset();
      o.default_help.clear();
      o.help = "user space only (kernel channels have global buffers, never block, and nothing registers)";
      o.refused =
          "applies to the user-space domain only (kernel channels have global buffers, never block, and "
          "nothing registers)";
    }
    return k;
  }();
  return user_space ? user : kernel;
}

bool is_user_space_only(const std::string& key) {
  return key == "buffers" || key == "blocking_timeout_us" || key == "register_timeout_ms";
}

Status parse_spec_options(const AttachSpec& spec, LttngConfig* out, bool user_space) {
  OptionValues v;
  TB_TRY(tracebench::option_values(user_space ? "lttng" : "lttng_kernel", option_schema(user_space), spec, &v));
  LttngConfig c;
  c.subbuf_size = v.number("subbuf_size");
  c.num_subbuf = v.number("num_subbuf");
  c.geometry_given = v.given("subbuf_size") || v.given("num_subbuf");
  c.overwrite = v.on("overwrite");
  if (user_space) {
    if (v.given("blocking_timeout_us")) {
      c.blocking_set = true;
      c.blocking_timeout_us =
          v.is_number("blocking_timeout_us") ? static_cast<std::int64_t>(v.number("blocking_timeout_us")) : -1;
    }
    c.per_pid_buffers = v.text("buffers") == "pid";
    c.register_timeout_ms = static_cast<unsigned>(v.number("register_timeout_ms"));
    c.ecbs = static_cast<unsigned>(v.number("ecbs"));
    c.extra_predicate = v.text("extra_predicate") == "true";
  }
  c.switch_timer_us = static_cast<unsigned>(v.number("switch_timer_us"));
  c.read_timer_us = static_cast<unsigned>(v.number("read_timer_us"));
  if (c.overwrite && c.blocking_set && c.blocking_timeout_us != 0) {
    return Status::error(
        "lttng options overwrite=on and blocking_timeout_us exclude each other "
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

namespace {

Status track_process(const std::string& session, lttng_domain_type domain, pid_t pid) {
  const bool user = domain == LTTNG_DOMAIN_UST;
  const char* what = user ? "vpid" : "pid";
  lttng_process_attr_tracker_handle* tracker = nullptr;
  lttng_error_code code = lttng_session_get_tracker_handle(
      session.c_str(), domain, user ? LTTNG_PROCESS_ATTR_VIRTUAL_PROCESS_ID : LTTNG_PROCESS_ATTR_PROCESS_ID, &tracker);
  if (code != LTTNG_OK) return Status::error(std::string(what) + " tracker: " + lttng_strerror(-code));
  bool tracked = lttng_process_attr_tracker_handle_set_tracking_policy(tracker, LTTNG_TRACKING_POLICY_INCLUDE_SET) ==
                     LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK &&
                 (user ? lttng_process_attr_virtual_process_id_tracker_handle_add_pid(tracker, pid)
                       : lttng_process_attr_process_id_tracker_handle_add_pid(tracker, pid)) ==
                     LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK;
  lttng_process_attr_tracker_handle_destroy(tracker);
  if (!tracked) return Status::error("cannot restrict session " + session + " to " + what + " " + std::to_string(pid));
  return Status::ok();
}

}  // namespace

Status track_only(const std::string& who, const std::string& session, lttng_domain_type domain, pid_t pid) {
  return bounded_call(who + ": track process " + std::to_string(pid), kCtlTimeout, [&](std::string*) {
    Status t = track_process(session, domain, pid);
    return t ? t : Status::error(who + ": " + t.message());
  });
}

Status create_local_session(const std::string& who, const std::string& name, const std::string& dir, bool* created) {
  (void)ctl_call(who + ": destroy session " + name, [&] { return lttng_destroy_session(name.c_str()); });
  TB_TRY(sessiond_responsive());
  lttng_session_descriptor* desc = lttng_session_descriptor_local_create(name.c_str(), dir.c_str());
  if (!desc) return Status::error(who + ": cannot build a session descriptor");
  *created = true;
  Status s = ctl_call(who + ": create session " + name, [&] { return create_session(desc); });
  lttng_session_descriptor_destroy(desc);
  return s;
}

void put_channel_details(nlohmann::json* details, const LttngConfig& config) {
  (*details)["overwrite"] = config.overwrite;
  (*details)["subbuf_size"] = config.subbuf_size;
  (*details)["num_subbuf"] = config.num_subbuf;
}

}  // namespace tracebench::lttng
