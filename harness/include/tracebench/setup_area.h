// What a command says when the area of the suite it needs is not installed.
// `scripts/setup.sh` installs the tool and the host's tracers only; the VM
// lab, LAVA, SystemTap, the report's drawing and the rest come with
// `scripts/setup.sh --area NAME` (scripts/setup/NAME.txt: its packages, and
// the programs that tell it is installed), or all at once with --tests.
#pragma once

#include <initializer_list>
#include <string>

#include "tracebench/status.h"

namespace tracebench {

// Ok when everything in `needs` is here: a name is a program on PATH, an
// absolute path a file or directory that exists.  Otherwise an error that
// names what is missing, what the area is (`what`) and the command that
// installs it, e.g. "the VM lab (qemu, ...) is not installed here: no
// qemu-system-x86_64, busybox; `scripts/setup.sh --area vm` installs it".
Status require_area(const std::string& area, const std::string& what, std::initializer_list<const char*> needs);

}  // namespace tracebench
