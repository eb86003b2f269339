// Where a LAVA server is and who we are on it: an identity as lavacli keeps
// them ($XDG_CONFIG_HOME/lavacli.yaml, else ~/.config/lavacli.yaml: a
// mapping of identity names to {uri, username, token, ...}), or the
// environment (LAVA_URL, LAVA_TOKEN).
#pragma once

#include <map>
#include <string>

#include "tracebench/status.h"

namespace tracebench::lava {

struct LavaServer {
  std::string base_url;  // http://host:port, no trailing slash (the API is base_url + /api/v0.2/)
  std::string username;  // may be empty: the token alone identifies the user
  std::string token;     // secret: never printed, never written to a result
  std::string source;    // where it came from, for messages: "identity tracebench-lab in FILE", "LAVA_URL"
};

// lavacli's file: $XDG_CONFIG_HOME/lavacli.yaml, else $HOME/.config/lavacli.yaml.
std::string default_identity_file(const std::map<std::string, std::string>& env);

// The server's base URL from lavacli's `uri` (the XML-RPC endpoint,
// http://host/RPC2) or a plain base URL; user:token in the URL is moved to
// *username / *token (when they are empty).  Refuses what is not http(s).
Status base_url_from_uri(const std::string& uri, std::string* base, std::string* username, std::string* token);

// Identity `name` from lavacli's file text (`file` names it in errors).
Status identity_from_yaml(const std::string& text, const std::string& file, const std::string& name, LavaServer* out);

// The server to use: --identity NAME (from `identity_file`, default lavacli's)
// when given; else LAVA_URL + LAVA_TOKEN from `env`; else lavacli's `default`
// identity.  The error says which of these to set.
Status resolve_server(const std::string& identity, const std::string& identity_file,
                      const std::map<std::string, std::string>& env, LavaServer* out);

// The process's environment as a map (for resolve_server).
std::map<std::string, std::string> process_env();

}  // namespace tracebench::lava
