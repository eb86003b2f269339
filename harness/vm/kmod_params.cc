#include "kmod_params.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace tracebench {

namespace fs = std::filesystem;

// A module parameter for the guest's insmod: NAME=VALUE, NAME a C
// identifier (at most 64 characters), VALUE 1..256 characters of
// [A-Za-z0-9_.,:+-].  The guest's busybox sh splits insmod's arguments on
// spaces and nothing is quoted there, so nothing else gets through.  Returns
// the reason when `p` is not one, else an empty string.
std::string kmod_param_problem(const std::string& p) {
  auto eq = p.find('=');
  if (eq == std::string::npos) return "expected NAME=VALUE (e.g. inject_delay_ns=100)";
  std::string name = p.substr(0, eq), value = p.substr(eq + 1);
  auto alnum_ = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  if (name.empty() || name.size() > 64 || (name[0] >= '0' && name[0] <= '9') ||
      !std::all_of(name.begin(), name.end(), alnum_))
    return "NAME must be 1..64 characters of [A-Za-z0-9_], not starting with a digit";
  if (value.empty() || value.size() > 256 ||
      !std::all_of(value.begin(), value.end(), [&](char c) { return alnum_(c) || std::strchr(".,:+-", c); }))
    return "VALUE must be 1..256 characters of [A-Za-z0-9_.,:+-]";
  return {};
}

// The companion module's parameters: the names its sources declare with
// module_param(), module_param_named(), module_param_cb(), ...; `kmod` is
// the source folder.  Empty when it cannot be read.
std::set<std::string> kmod_param_names(const fs::path& kmod) {
  std::set<std::string> names;
  static const std::regex decl(
      R"(\bmodule_param(?:_named|_cb|_array|_string|_unsafe)?\s*\(\s*([A-Za-z_][A-Za-z0-9_]*))");
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(kmod, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().extension() != ".c") continue;
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string src = text.str();
    for (std::sregex_iterator m(src.begin(), src.end(), decl), end; m != end; ++m) names.insert((*m)[1]);
  }
  return names;
}

}  // namespace tracebench
