#include "lava_yaml.h"

#include <yaml.h>

#include <memory>

#include <fmt/format.h>

namespace tracebench::lava {
namespace {

// Aliases may point back at their ancestors; depth bounds the walk.
constexpr int kMaxDepth = 64;
// An alias is expanded where it is used, so a few lines of aliases of
// aliases (the "billion laughs") make a tree of 10^9 nodes: the expansion
// stops at this many nodes, far above any file or log line LAVA writes.
constexpr std::size_t kMaxNodes = 100000;
// The largest text parsed: an identity file or one log record is far smaller.
constexpr std::size_t kMaxBytes = 16u << 20;

struct Walk {
  yaml_document_t* doc;
  std::size_t nodes = 0, bytes = 0;  // made so far: nodes, and scalars' bytes
  bool over = false;
};

nlohmann::json node_to_json(Walk* w, yaml_node_t* node, int depth) {
  if (node == nullptr || depth > kMaxDepth || w->over) return nullptr;
  if (++w->nodes > kMaxNodes) {
    w->over = true;
    return nullptr;
  }
  yaml_document_t* doc = w->doc;
  switch (node->type) {
    case YAML_SCALAR_NODE: {
      // An alias of a long scalar copies it at each use: the copies are bounded too.
      if ((w->bytes += node->data.scalar.length) > 4 * kMaxBytes) {
        w->over = true;
        return nullptr;
      }
      std::string v(reinterpret_cast<const char*>(node->data.scalar.value), node->data.scalar.length);
      // A plain `~`, `null` or nothing is YAML's null (a token never is).
      if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && (v.empty() || v == "~" || v == "null")) return nullptr;
      return v;
    }
    case YAML_SEQUENCE_NODE: {
      nlohmann::json a = nlohmann::json::array();
      for (yaml_node_item_t* i = node->data.sequence.items.start; i < node->data.sequence.items.top; ++i)
        a.push_back(node_to_json(w, yaml_document_get_node(doc, *i), depth + 1));
      return a;
    }
    case YAML_MAPPING_NODE: {
      nlohmann::json o = nlohmann::json::object();
      for (yaml_node_pair_t* p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; ++p) {
        nlohmann::json key = node_to_json(w, yaml_document_get_node(doc, p->key), depth + 1);
        if (!key.is_string()) continue;  // lavacli's files and LAVA's metadata have string keys
        o[key.get<std::string>()] = node_to_json(w, yaml_document_get_node(doc, p->value), depth + 1);
      }
      return o;
    }
    default: return nullptr;
  }
}

}  // namespace

Status parse_yaml(const std::string& text, const std::string& what, nlohmann::json* out) {
  if (text.size() > kMaxBytes)
    return Status::error(fmt::format("{}: {} bytes of YAML, more than the {} read", what, text.size(), kMaxBytes));
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return Status::error(what + ": cannot initialise the YAML parser (out of memory)");
  std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t*)> parser_guard(&parser, yaml_parser_delete);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  yaml_document_t doc;
  if (!yaml_parser_load(&parser, &doc)) {
    return Status::error(what + ": line " + std::to_string(parser.problem_mark.line + 1) + ": " +
                         (parser.problem ? parser.problem : "invalid YAML"));
  }
  std::unique_ptr<yaml_document_t, void (*)(yaml_document_t*)> doc_guard(&doc, yaml_document_delete);
  Walk walk{&doc};
  *out = node_to_json(&walk, yaml_document_get_root_node(&doc), 0);
  if (walk.over)
    return Status::error(
        fmt::format("{}: its aliases expand to more than {} nodes or {} bytes (an alias bomb?): refused", what,
                    kMaxNodes, 4 * kMaxBytes));
  return Status::ok();
}

}  // namespace tracebench::lava
