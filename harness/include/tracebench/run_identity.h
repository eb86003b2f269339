// A run is its id and the bytes of its result.json, not the path it was
// found at: a copy of a run directory, a symlink to one, a pair directory
// that links to another are one run, counted once wherever runs are counted
// (compare's sides, ab's session, model fit's inputs).  Counting a copy
// twice gives a test false certainty: one run a side copied six times has
// no spread, so p 0.000 and an MDE of 0%.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracebench/results.h"
#include "tracebench/status.h"

namespace tracebench {

// The identity of the run read from `file`: its id and its file's sha256.
struct RunIdentity {
  std::string run_id, sha256, file;
};
RunIdentity identify_run(const std::string& file, const RunResult& run);

// Of the runs read from `files` (parallel to `runs`), keeps the first of each
// run: a later file with the same id and the same bytes is dropped and
// named in *dropped ("B/r2/result.json: the run of B/r1/result.json
// (20261127T...)").  The same id with other bytes is an error: an edited
// copy, or two runs whose older second-precision ids collide; which one
// counts is not for a reader to guess.
Status count_each_run_once(std::vector<std::string>* files, std::vector<RunResult>* runs,
                           std::vector<std::string>* dropped);

// Where every run must be a distinct one (the pairs of a side, the runs of an
// ab session): an error naming both files at the first repeat of a run id.
Status check_distinct_runs(const std::vector<RunIdentity>& runs, const std::string& what);

// When the run began, from its id ("20261127T120000.123456Z-host-sha-..." or
// the older "20261127T120000Z-..."), in seconds since the epoch (UTC); none
// when the id does not begin with such a time.
std::optional<double> run_id_time(const std::string& run_id);

}  // namespace tracebench
