// One naming scheme for everything a tracebench process creates outside
// itself, so that any later command can tell whose it is and whether its
// owner is gone (`tracebench cleanup`, the leftover notice, and
// scripts/leftovers.sh, which matches the same prefixes):
//   tracefs instances, LTTng sessions, trace folders:  tracebench-<pid>[-<what>]
//                                                      (LTTng folders: tracebench-lttng-<pid>...)
//   dynamic events (kernel name limit):                tb<pid>_<what>, group "tracebench"
//   BPF programs:                                      tb_<what> (the kernel keeps no owner;
//                                                      they die with their last fd or link)
#pragma once

#include <string>
#include <string_view>

namespace tracebench::common {

inline constexpr std::string_view kOwnedPrefix = "tracebench-";
inline constexpr std::string_view kOwnedEventPrefix = "tb";

// "tracebench-<this pid>" or "tracebench-<this pid>-<what>".
std::string owned_name(std::string_view what = {});
// "tb<this pid>_<what>".
std::string owned_event_name(std::string_view what);

// The pid in "<prefix><pid>", followed by the end or by `sep`; -1 when the
// name is not in that form ("tracebench-xcheck-12", a script's, is not ours).
long name_owner(std::string_view name, std::string_view prefix = kOwnedPrefix, char sep = '-');
long event_owner(std::string_view name);  // name_owner(name, "tb", '_')

// An owner pid whose objects are leftovers: not this process, and gone (or a zombie).
bool owner_is_gone(long pid);

}  // namespace tracebench::common
