#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tracebench/status.h"

namespace tracebench {

// Hex sha256 of a file (optionally gunzipped first); "" when unreadable.
std::string sha256_file(const std::string& path, bool gunzip);

// Writes `data` to `path` atomically: a temp file in the same directory,
// fsync, then rename.  Readers see the old file or the new one, never half:
// a failed write (ENOSPC, EIO) leaves the old file, or none, never a short one.
Status write_file_atomic(const std::string& path, const std::string& data);

// The largest file a command reads whole (result.json, model.json, a D
// program, a scenario): far above any real one, so a device or a runaway
// file is refused instead of read until memory runs out.
constexpr std::uint64_t kMaxInputBytes = 256ull << 20;

// Checks that `path` is a regular file of at most `max_bytes`, without
// blocking: opened with O_NONBLOCK (a FIFO named result.json does not wait
// for a writer) and refused unless fstat says regular (FIFOs, devices such
// as /dev/zero, directories).  `size` receives its length when not null.
Status check_input_file(const std::string& path, std::uint64_t max_bytes, std::uint64_t* size = nullptr);

// Reads a whole user file after check_input_file().
Status read_input_file(const std::string& path, std::uint64_t max_bytes, std::string* text);

// Parses a JSON file (read with read_input_file); the error names the file and what is wrong.
Status read_json_file(const std::string& path, nlohmann::json* j);

// Whether `a` and `b` name the same existing file (device and inode, so
// links, "./x" and symlinks count); false when either does not exist.
bool same_file(const std::string& a, const std::string& b);

// Refuses an output path that is one of the inputs (the write would destroy
// what it was computed from): `flag` names the output's option.
Status check_output_not_input(const std::string& flag, const std::string& out, const std::vector<std::string>& inputs);

// "2026-11-22T05:30:08Z" and the compact "20261122T053008Z" for directory names.
std::string utc_now_iso8601();
std::string utc_now_compact();

}  // namespace tracebench
