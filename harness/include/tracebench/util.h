#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tracebench/status.h"

namespace tracebench {

// Hex sha256 of a file (optionally gunzipped first); "" when unreadable.
std::string sha256_file(const std::string& path, bool gunzip);

// Writes `data` to `path` atomically: a temp file in the same directory,
// fsync, then rename.  Readers see the old file or the new one, never half.
Status write_file_atomic(const std::string& path, const std::string& data);

// Parses a JSON file; the error names the file and what is wrong.
Status read_json_file(const std::string& path, nlohmann::json* j);

// "2026-11-22T05:30:08Z" and the compact "20261122T053008Z" for directory names.
std::string utc_now_iso8601();
std::string utc_now_compact();

}  // namespace tracebench
