#include "lttng_tracer.h"

#include "tracers/common/names.h"
#include "tracebench/handler_count.h"

#include <unistd.h>

#include <lttng/lttng.h>
#include <lttng/ust-version.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "ctl_call.h"
#include "ctl_status.h"
#include "sessiond.h"
#include "payload_pattern.h"
#include "ust_provider.h"

namespace tracebench::lttng {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

}  // namespace

LttngTracer::~LttngTracer() { teardown(); }

std::string_view LttngTracer::description() const {
  return "LTTng-UST through liblttng-ctl: a recording session per benchmark scoped to the process, the "
         "tracepoint's event rule enabled/disabled, the CTF trace read back with babeltrace2";
}

Availability LttngTracer::available() {
  if (!provider_present()) {
    return Availability::no("the LTTng-UST provider library " + provider_path() +
                            " is missing (build the tracebench_lttng_provider target)");
  }
  if (!ctf_plugin_present())
    return Availability::no("babeltrace2's ctf plugin is missing (apt-get install libbabeltrace2-0)");
  bool alive = false;
  if (Status s = probe_sessiond(&alive); !s) return Availability::no(s.message());
  if (alive) return Availability::yes();
  if (find_sessiond_binary().empty()) {
    return Availability::no("no lttng-sessiond is running and none is installed (apt-get install lttng-tools)");
  }
  if (::geteuid() != 0) {
    return Availability::no(
        "no root lttng-sessiond is running and only root can start one "
        "(sudo lttng-sessiond --daemonize)");
  }
  return Availability::yes();
}

bool LttngTracer::supports(const ProbePoint& probe) const { return probe.kind == ProbeKind::kUstTracepoint; }

std::map<std::string, std::string> LttngTracer::versions() const {
  return {{"lttng-ust", LTTNG_UST_VERSION},
          {"liblttng-ctl", TRACEBENCH_LTTNG_CTL_VERSION},
          {"babeltrace2", babeltrace2_version()}};
}

Status LttngTracer::validate(const AttachSpec& spec) const {
  LttngConfig config;
  TB_TRY(parse_spec_options(spec, &config));
  if (spec.probe.kind != ProbeKind::kUstTracepoint)
    return Status::error("lttng: probe " + spec.probe.name + " is not an LTTng-UST tracepoint");
  const std::string& target = spec.probe.target;
  if (target.find(':') == std::string::npos || target.size() >= LTTNG_SYMBOL_NAME_LEN)
    return Status::error("lttng: tracepoint '" + target + "' is not of the form provider:event");
  return Status::ok();
}

Status LttngTracer::attach(const AttachSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_created_ || handle_ || started_sessiond_) {
    return Status::error("lttng: already attached (teardown() first)");
  }
  TB_TRY(validate(spec));  // options, probe kind, tracepoint name
  LttngConfig config;
  TB_TRY(parse_spec_options(spec, &config));
  const std::string& target = spec.probe.target;
  config_ = config;
  event_ = target;
  expect_ = TraceExpectation{};
  expect_.event_name = target;
  if (target == "tracebench:payload" || target == "tracebench:array64") expect_.payload_bytes = spec.payload_bytes;
  if (target == "tracebench:hot") expect_.hot_tag = kHotTag;
  pid_ = spec.pid > 0 ? spec.pid : ::getpid();
  trace_ = TraceSummary{};
  discarded_events_ = lost_packets_ = 0;
  foreign_channel_events_ = 0;
  foreign_channel_.clear();
  // Handler 1 records every event; the extra ones too, or carry a filter
  // that never holds.
  handlers_.clear();
  for (unsigned i = 1; i <= config_.ecbs; ++i) {
    Handler h;
    h.channel = i == 1 ? std::string(kChannelName) : kExtraChannelPrefix + std::to_string(i);
    if (i > 1 && !config_.extra_predicate) h.filter = false_filter_;
    handlers_.push_back(std::move(h));
  }
  drained_ = started_ = event_enabled_ = false;

  // The daemon first, so that loading the provider below registers this
  // process synchronously (liblttng-ust's constructor waits for it).
  TB_TRY(use_sessiond(/*kernel=*/false, &started_sessiond_));
  if (pid_ == ::getpid()) TB_TRY(load_provider());

  std::string tmpl = std::string(kTempDirPrefix) + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return errno_status("mkdtemp " + tmpl, errno);
  trace_dir_ = tmpl;

  session_ = common::owned_name();
  TB_TRY(create_local_session("lttng", session_, trace_dir_, &session_created_));  // teardown() destroys it

  lttng_domain dom;
  std::memset(&dom, 0, sizeof dom);
  dom.type = LTTNG_DOMAIN_UST;
  dom.buf_type = config_.per_pid_buffers ? LTTNG_BUFFER_PER_PID : LTTNG_BUFFER_PER_UID;
  handle_ = lttng_create_handle(session_.c_str(), &dom);
  if (!handle_) return Status::error("lttng: cannot create a handle for " + session_);

  // Only the workload's process is traced, whatever else runs with the same
  // tracepoints.
  TB_TRY(track_only("lttng", session_, LTTNG_DOMAIN_UST, pid_));

  // One channel per handler, all of one geometry.
  for (const Handler& h : handlers_) TB_TRY(add_channel(dom, h.channel));

  TB_TRY(wait_for_registration());
  // The event rules exist from here on, disabled; enable()/disable() flip
  // them all.
  TB_TRY(set_events(true));
  event_enabled_ = true;
  TB_TRY(set_events(false));
  event_enabled_ = false;
  TB_TRY(ctl_call("lttng: start " + session_, [&] { return lttng_start_tracing(session_.c_str()); }));
  started_ = true;
  return Status::ok();
}

Status LttngTracer::wait_for_registration() {
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::milliseconds(config_.register_timeout_ms);
  for (;;) {
    // "1" when the process shows the tracepoint, else "0" and the error.
    std::string answer;
    TB_TRY(bounded_call(
        "lttng: list tracepoints", kCtlTimeout,
        [&](std::string* out) {
          lttng_event* events = nullptr;
          int n = lttng_list_tracepoints(handle_, &events);
          bool found = false;
          for (int i = 0; i < n; ++i) {
            if (events[i].pid == pid_ && event_ == events[i].name) found = true;
          }
          std::free(events);
          *out = found ? "1" : n < 0 ? std::string("0: ") + lttng_strerror(n) : "0";
          return Status::ok();
        },
        &answer));
    if (answer == "1") {
      registration_ms_ = ms_since(t0);
      return Status::ok();
    }
    if (Clock::now() > deadline) {
      std::string why = answer.substr(1);
      return Status::error("lttng: process " + std::to_string(pid_) + " has not registered tracepoint " + event_ +
                           " with lttng-sessiond within " + std::to_string(config_.register_timeout_ms) + " ms" + why +
                           " (is the provider loaded in it? see `lttng list --userspace`)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Status LttngTracer::add_channel(const lttng_domain& dom, const std::string& name) {
  lttng_channel* chan = channel_for(dom, config_, name.c_str());
  if (!chan) return Status::error("lttng: cannot create a channel description");
  int ret = 0;
  if (config_.blocking_set) ret = lttng_channel_set_blocking_timeout(chan, config_.blocking_timeout_us);
  Status s = ret >= 0 ? ctl_call("lttng: enable channel " + name, [&] { return lttng_enable_channel(handle_, chan); })
                      : ctl_status("lttng: blocking timeout of channel " + name, ret);
  lttng_channel_destroy(chan);
  return s;
}

// The handler's event rule: the tracepoint in its channel, with its filter
// (lttng-tools compiles it to bytecode, lttng-ust links it to the event and
// interprets it on every hit before anything is reserved in the ring).
Status LttngTracer::set_event(const Handler& h, bool on) {
  const std::string what = std::string("lttng: ") + (on ? "enable" : "disable") + " event " + event_ + " in channel " +
                           h.channel + (h.filter.empty() ? "" : " (filter " + h.filter + ")");
  return bounded_call(what, kCtlTimeout, [&](std::string*) {
    int ret = 0;
    if (on) {
      lttng_event* ev = lttng_event_create();
      if (!ev) return Status::error("lttng: out of memory");
      ev->type = LTTNG_EVENT_TRACEPOINT;
      std::snprintf(ev->name, sizeof ev->name, "%s", event_.c_str());
      ev->loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
      ev->loglevel = -1;
      ret = lttng_enable_event_with_exclusions(handle_, ev, h.channel.c_str(),
                                               h.filter.empty() ? nullptr : h.filter.c_str(), 0, nullptr);
      lttng_event_destroy(ev);
    } else {
      ret = lttng_disable_event(handle_, event_.c_str(), h.channel.c_str());
    }
    return ctl_status(what + " (code " + std::to_string(ret) + ")", ret);
  });
}

// Every handler's rule; disabling goes on past a failure so that none stays
// enabled that can be disabled.
Status LttngTracer::set_events(bool on) {
  Status first = Status::ok();
  for (const Handler& h : handlers_) {
    Status s = set_event(h, on);
    if (!s && first) first = s;
    if (!s && on) break;
  }
  return first;
}

// Enabling the event rule makes lttng-sessiond tell the application, which
// connects the probe to the tracepoint (its enabled-state word becomes
// non-zero); lttng-ctl returns after the application acknowledged.  Disabling
// unregisters the probe again, so a disabled tracepoint costs exactly what it
// costs with no session at all: a load and a not-taken branch.
Status LttngTracer::enable() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!handle_) return Status::error("lttng: enable() before attach()");
  if (event_enabled_) return Status::ok();
  if (!started_) {  // drain() stopped the session
    TB_TRY(ctl_call("lttng: start " + session_, [&] { return lttng_start_tracing(session_.c_str()); }));
    started_ = true;
  }
  // Marked enabled first: after a failure part-way, disable() still turns
  // off the rules that were enabled.
  event_enabled_ = true;
  TB_TRY(set_events(true));
  return Status::ok();
}

Status LttngTracer::disable() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!handle_) return Status::error("lttng: disable() before attach()");
  if (!event_enabled_) return Status::ok();
  Status s = set_events(false);
  event_enabled_ = false;
  return s;
}

Status LttngTracer::query_channels() {
  std::vector<ChannelFacts> chans;
  TB_TRY(list_channels("lttng: list channels of " + session_, handle_, &chans));
  Status st = Status::ok();
  for (Handler& h : handlers_) {
    bool found = false;
    for (std::size_t i = 0; i < chans.size() && st; ++i) {
      if (h.channel != chans[i].name) continue;
      found = true;
      if (!chans[i].counters) {
        st = Status::error("lttng: channel " + h.channel + " has no discarded/lost counters");
        break;
      }
      h.discarded_events = chans[i].discarded_events;
      h.lost_packets = chans[i].lost_packets;
      if (&h != &handlers_.front()) continue;
      config_.subbuf_size = chans[i].subbuf_size;  // what LTTng used
      config_.num_subbuf = chans[i].num_subbuf;
      config_.switch_timer_us = chans[i].switch_timer_us;
      config_.read_timer_us = chans[i].read_timer_us;
    }
    if (st && !found) st = Status::error("lttng: channel " + h.channel + " is gone from " + session_);
  }
  TB_TRY(st);
  discarded_events_ = handlers_.front().discarded_events;
  lost_packets_ = handlers_.front().lost_packets;
  return Status::ok();
}

// A channel's sub-buffers are fixed when it is created, and lttng-consumerd
// empties them beside the firing thread; on a busy machine it falls behind
// and discard mode drops what does not fit (a 10 ms quick block of 1 KiB
// records is ~28 MB, beyond the 16 MiB default).  With the default geometry,
// a block fires at most what half the channel holds (one sub-buffer being
// the consumer's): the other half is room for what the consumer has not yet
// taken from the block before.  A record is its payload plus at most 32
// bytes (an extended event header, the sequence's length, alignment).
std::uint64_t LttngTracer::block_event_capacity() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (config_.geometry_given || config_.overwrite) return 0;
  const std::uint64_t record = expect_.payload_bytes.value_or(0) + 32;
  return config_.subbuf_size * (config_.num_subbuf - 1) / 2 / record;
}

// The channel's sub-buffers live in shared memory that the application and
// the consumer touch page by page as the first passes fill them: twice
// round the whole channel, whatever its geometry.
std::uint64_t LttngTracer::first_pass_events() const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t record = expect_.payload_bytes.value_or(0) + 32;
  return 2 * config_.subbuf_size * config_.num_subbuf / record;
}

Status LttngTracer::drain() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!handle_) return Status::error("lttng: drain() before attach()");
  if (started_) {
    // Waits until the consumer daemon has written every sub-buffer out.
    TB_TRY(ctl_call(
        "lttng: stop " + session_, [&] { return lttng_stop_tracing(session_.c_str()); }, kStopTimeout));
    started_ = false;
  }
  TB_TRY(query_channels());
  TraceSummary whole;
  std::map<std::string, TraceSummary> by_channel;
  TB_TRY(read_traces(trace_dir_, expect_, &whole, &by_channel));
  for (Handler& h : handlers_) {
    auto it = by_channel.find(h.channel);
    h.trace = it == by_channel.end() ? TraceSummary{} : it->second;
    if (it != by_channel.end()) by_channel.erase(it);
  }
  foreign_channel_events_ = 0;
  foreign_channel_.clear();
  for (const auto& [name, t] : by_channel) {
    if (t.events + t.other_events + t.paired_events == 0) continue;
    foreign_channel_events_ += t.events + t.other_events + t.paired_events;
    if (foreign_channel_.empty()) foreign_channel_ = name;
  }
  // Handler 1's events are what counts() reports; the size and read time
  // are the whole trace's.
  trace_ = handlers_.front().trace;
  trace_.traces = whole.traces;
  trace_.bytes = whole.bytes;
  trace_.read_ms = whole.read_ms;
  drained_ = true;
  // What the trace holds (payloads that differ, foreign events) is reported
  // in counts(); the harness's judge decides.
  return Status::ok();
}

std::vector<ConsumerTask> LttngTracer::consumer_tasks() const {
  std::vector<ConsumerTask> out;
  for (const auto& d : lttng::sessiond_family()) out.push_back({d.comm, static_cast<int>(d.pid), 0});
  return out;
}

EventCounts LttngTracer::counts() {
  std::lock_guard<std::mutex> lock(mu_);
  EventCounts c;
  c.recorded = trace_.events;
  c.lost = discarded_events_;
  // Overwrite mode loses whole sub-buffers, which LTTng counts as packets,
  // not events: recorded + lost is then only a lower bound.
  c.exact = !config_.overwrite;
  report_trace(trace_, expect_, expect_.payload_bytes.value_or(0), &c);
  check_handlers(&c);
  return c;
}

// The extra handlers against the first: an acting one must have seen every
// event the first saw (recorded or discarded) and hold nothing wrong; one
// whose filter never holds must have recorded and discarded nothing.  Any
// difference, or events in a channel that is no handler's, is a tracer error.
void LttngTracer::check_handlers(EventCounts* c) const {
  if (!drained_ || handlers_.empty()) return;
  auto error = [c](std::uint64_t n, const std::string& what) {
    c->tracer_errors += n;
    c->tracer_error_detail += (c->tracer_error_detail.empty() ? "" : "; ") + what;
  };
  const Handler& first = handlers_.front();
  const std::uint64_t seen = first.trace.events + first.discarded_events;
  for (std::size_t i = 1; i < handlers_.size(); ++i) {
    const Handler& h = handlers_[i];
    const std::string who = "handler " + std::to_string(i + 1) + " (channel " + h.channel + ")";
    const TraceSummary& t = h.trace;
    if (!h.filter.empty()) {
      if (t.events + h.discarded_events + t.other_events != 0)
        error(std::max<std::uint64_t>(1, t.events + h.discarded_events + t.other_events),
              who + " recorded " + std::to_string(t.events) + " and discarded " + std::to_string(h.discarded_events) +
                  " events although its filter `" + h.filter + "` never holds");
      continue;
    }
    const std::uint64_t got = t.events + h.discarded_events;
    if (got != seen)
      error(got > seen ? got - seen : seen - got,
            who + " recorded " + std::to_string(t.events) + " + discarded " + std::to_string(h.discarded_events) +
                " = " + std::to_string(got) + " events, handler 1 " + std::to_string(first.trace.events) + " + " +
                std::to_string(first.discarded_events) + " = " + std::to_string(seen));
    // The same checks as handler 1's events (tag, payload bytes, other events).
    EventCounts e;
    report_trace(t, expect_, expect_.payload_bytes.value_or(0), &e);
    const std::uint64_t bad_payload = e.payload_mismatched_events + e.payload_truncated_events;
    if (e.tracer_errors) error(e.tracer_errors, who + ": " + e.tracer_error_detail);
    if (bad_payload)
      error(bad_payload, who + ": " + std::to_string(bad_payload) + " payloads differ from the workload's (" +
                             e.payload_mismatch_detail + ")");
    if (e.payload_source == PayloadSource::kWorkload && e.payload_checked_events != t.events)
      error(1, who + ": " + std::to_string(t.events - e.payload_checked_events) + " payloads unchecked");
  }
  if (foreign_channel_events_)
    error(foreign_channel_events_, "the trace holds " + std::to_string(foreign_channel_events_) +
                                       " events of channel " + foreign_channel_ + ", which is no handler's");
}

nlohmann::json LttngTracer::details() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json j;
  j["buffers"] = config_.per_pid_buffers ? "pid" : "uid";
  put_channel_details(&j, config_);
  if (session_.empty()) {  // never attached: the configuration only
    j["ecbs"] = static_cast<int>(config_.ecbs);
    return j;
  }
  j["session"] = session_;
  j["event"] = event_;
  j["switch_timer_us"] = config_.switch_timer_us;
  j["read_timer_us"] = config_.read_timer_us;
  if (config_.blocking_set) j["blocking_timeout_us"] = config_.blocking_timeout_us;
  j["sessiond_started_by_adapter"] = started_sessiond_ != 0;
  if (auto family = sessiond_family(); !family.empty()) j["sessiond_pid"] = family.front().pid;
  j["registration_ms"] = registration_ms_;
  j["discarded_events"] = discarded_events_;
  j["lost_packets"] = lost_packets_;
  j["trace"] = to_json(trace_);
  // The handler-count sweep (`tracebench model fit` reads ecbs and
  // extra_predicate from here).
  put_handler_count(&j, handlers_.size(), config_.extra_predicate);
  nlohmann::json hs = nlohmann::json::array();
  for (const Handler& h : handlers_) {
    nlohmann::json x = {{"channel", h.channel},
                        {"filter", h.filter.empty() ? nlohmann::json(nullptr) : nlohmann::json(h.filter)},
                        {"events", h.trace.events},
                        {"events_checked", h.trace.fields_verified},
                        {"discarded_events", h.discarded_events},
                        {"lost_packets", h.lost_packets}};
    hs.push_back(std::move(x));
  }
  j["handlers"] = std::move(hs);
  return j;
}

void LttngTracer::teardown() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (session_created_) {
    // Stops it too.  A daemon that does not answer keeps it: `tracebench
    // cleanup` removes it once this process is gone.
    (void)ctl_call("lttng: destroy session " + session_, [&] { return lttng_destroy_session(session_.c_str()); });
    session_created_ = false;
  }
  if (handle_) {
    lttng_destroy_handle(handle_);
    handle_ = nullptr;
  }
  if (!trace_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(trace_dir_, ec);
    trace_dir_.clear();
  }
  started_sessiond_ = 0;  // kept for the next attach (use_sessiond())
  started_ = event_enabled_ = false;
}

TRACEBENCH_REGISTER_TRACER(lttng, [] { return std::make_unique<LttngTracer>(); });
TRACEBENCH_REGISTER_CLEANUP(lttng, [](bool remove) { return cleanup_leftovers(remove); });

}  // namespace tracebench::lttng
