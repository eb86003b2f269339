#include "ctf_reader.h"

#include <babeltrace2/babeltrace.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "ctl_status.h"
#include "kmod/include/tracebench_kmod_abi.h"
#include "payload_pattern.h"

namespace tracebench::lttng {
namespace {

namespace fs = std::filesystem;

// Text of babeltrace2's current-thread error (and releases it).
std::string take_bt_error() {
  const bt_error* err = bt_current_thread_take_error();
  if (!err) return "no detail";
  std::string msg;
  std::uint64_t n = bt_error_get_cause_count(err);
  for (std::uint64_t i = 0; i < n; ++i) {
    const bt_error_cause* c = bt_error_borrow_cause_by_index(err, i);
    if (!msg.empty()) msg += "; ";
    msg += bt_error_cause_get_message(c);
  }
  bt_error_release(err);
  return msg.empty() ? "no detail" : msg;
}

struct SinkState {
  const TraceExpectation* expect;
  TraceSummary* out;
  bt_message_iterator* it = nullptr;
  // When set, every message is tallied a second time in the summary of the
  // channel its stream belongs to.
  std::map<std::string, TraceSummary>* by_channel = nullptr;
  std::map<const bt_stream*, TraceSummary*> channel_of;
};

void mismatch(SinkState* s, const std::string& what) {
  s->out->mismatches++;
  if (s->out->first_mismatch.empty()) {
    s->out->first_mismatch = "event " + std::to_string(s->out->events) + ": " + what;
  }
}

// Payload checks (the `data` field) are counted apart from other fields:
// they feed the payload part of the verification contract.
void payload_mismatch(SinkState* s, const std::string& what) {
  s->out->payload_mismatched_events++;
  if (s->out->first_payload_problem.empty())
    s->out->first_payload_problem = "event " + std::to_string(s->out->events) + ": " + what;
}

void payload_truncated(SinkState* s, std::uint64_t len) {
  if (s->out->payload_truncated_events++ == 0) s->out->payload_kept_bytes = len;
  if (s->out->first_payload_problem.empty())
    s->out->first_payload_problem = "event " + std::to_string(s->out->events) + ": `data` has " + std::to_string(len) +
                                    " bytes, expected " + std::to_string(*s->expect->payload_bytes);
}

// The IntFieldChecks of events named `name`; false after a mismatch.
bool check_int_fields(SinkState* s, const bt_event* ev, const std::string& name) {
  const bt_field* payload = bt_event_borrow_payload_field_const(ev);
  for (const IntFieldCheck& c : s->expect->int_fields) {
    if (c.event_name != name) continue;
    const bt_field* f =
        payload ? bt_field_structure_borrow_member_field_by_name_const(payload, c.field.c_str()) : nullptr;
    std::int64_t v = 0;
    if (f && bt_field_get_class_type(f) == BT_FIELD_CLASS_TYPE_SIGNED_INTEGER) {
      v = bt_field_integer_signed_get_value(f);
    } else if (f && bt_field_get_class_type(f) == BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER) {
      v = static_cast<std::int64_t>(bt_field_integer_unsigned_get_value(f));
    } else {
      mismatch(s, name + " has no integer field `" + c.field + "`");
      return false;
    }
    if (v != c.value) {
      mismatch(s, name + " `" + c.field + "` is " + std::to_string(v) + ", expected " + std::to_string(c.value));
      return false;
    }
  }
  return true;
}

const bt_field* member(const bt_field* payload, const char* name) {
  return payload ? bt_field_structure_borrow_member_field_by_name_const(payload, name) : nullptr;
}

bool is_unsigned(const bt_field* f) { return f && bt_field_get_class_type(f) == BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER; }

// The companion module's events: false after a mismatch.
bool check_kmod_event(SinkState* s, const bt_field* payload) {
  const bt_field* seq_f = member(payload, "seq");
  if (!is_unsigned(seq_f)) {
    mismatch(s, "no unsigned integer field `seq`");
    return false;
  }
  std::uint64_t seq = bt_field_integer_unsigned_get_value(seq_f);
  if (const bt_field* value = member(payload, "value")) {
    if (!is_unsigned(value) || bt_field_integer_unsigned_get_value(value) != (seq ^ TB_KMOD_FIXED_MAGIC)) {
      mismatch(s, "`value` is not seq ^ TB_KMOD_FIXED_MAGIC (seq " + std::to_string(seq) + ")");
      return false;
    }
  }
  if (const bt_field* data = member(payload, "data")) {
    s->out->payload_checked_events++;
    bt_field_class_type t = bt_field_get_class_type(data);
    if (!bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY)) {
      payload_mismatch(s, "`data` is not a byte sequence");
      return false;
    }
    std::uint64_t len = bt_field_array_get_length(data);
    if (s->expect->payload_bytes && len != *s->expect->payload_bytes) {
      payload_truncated(s, len);
      return false;
    }
    for (std::uint64_t i = 0; i < len; ++i) {
      const bt_field* b = bt_field_array_borrow_element_field_by_index_const(data, i);
      if (!is_unsigned(b) ||
          bt_field_integer_unsigned_get_value(b) != tb_kmod_expected_byte(seq, static_cast<__u32>(i))) {
        payload_mismatch(
            s, "`data` byte " + std::to_string(i) + " of seq " + std::to_string(seq) + " differs from the pattern");
        return false;
      }
    }
    s->out->payload_bytes_verified += len;
  }
  return true;
}

void check_event(SinkState* s, const bt_event* ev) {
  const bt_field* payload = bt_event_borrow_payload_field_const(ev);
  if (s->expect->kmod_pattern) {
    if (!check_kmod_event(s, payload)) return;
  } else if (s->expect->payload_bytes) {
    const bt_field* f = payload ? bt_field_structure_borrow_member_field_by_name_const(payload, "data") : nullptr;
    s->out->payload_checked_events++;
    if (f && bt_field_get_class_type(f) == BT_FIELD_CLASS_TYPE_STATIC_ARRAY) {
      // tracebench:array64: a fixed-size array of byte integers.
      std::uint64_t len = bt_field_array_get_length(f);
      if (len != *s->expect->payload_bytes) {
        payload_truncated(s, len);
        return;
      }
      for (std::uint64_t i = 0; i < len; ++i) {
        const bt_field* b = bt_field_array_borrow_element_field_by_index_const(f, i);
        if (!is_unsigned(b) || bt_field_integer_unsigned_get_value(b) != static_cast<std::uint8_t>(payload_byte(i))) {
          payload_mismatch(s, "`data` element " + std::to_string(i) + " differs from the pattern");
          return;
        }
      }
      s->out->payload_bytes_verified += len;
    } else {
      if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING) {
        payload_mismatch(s, "no text field `data`");
        return;
      }
      std::uint64_t len = bt_field_string_get_length(f);
      const char* data = bt_field_string_get_value(f);
      if (len != *s->expect->payload_bytes) {
        payload_truncated(s, len);
        return;
      }
      for (std::uint64_t i = 0; i < len; ++i) {
        if (data[i] != payload_byte(i)) {
          payload_mismatch(s, "`data` byte " + std::to_string(i) + " differs from the pattern");
          return;
        }
      }
      s->out->payload_bytes_verified += len;
    }
  }
  if (s->expect->hot_tag) {
    const bt_field* f = payload ? bt_field_structure_borrow_member_field_by_name_const(payload, "tag") : nullptr;
    if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER) {
      mismatch(s, "no unsigned integer field `tag`");
      return;
    }
    if (bt_field_integer_unsigned_get_value(f) != *s->expect->hot_tag) {
      mismatch(s, "`tag` is " + std::to_string(bt_field_integer_unsigned_get_value(f)));
      return;
    }
  }
  if (!check_int_fields(s, ev, s->expect->event_name)) return;
  s->out->fields_verified++;
}

void tally(SinkState* s, const bt_message* msg) {
  switch (bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT: {
      const bt_event* ev = bt_message_event_borrow_event_const(msg);
      const char* name = bt_event_class_get_name(bt_event_borrow_class_const(ev));
      if (name && s->expect->event_name == name) {
        check_event(s, ev);
        s->out->events++;
      } else if (name && !s->expect->paired_event_name.empty() && s->expect->paired_event_name == name) {
        if (check_int_fields(s, ev, name)) s->out->fields_verified++;
        s->out->paired_events++;
      } else {
        s->out->other_events++;
      }
      break;
    }
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
      std::uint64_t n = 0;
      s->out->discarded_events_msgs++;
      if (bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE) {
        s->out->discarded_events += n;
      }
      break;
    }
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
      std::uint64_t n = 0;
      if (bt_message_discarded_packets_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE) {
        s->out->discarded_packets += n;
      }
      break;
    }
    case BT_MESSAGE_TYPE_PACKET_BEGINNING: s->out->packets++; break;
    default: break;
  }
}

const bt_stream* stream_of(const bt_message* msg) {
  switch (bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT: return bt_event_borrow_stream_const(bt_message_event_borrow_event_const(msg));
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS: return bt_message_discarded_events_borrow_stream_const(msg);
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS: return bt_message_discarded_packets_borrow_stream_const(msg);
    case BT_MESSAGE_TYPE_PACKET_BEGINNING:
      return bt_packet_borrow_stream_const(bt_message_packet_beginning_borrow_packet_const(msg));
    default: return nullptr;
  }
}

void on_message(SinkState* s, const bt_message* msg) {
  tally(s, msg);
  if (!s->by_channel) return;
  const bt_stream* stream = stream_of(msg);
  if (!stream) return;
  auto it = s->channel_of.find(stream);
  if (it == s->channel_of.end()) {
    const char* name = bt_stream_get_name(stream);
    it = s->channel_of.emplace(stream, &(*s->by_channel)[channel_of_stream(name ? name : "")]).first;
  }
  TraceSummary* total = s->out;
  s->out = it->second;
  tally(s, msg);
  s->out = total;
}

bt_graph_simple_sink_component_initialize_func_status sink_init(bt_message_iterator* it, void* data) {
  static_cast<SinkState*>(data)->it = it;
  return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

bt_graph_simple_sink_component_consume_func_status sink_consume(bt_message_iterator* it, void* data) {
  auto* s = static_cast<SinkState*>(data);
  bt_message_array_const msgs;
  std::uint64_t count = 0;
  switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
      return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    on_message(s, msgs[i]);
    bt_message_put_ref(msgs[i]);
  }
  return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

// RAII for the babeltrace2 objects one read needs.
struct Refs {
  const bt_plugin* ctf = nullptr;
  const bt_plugin* utils = nullptr;
  bt_graph* graph = nullptr;
  bt_value* params = nullptr;
  ~Refs() {
    bt_value_put_ref(params);
    bt_graph_put_ref(graph);
    bt_plugin_put_ref(utils);
    bt_plugin_put_ref(ctf);
  }
};

Status read_one(const std::string& dir, const TraceExpectation& expect, TraceSummary* out,
                std::map<std::string, TraceSummary>* by_channel) {
  Refs r;
  auto fail = [&](const std::string& what) {
    return Status::error("babeltrace2: " + what + " for " + dir + ": " + take_bt_error());
  };
  if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &r.ctf) != BT_PLUGIN_FIND_STATUS_OK ||
      bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &r.utils) != BT_PLUGIN_FIND_STATUS_OK) {
    return Status::error("babeltrace2's ctf and utils plugins are missing (apt-get install libbabeltrace2-0): " +
                         take_bt_error());
  }
  const bt_component_class_source* src_cls = bt_plugin_borrow_source_component_class_by_name_const(r.ctf, "fs");
  const bt_component_class_filter* mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(r.utils, "muxer");
  if (!src_cls || !mux_cls) return Status::error("babeltrace2 has no source.ctf.fs or filter.utils.muxer");
  r.graph = bt_graph_create(0);
  r.params = bt_value_map_create();
  if (!r.graph || !r.params) return fail("out of memory");
  bt_value* inputs = nullptr;
  if (bt_value_map_insert_empty_array_entry(r.params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
      bt_value_array_append_string_element(inputs, dir.c_str()) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
    return fail("building parameters");
  }
  const bt_component_source* src = nullptr;
  const bt_component_filter* mux = nullptr;
  const bt_component_sink* sink = nullptr;
  if (bt_graph_add_source_component(r.graph, src_cls, "src", r.params, BT_LOGGING_LEVEL_WARNING, &src) !=
      BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
    return fail("source.ctf.fs rejected the trace");
  }
  if (bt_graph_add_filter_component(r.graph, mux_cls, "mux", nullptr, BT_LOGGING_LEVEL_WARNING, &mux) !=
      BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
    return fail("adding filter.utils.muxer");
  }
  SinkState state{&expect, out};
  state.by_channel = by_channel;
  if (bt_graph_add_simple_sink_component(r.graph, "count", sink_init, sink_consume, nullptr, &state, &sink) !=
      BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
    return fail("adding the counting sink");
  }
  // One muxer input per stream; the muxer adds a free input port after each
  // connection.
  std::uint64_t nports = bt_component_source_get_output_port_count(src);
  for (std::uint64_t i = 0; i < nports; ++i) {
    const bt_port_output* op = bt_component_source_borrow_output_port_by_index_const(src, i);
    const bt_port_input* ip = bt_component_filter_borrow_input_port_by_index_const(mux, i);
    if (!op || !ip || bt_graph_connect_ports(r.graph, op, ip, nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
      return fail("connecting stream " + std::to_string(i) + " to the muxer");
    }
  }
  if (bt_graph_connect_ports(r.graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                             bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                             nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
    return fail("connecting the muxer to the sink");
  }
  for (;;) {
    bt_graph_run_status st = bt_graph_run(r.graph);
    if (st == BT_GRAPH_RUN_STATUS_OK) break;
    if (st == BT_GRAPH_RUN_STATUS_AGAIN) continue;
    return fail("reading the trace");
  }
  out->traces++;
  return Status::ok();
}

}  // namespace

std::vector<std::string> find_ctf_traces(const std::string& root) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().filename() == "metadata") {
      dirs.push_back(it->path().parent_path().string());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::string channel_of_stream(const std::string& stream_name) {
  std::string base = fs::path(stream_name).filename().string();
  const auto us = base.rfind('_');
  if (us == std::string::npos || us + 1 == base.size() ||
      base.find_first_not_of("0123456789", us + 1) != std::string::npos)
    return base;
  return base.substr(0, us);
}

Status read_traces(const std::string& root, const TraceExpectation& expect, TraceSummary* out,
                   std::map<std::string, TraceSummary>* by_channel) {
  *out = TraceSummary{};
  if (by_channel) by_channel->clear();
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& dir : find_ctf_traces(root)) TB_TRY(read_one(dir, expect, out, by_channel));
  out->read_ms = ms_since(t0);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) out->bytes += it->file_size(ec);
  }
  return Status::ok();
}

void report_trace(const TraceSummary& t, const TraceExpectation& expect, std::size_t payload_bytes, EventCounts* c) {
  if (payload_bytes && (expect.payload_bytes || expect.kmod_pattern)) {
    c->payload_source = PayloadSource::kWorkload;
    c->payload_checked_events = t.payload_checked_events;
    c->payload_mismatched_events = t.payload_mismatched_events;
    c->payload_truncated_events = t.payload_truncated_events;
    c->payload_kept_bytes = t.payload_kept_bytes;
    c->payload_mismatch_detail = t.first_payload_problem;
    c->payload_verified = t.payload_bytes_verified;
  }
  std::string detail;
  if (t.mismatches)
    detail = std::to_string(t.mismatches) + " of " + std::to_string(t.events + t.paired_events) +
             " recorded events do not carry what the workload did (" + t.first_mismatch + ")";
  if (t.other_events)
    detail += (detail.empty() ? "" : "; ") + std::string("the trace holds ") + std::to_string(t.other_events) +
              " events other than " + expect.event_name +
              (expect.paired_event_name.empty() ? "" : " and " + expect.paired_event_name);
  c->tracer_errors += t.mismatches + t.other_events;
  if (!detail.empty()) c->tracer_error_detail += (c->tracer_error_detail.empty() ? "" : "; ") + detail;
}

nlohmann::json to_json(const TraceSummary& t) {
  return {{"traces", t.traces},
          {"packets", t.packets},
          {"bytes", t.bytes},
          {"events", t.events},
          {"paired_events", t.paired_events},
          {"events_checked", t.fields_verified},
          {"payload_checked_events", t.payload_checked_events},
          {"other_events", t.other_events},
          {"discarded_events_in_ctf", t.discarded_events},
          {"discarded_packets_in_ctf", t.discarded_packets},
          {"read_ms", t.read_ms}};
}

bool ctf_plugin_present() {
  const bt_plugin* ctf = nullptr;
  if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) != BT_PLUGIN_FIND_STATUS_OK) {
    bt_current_thread_clear_error();
    return false;
  }
  bt_plugin_put_ref(ctf);
  return true;
}

std::string babeltrace2_version() {
  return std::to_string(bt_version_get_major()) + "." + std::to_string(bt_version_get_minor()) + "." +
         std::to_string(bt_version_get_patch());
}

}  // namespace tracebench::lttng
