// LAVA's REST API v0.2 over libcurl: the few calls submit, wait and fetch
// need.  The token goes in the `Authorization: Token` header only; no error
// message or log line carries it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lava_identity.h"
#include "tracebench/status.h"

namespace tracebench::lava {

struct HttpReply {
  long code = 0;  // HTTP status; 0 when no reply came
  std::string body;
};

// What a failed reply says: LAVA's (Django REST framework's) `message` or
// `detail`, else the body's start.  "HTTP 400: job submission failed: ...".
std::string reply_error(const HttpReply& r);

class RestClient {
 public:
  explicit RestClient(LavaServer server, long timeout_s = 60);
  const LavaServer& server() const { return server_; }

  // GET base/api/v0.2/<path>; an error only when no HTTP reply came (the
  // server is down, DNS, TLS): a 4xx/5xx is a reply the caller judges.
  Status get(const std::string& path, HttpReply* reply) const;
  Status post_json(const std::string& path, const nlohmann::json& body, HttpReply* reply) const;

  // GET that must answer 200 with JSON.
  Status get_json(const std::string& path, nlohmann::json* out) const;
  // Every row of a paginated list (follows `next`).
  Status get_all(const std::string& path, std::vector<nlohmann::json>* rows) const;

 private:
  Status request(const std::string& url, const std::string* post_body, HttpReply* reply) const;
  LavaServer server_;
  long timeout_s_;
};

// POST /jobs/ with a job definition (YAML text): the job ids LAVA gave it
// (several for a multinode job).  A refused definition is an error with
// LAVA's message.
Status submit_job(const RestClient& c, const std::string& definition, std::vector<long>* ids);

}  // namespace tracebench::lava
