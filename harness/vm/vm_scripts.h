// Where the VM lab's scripts (scripts/vm/) are, for the commands that run
// them (`tracebench vm`, `tracebench lava job`).
#pragma once

#include <string>

#include "tracebench/status.h"

namespace tracebench {

// The first directory holding an executable tracebench-vm.sh among:
// $TRACEBENCH_SCRIPTS_DIR, the source tree this binary was built from,
// ../../scripts/vm and ../share/tracebench/scripts/vm beside the binary.
Status find_vm_scripts(std::string* dir);

}  // namespace tracebench
