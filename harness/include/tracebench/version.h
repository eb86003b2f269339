#pragma once

#include <map>
#include <string>

namespace tracebench {

extern const char* const kVersion;
extern const char* const kGitSha;
extern const char* const kBuildType;
extern const char* const kCompiler;

// Versions of the libraries the harness itself links (adapters add theirs
// through Tracer::versions()).
std::map<std::string, std::string> library_versions();

}  // namespace tracebench
