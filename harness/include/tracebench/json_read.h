// Typed reads of a JSON document's fields for the readers that turn a file
// the suite wrote back into its type: each read names the field by its path
// ("measured.rate_hz") when it is missing or of another type, so a damaged
// or foreign file is refused with what is wrong and where.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/status.h"

namespace tracebench {

class JsonFields {
 public:
  // `path` names `j` in messages ("" for the document itself).
  JsonFields(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {}

  Status object() const {
    if (!j_.is_object()) return Status::error(where() + "is " + kind(j_) + ", not an object");
    return Status::ok();
  }
  bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
  // The object under `key` (which must be one).
  Status child(const char* key, JsonFields* out) const {
    TB_TRY(present(key));
    *out = JsonFields(j_.at(key), name(key));
    return out->object();
  }
  Status number(const char* key, double* out) const {
    TB_TRY(present(key));
    const nlohmann::json& v = j_.at(key);
    if (!v.is_number()) return wrong(key, v, "a number");
    *out = v.get<double>();
    return Status::ok();
  }
  // A number or null (absent: written so).
  Status number_or_null(const char* key, std::optional<double>* out) const {
    TB_TRY(present(key));
    const nlohmann::json& v = j_.at(key);
    if (v.is_null()) {
      out->reset();
      return Status::ok();
    }
    if (!v.is_number()) return wrong(key, v, "a number or null");
    *out = v.get<double>();
    return Status::ok();
  }
  Status boolean(const char* key, bool* out) const {
    TB_TRY(present(key));
    const nlohmann::json& v = j_.at(key);
    if (!v.is_boolean()) return wrong(key, v, "true or false");
    *out = v.get<bool>();
    return Status::ok();
  }
  Status string(const char* key, std::string* out) const {
    TB_TRY(present(key));
    const nlohmann::json& v = j_.at(key);
    if (!v.is_string()) return wrong(key, v, "a string");
    *out = v.get<std::string>();
    return Status::ok();
  }
  Status numbers(const char* key, std::vector<double>* out) const {
    return array_of(
        key, "an array of numbers", [](const nlohmann::json& x) { return x.is_number(); }, out);
  }
  Status strings(const char* key, std::vector<std::string>* out) const {
    return array_of(
        key, "an array of strings", [](const nlohmann::json& x) { return x.is_string(); }, out);
  }

 private:
  // The array under `key`, each element of the kind `is` accepts.
  template <class T, class Is>
  Status array_of(const char* key, const char* expected, Is is, std::vector<T>* out) const {
    TB_TRY(present(key));
    const nlohmann::json& v = j_.at(key);
    if (!v.is_array()) return wrong(key, v, expected);
    out->clear();
    for (const auto& x : v) {
      if (!is(x)) return wrong(key, x, expected);
      out->push_back(x.get<T>());
    }
    return Status::ok();
  }
  static std::string kind(const nlohmann::json& v) {
    const std::string t = v.type_name();  // "null", "number", "object", ...
    return (t == "array" || t == "object") ? "an " + t : "a " + t;
  }
  std::string name(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  std::string where() const { return path_.empty() ? "the document " : path_ + " "; }
  Status present(const char* key) const {
    if (!j_.is_object()) return Status::error(where() + "is " + kind(j_) + ", not an object");
    if (!j_.contains(key)) return Status::error(name(key) + " is missing");
    return Status::ok();
  }
  Status wrong(const char* key, const nlohmann::json& v, const char* expected) const {
    return Status::error(name(key) + " is " + kind(v) + ", not " + expected);
  }

  nlohmann::json j_;  // a copy: readers are small and a reference could dangle in child()
  std::string path_;
};

}  // namespace tracebench
