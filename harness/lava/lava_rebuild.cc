// No log reader in this build: the run is not rebuilt, and lava.json says
// so (the log itself is saved next to it, whole).
#include "lava_rebuild.h"

namespace tracebench::lava {

Status rebuild_run_from_log(const std::string& /*log_text*/, const std::string& /*dir*/, nlohmann::json* info) {
  *info = {{"rebuilt", false},
           {"reason", "this build has no reader for the run files framed in a job log; the log is job.log.yaml"}};
  return Status::ok();
}

}  // namespace tracebench::lava
