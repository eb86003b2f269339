// Files the suite keeps in directories others may write to (/run/lock, /tmp:
// world-writable, sticky).  Anyone may plant a name there before the suite
// comes: a symlink to a file of root's (opened for writing and truncated, it
// would be emptied), a dangling one (root would create its target), a hard
// link to another file, a FIFO (an open would block).  Such a name is
// refused, never followed, with what it is and that it should be removed.
#pragma once

#include <string>

#include "tracebench/status.h"

namespace tracebench {

// Opens `path` for reading and writing, creating it (mode 0644) when
// missing, read-only where it may not write (flock works on either):
// O_NOFOLLOW (a symlink is refused, dangling or not), O_NONBLOCK (a FIFO does
// not block), then fstat: a regular file with one link.  The descriptor
// (O_CLOEXEC, blocking again), or -1 with *st saying why.
int open_shared_file(const std::string& path, Status* st);

// Opens an existing `path` read-only under the same rules; -1 with errno
// ENOENT when it is missing, -1 with *st set when it is refused.
int open_shared_file_readonly(const std::string& path, Status* st);

}  // namespace tracebench
