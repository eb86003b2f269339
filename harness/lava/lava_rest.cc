#include "lava_rest.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace tracebench::lava {
namespace {

// A reply is read up to the size a log file given with --log may have; a
// server that sends more is cut off (libcurl: CURLE_WRITE_ERROR).
constexpr std::size_t kMaxReplyBytes = std::size_t{1} << 31;

size_t append_body(char* data, size_t size, size_t n, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() + size * n > kMaxReplyBytes) return 0;
  body->append(data, size * n);
  return size * n;
}

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string api_url(const LavaServer& s, const std::string& path) {
  if (path.rfind("http://", 0) == 0 || path.rfind("https://", 0) == 0) return path;  // a `next` link
  return s.base_url + "/api/v0.2/" + path;
}

}  // namespace

std::string reply_error(const HttpReply& r) {
  std::string what = "HTTP " + std::to_string(r.code);
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object()) {
    for (const char* key : {"message", "detail", "error"})
      if (j.contains(key) && j[key].is_string()) return what + ": " + j[key].get<std::string>();
    return what + ": " + j.dump();
  }
  std::string start = r.body.substr(0, 200);
  for (char& ch : start)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return start.empty() ? what : what + ": " + start;
}

RestClient::RestClient(LavaServer server, long timeout_s) : server_(std::move(server)), timeout_s_(timeout_s) {
  global_init_once();
}

Status RestClient::request(const std::string& url, const std::string* post_body, HttpReply* reply) const {
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::error("libcurl could not start a request (out of memory)");
  curl_slist* headers = nullptr;
  const std::string auth = "Authorization: Token " + server_.token;
  headers = curl_slist_append(headers, auth.c_str());
  headers = curl_slist_append(headers, "Accept: application/json");
  if (post_body) headers = curl_slist_append(headers, "Content-Type: application/json");
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_guard(headers, curl_slist_free_all);
  char errbuf[CURL_ERROR_SIZE] = {0};
  reply->body.clear();
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &reply->body);
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT, timeout_s_);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  if (post_body) curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, post_body->c_str());
  CURLcode rc = curl_easy_perform(curl.get());
  if (rc != CURLE_OK) {
    reply->code = 0;
    return Status::error("no reply from the LAVA server at " + url + ": " +
                         (errbuf[0] ? errbuf : curl_easy_strerror(rc)) +
                         " (is the lab up? scripts/lava/lab.sh status)");
  }
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &reply->code);
  return Status::ok();
}

Status RestClient::get(const std::string& path, HttpReply* reply) const {
  return request(api_url(server_, path), nullptr, reply);
}

Status RestClient::post_json(const std::string& path, const nlohmann::json& body, HttpReply* reply) const {
  const std::string text = body.dump();
  return request(api_url(server_, path), &text, reply);
}

Status RestClient::get_json(const std::string& path, nlohmann::json* out) const {
  HttpReply r;
  TB_TRY(get(path, &r));
  if (r.code != 200) return Status::error("GET " + api_url(server_, path) + ": " + reply_error(r));
  *out = nlohmann::json::parse(r.body, nullptr, false);
  if (out->is_discarded()) return Status::error("GET " + api_url(server_, path) + ": the reply is not JSON");
  return Status::ok();
}

Status RestClient::get_all(const std::string& path, std::vector<nlohmann::json>* rows) const {
  std::string next = path;
  for (int page = 0; !next.empty(); ++page) {
    if (page > 10000) return Status::error("GET " + api_url(server_, path) + ": more than 10000 pages");
    nlohmann::json j;
    TB_TRY(get_json(next, &j));
    if (!j.contains("results") || !j["results"].is_array())
      return Status::error("GET " + api_url(server_, next) + ": no `results` list in the reply");
    for (auto& row : j["results"]) rows->push_back(row);
    next = j.value("next", nlohmann::json()).is_string() ? j["next"].get<std::string>() : std::string();
  }
  return Status::ok();
}

Status submit_job(const RestClient& c, const std::string& definition, std::vector<long>* ids) {
  HttpReply r;
  TB_TRY(c.post_json("jobs/", {{"definition", definition}}, &r));
  if (r.code != 201 && r.code != 200) return Status::error("LAVA refused the job: " + reply_error(r));
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_object() || !j.contains("job_ids") || !j["job_ids"].is_array() || j["job_ids"].empty())
    return Status::error("LAVA accepted the job but its reply has no job_ids: " + r.body.substr(0, 200));
  for (auto& id : j["job_ids"]) {
    if (!id.is_number_integer()) return Status::error("LAVA's reply has a job id that is not a number: " + id.dump());
    ids->push_back(id.get<long>());
  }
  return Status::ok();
}

}  // namespace tracebench::lava
