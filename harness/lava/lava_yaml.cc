#include "lava_yaml.h"

#include <yaml.h>

#include <memory>

namespace tracebench::lava {
namespace {

// Aliases may point back at their ancestors; depth bounds the walk.
constexpr int kMaxDepth = 64;

nlohmann::json node_to_json(yaml_document_t* doc, yaml_node_t* node, int depth) {
  if (node == nullptr || depth > kMaxDepth) return nullptr;
  switch (node->type) {
    case YAML_SCALAR_NODE: {
      std::string v(reinterpret_cast<const char*>(node->data.scalar.value), node->data.scalar.length);
      // A plain `~`, `null` or nothing is YAML's null (a token never is).
      if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && (v.empty() || v == "~" || v == "null")) return nullptr;
      return v;
    }
    case YAML_SEQUENCE_NODE: {
      nlohmann::json a = nlohmann::json::array();
      for (yaml_node_item_t* i = node->data.sequence.items.start; i < node->data.sequence.items.top; ++i)
        a.push_back(node_to_json(doc, yaml_document_get_node(doc, *i), depth + 1));
      return a;
    }
    case YAML_MAPPING_NODE: {
      nlohmann::json o = nlohmann::json::object();
      for (yaml_node_pair_t* p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; ++p) {
        nlohmann::json key = node_to_json(doc, yaml_document_get_node(doc, p->key), depth + 1);
        if (!key.is_string()) continue;  // lavacli's files and LAVA's metadata have string keys
        o[key.get<std::string>()] = node_to_json(doc, yaml_document_get_node(doc, p->value), depth + 1);
      }
      return o;
    }
    default: return nullptr;
  }
}

}  // namespace

Status parse_yaml(const std::string& text, const std::string& what, nlohmann::json* out) {
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
  *out = node_to_json(&doc, yaml_document_get_root_node(&doc), 0);
  return Status::ok();
}

}  // namespace tracebench::lava
