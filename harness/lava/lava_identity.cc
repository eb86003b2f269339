#include "lava_identity.h"

#include <unistd.h>

#include "lava_yaml.h"
#include "tracebench/util.h"

extern char** environ;

namespace tracebench::lava {
namespace {

std::string get(const std::map<std::string, std::string>& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

}  // namespace

std::string default_identity_file(const std::map<std::string, std::string>& env) {
  if (std::string xdg = get(env, "XDG_CONFIG_HOME"); !xdg.empty()) return xdg + "/lavacli.yaml";
  return get(env, "HOME") + "/.config/lavacli.yaml";
}

Status base_url_from_uri(const std::string& uri, std::string* base, std::string* username, std::string* token) {
  std::string scheme;
  for (const char* s : {"http://", "https://"})
    if (uri.rfind(s, 0) == 0) scheme = s;
  if (scheme.empty()) return Status::error("'" + uri + "' is not an http:// or https:// URL");
  std::string rest = uri.substr(scheme.size());
  std::string host = rest.substr(0, rest.find('/'));
  std::string path = rest.size() > host.size() ? rest.substr(host.size()) : std::string();
  // user:token@host, as lavacli accepts in --uri
  if (auto at = host.rfind('@'); at != std::string::npos) {
    std::string userinfo = host.substr(0, at);
    host = host.substr(at + 1);
    auto colon = userinfo.find(':');
    if (username->empty()) *username = userinfo.substr(0, colon);
    if (colon != std::string::npos && token->empty()) *token = userinfo.substr(colon + 1);
  }
  if (host.empty()) return Status::error("'" + scheme + "...' has no host");
  while (!path.empty() && path.back() == '/') path.pop_back();
  for (const char* tail : {"/RPC2", "/api/v0.2"})
    if (path.size() >= std::string(tail).size() &&
        path.compare(path.size() - std::string(tail).size(), std::string::npos, tail) == 0)
      path.resize(path.size() - std::string(tail).size());
  *base = scheme + host + path;
  return Status::ok();
}

Status identity_from_yaml(const std::string& text, const std::string& file, const std::string& name, LavaServer* out) {
  nlohmann::json doc;
  TB_TRY(parse_yaml(text, file, &doc));
  if (!doc.is_object()) return Status::error(file + ": expected a mapping of identity names (lavacli's format)");
  if (!doc.contains(name) || !doc[name].is_object()) {
    std::string known;
    for (auto& [k, v] : doc.items()) known += (known.empty() ? "" : ", ") + k;
    return Status::error(file + ": no identity '" + name + "' (it has: " + (known.empty() ? "none" : known) +
                         "); add one with `lavacli identities add --uri URL --username USER --token TOKEN " + name +
                         "`");
  }
  const nlohmann::json& id = doc[name];
  auto str = [&](const char* key) {
    return id.contains(key) && id[key].is_string() ? id[key].get<std::string>() : std::string();
  };
  if (str("uri").empty()) return Status::error(file + ": identity '" + name + "' has no uri");
  out->username = str("username");
  out->token = str("token");
  if (Status s = base_url_from_uri(str("uri"), &out->base_url, &out->username, &out->token); !s)
    return Status::error(file + ": identity '" + name + "': uri " + s.message());
  if (out->token.empty())
    return Status::error(file + ": identity '" + name +
                         "' has no token (LAVA's REST API needs one: Profile > API tokens)");
  out->source = "identity " + name + " in " + file;
  return Status::ok();
}

Status resolve_server(const std::string& identity, const std::string& identity_file,
                      const std::map<std::string, std::string>& env, LavaServer* out) {
  const std::string file = identity_file.empty() ? default_identity_file(env) : identity_file;
  if (identity.empty() && identity_file.empty() && !get(env, "LAVA_URL").empty()) {
    if (get(env, "LAVA_TOKEN").empty())
      return Status::error("LAVA_URL is set but LAVA_TOKEN is not: set both, or use --identity NAME");
    out->token = get(env, "LAVA_TOKEN");
    if (Status s = base_url_from_uri(get(env, "LAVA_URL"), &out->base_url, &out->username, &out->token); !s)
      return Status::error("LAVA_URL: " + s.message());
    out->source = "LAVA_URL";
    return Status::ok();
  }
  const std::string name = identity.empty() ? "default" : identity;
  if (access(file.c_str(), F_OK) != 0)
    return Status::error("no LAVA server given: " + file +
                         " does not exist; pass --identity NAME [--identity-file FILE] or set LAVA_URL and LAVA_TOKEN");
  std::string text;
  TB_TRY(read_input_file(file, 1 << 20, &text));
  return identity_from_yaml(text, file, name, out);
}

std::map<std::string, std::string> process_env() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

}  // namespace tracebench::lava
