#include "ctf_count.h"

#include <filesystem>

#ifdef TRACEBENCH_CROSSCHECK_BABELTRACE2
#include <babeltrace2/babeltrace.h>
#endif

namespace tracebench::crosscheck {

#ifndef TRACEBENCH_CROSSCHECK_BABELTRACE2

Status count_ctf(const std::string&, const CtfExpect&, CtfCount*) { return Status::error(ctf_reader_missing()); }
std::string ctf_reader_missing() {
  return "tracebench was built without libbabeltrace2 (apt-get install libbabeltrace2-dev, then rebuild)";
}

#else

namespace {

constexpr std::uint32_t kHotTag = 0x74620001u;  // what the loop's hot events carry
constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";

std::string take_error() {
  const bt_error* err = bt_current_thread_take_error();
  if (!err) return "no detail";
  std::string msg;
  for (std::uint64_t i = 0; i < bt_error_get_cause_count(err); ++i)
    msg += (msg.empty() ? "" : "; ") + std::string(bt_error_cause_get_message(bt_error_borrow_cause_by_index(err, i)));
  bt_error_release(err);
  return msg;
}

struct Sink {
  const CtfExpect* expect;
  CtfCount* out;
};

bool fields_hold(const Sink& s, const bt_event* ev) {
  const bt_field* payload = bt_event_borrow_payload_field_const(ev);
  if (!payload) return false;
  if (s.expect->payload == 0) {
    const bt_field* tag = bt_field_structure_borrow_member_field_by_name_const(payload, "tag");
    return tag && bt_field_get_class_type(tag) == BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER &&
           bt_field_integer_unsigned_get_value(tag) == kHotTag;
  }
  const bt_field* data = bt_field_structure_borrow_member_field_by_name_const(payload, "data");
  if (!data || bt_field_get_class_type(data) != BT_FIELD_CLASS_TYPE_STRING) return false;
  const std::uint64_t len = bt_field_string_get_length(data);
  const char* bytes = bt_field_string_get_value(data);
  if (len != s.expect->payload) return false;
  for (std::uint64_t i = 0; i < len; ++i) {
    if (bytes[i] != kAlphabet[i % 36]) return false;
  }
  return true;
}

void tally(Sink* s, const bt_message* msg) {
  if (bt_message_get_type(msg) == BT_MESSAGE_TYPE_DISCARDED_EVENTS) {
    std::uint64_t n = 0;
    if (bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE) s->out->discarded += n;
    return;
  }
  if (bt_message_get_type(msg) != BT_MESSAGE_TYPE_EVENT) return;
  const bt_event* ev = bt_message_event_borrow_event_const(msg);
  const char* name = bt_event_class_get_name(bt_event_borrow_class_const(ev));
  if (!name || s->expect->event != name) {
    s->out->other_events++;
    return;
  }
  s->out->events++;
  s->out->checked++;
  if (!fields_hold(*s, ev)) s->out->bad++;
}

bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator* it, void* data) {
  bt_message_array_const msgs;
  std::uint64_t n = 0;
  switch (bt_message_iterator_next(it, &msgs, &n)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    default: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    tally(static_cast<Sink*>(data), msgs[i]);
    bt_message_put_ref(msgs[i]);
  }
  return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

struct Graph {
  const bt_plugin* ctf = nullptr;
  const bt_plugin* utils = nullptr;
  bt_graph* graph = nullptr;
  bt_value* params = nullptr;
  ~Graph() {
    bt_value_put_ref(params);
    bt_graph_put_ref(graph);
    bt_plugin_put_ref(utils);
    bt_plugin_put_ref(ctf);
  }
};

// Every stream of the trace in `dir` through the muxer into the sink.
Status connect(Graph* g, const std::string& dir, Sink* sink) {
  const bt_component_source* src = nullptr;
  const bt_component_filter* mux = nullptr;
  const bt_component_sink* out = nullptr;
  bt_value* inputs = nullptr;
  if (bt_value_map_insert_empty_array_entry(g->params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK ||
      bt_value_array_append_string_element(inputs, dir.c_str()) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK ||
      bt_graph_add_source_component(g->graph, bt_plugin_borrow_source_component_class_by_name_const(g->ctf, "fs"),
                                    "src", g->params, BT_LOGGING_LEVEL_WARNING,
                                    &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
      bt_graph_add_filter_component(g->graph, bt_plugin_borrow_filter_component_class_by_name_const(g->utils, "muxer"),
                                    "mux", nullptr, BT_LOGGING_LEVEL_WARNING,
                                    &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
      bt_graph_add_simple_sink_component(g->graph, "count", nullptr, consume, nullptr, sink, &out) !=
          BT_GRAPH_ADD_COMPONENT_STATUS_OK)
    return Status::error("babeltrace2 cannot open " + dir + ": " + take_error());
  for (std::uint64_t i = 0; i < bt_component_source_get_output_port_count(src); ++i) {
    if (bt_graph_connect_ports(g->graph, bt_component_source_borrow_output_port_by_index_const(src, i),
                               bt_component_filter_borrow_input_port_by_index_const(mux, i),
                               nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
      return Status::error("babeltrace2: connecting a stream of " + dir + ": " + take_error());
  }
  if (bt_graph_connect_ports(g->graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                             bt_component_sink_borrow_input_port_by_index_const(out, 0),
                             nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
    return Status::error("babeltrace2: connecting the muxer: " + take_error());
  return Status::ok();
}

Status count_one(const std::string& dir, Sink* sink) {
  Graph g;
  if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &g.ctf) != BT_PLUGIN_FIND_STATUS_OK ||
      bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &g.utils) != BT_PLUGIN_FIND_STATUS_OK)
    return Status::error("babeltrace2's ctf and utils plugins are missing: " + take_error());
  g.graph = bt_graph_create(0);
  g.params = bt_value_map_create();
  if (!g.graph || !g.params) return Status::error("babeltrace2: out of memory");
  TB_TRY(connect(&g, dir, sink));
  for (;;) {
    const bt_graph_run_status st = bt_graph_run(g.graph);
    if (st == BT_GRAPH_RUN_STATUS_OK) return Status::ok();
    if (st != BT_GRAPH_RUN_STATUS_AGAIN) return Status::error("babeltrace2: reading " + dir + ": " + take_error());
  }
}

}  // namespace

Status count_ctf(const std::string& root, const CtfExpect& expect, CtfCount* out) {
  *out = CtfCount{};
  Sink sink{&expect, out};
  std::error_code ec;
  int traces = 0;
  for (std::filesystem::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().filename() == "metadata") {
      TB_TRY(count_one(it->path().parent_path().string(), &sink));
      ++traces;
    }
  }
  if (traces == 0) return Status::error("no CTF trace under " + root);
  return Status::ok();
}

std::string ctf_reader_missing() {
  const bt_plugin* ctf = nullptr;
  if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) != BT_PLUGIN_FIND_STATUS_OK) {
    bt_current_thread_clear_error();
    return "babeltrace2's ctf plugin is missing (apt-get install libbabeltrace2-0)";
  }
  bt_plugin_put_ref(ctf);
  return "";
}

#endif

}  // namespace tracebench::crosscheck
