// What killed runs of any tracefs-based adapter (ftrace, kprobes, perf's
// uprobes) leave in the kernel: tracefs instances "tracebench-<pid>[-...]"
// and dynamic events "tracebench:tb<pid>_..." of every kind (uprobe, kprobe,
// kretprobe, synthetic), found by the one naming scheme of names.h.
#pragma once

#include <string>
#include <vector>

namespace tracebench::common {

// The group every dynamic event of ours is created in.
inline constexpr const char* kDynamicEventGroup = "tracebench";

// Those whose owner is gone (never this process's or a live one's); removed
// when `remove`, else only listed.  Each entry says what and whose.
std::vector<std::string> cleanup_tracefs_leftovers(bool remove = true);

}  // namespace tracebench::common
