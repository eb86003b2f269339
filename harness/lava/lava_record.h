// lava.json: the one record a directory of a fetched LAVA job keeps, whether
// the job came from a server (`tracebench lava fetch ID DIR`) or from a log
// alone (`tracebench lava fetch --log LOG DIR`).  One schema for both (the
// server's fields are null without a server); harness/lava/README.md
// documents it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lava_log.h"
#include "lava_remote.h"
#include "tracebench/status.h"

namespace tracebench::lava {

// The record: where the job ran (`server`, null for a log alone), what LAVA
// said of it (`job`), and what came back of the run (`run`).  Never the token.
nlohmann::json lava_record(const FetchOutcome& run, const JobOutcome& job, const LavaServer* server);

// A run's figures may be used only when LAVA passed the job and the whole
// run came back checked.
bool figures_valid(const FetchOutcome& run, const JobOutcome& job);

// Writes `dir`/lava.json.
Status write_lava_record(const std::string& dir, const nlohmann::json& record);

}  // namespace tracebench::lava
