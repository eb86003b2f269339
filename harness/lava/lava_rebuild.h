// The seam between fetching a job from a server and reading its log: the
// run's files (result.json, the journal) come back framed in the guest's
// console lines, and the reader of that framing (`tracebench lava job`'s
// log reader) rebuilds them.  `fetch ID DIR` calls this after it saved the
// log; the reader plugs in here.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tracebench/status.h"

namespace tracebench::lava {

// Rebuilds the run's files under `dir` from the job log; `*info` says what
// came back ({"rebuilt": bool, ...}) and goes into lava.json as "run".
Status rebuild_run_from_log(const std::string& log_text, const std::string& dir, nlohmann::json* info);

}  // namespace tracebench::lava
