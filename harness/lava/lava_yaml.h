// YAML documents as JSON values (libyaml): what LAVA and lavacli keep in YAML
// (lavacli's identity file, a test case's metadata) read into the types the
// rest of the suite already handles.  Scalars become strings (YAML's "20.0"
// and "true" included: the reader converts what it needs), sequences
// arrays, mappings objects.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tracebench/status.h"

namespace tracebench::lava {

// Parses the first document of `text`; an empty text is null.  `what` names
// the input in the error ("~/.config/lavacli.yaml: line 3: ...").
Status parse_yaml(const std::string& text, const std::string& what, nlohmann::json* out);

}  // namespace tracebench::lava
