// No log reader in this build: the run is not rebuilt, and lava.json says
// so (the log itself is saved next to it, whole).  With `tracebench lava
// job`'s reader (lava_log.h) this body becomes: fetch_from_log(log_text, dir,
// &outcome), and *info = the lava.json that call wrote (its verdict, files
// and their sha256), which `fetch` then rewrites with the server's fields.
// The log the server serves (/jobs/<id>/logs/) is the one that reader takes:
// a job of `tracebench lava job` run on scripts/lava/lab.sh, fetched here,
// came back complete through `tracebench lava fetch --log` (every file's
// sha256 checked).
#include "lava_rebuild.h"

namespace tracebench::lava {

Status rebuild_run_from_log(const std::string& /*log_text*/, const std::string& /*dir*/, nlohmann::json* info) {
  *info = {{"rebuilt", false},
           {"reason", "this build has no reader for the run files framed in a job log; the log is job.log.yaml"}};
  return Status::ok();
}

}  // namespace tracebench::lava
