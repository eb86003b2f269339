// The companion module's parameters as the VM lab's guests get them
// (`tracebench vm --kmod-param`, `tracebench lava job --kmod-param`): the
// form a guest's insmod line accepts, and the names the module declares.
#pragma once

#include <filesystem>
#include <set>
#include <string>

namespace tracebench {

// Why `p` is not a module parameter the guest can be given (NAME=VALUE, NAME
// a C identifier of at most 64 characters, VALUE 1..256 characters of
// [A-Za-z0-9_.,:+-]); an empty string when it is one.
std::string kmod_param_problem(const std::string& p);

// The parameter names the module's sources (the folder `kmod`) declare; empty
// when they cannot be read.
std::set<std::string> kmod_param_names(const std::filesystem::path& kmod);

}  // namespace tracebench
