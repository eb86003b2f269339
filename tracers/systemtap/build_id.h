// The GNU build-id of the companion module: from its .ko (the host, when it
// compiles) and from /sys/module/tracebench/notes (the kernel that loaded
// it).  A stap probe on the module's function is compiled against the
// module's own debuginfo, and staprun refuses a loaded module of another
// build: the id names the pairing in the script, so a rebuilt module is a
// different script, compiled anew.
#pragma once

#include <string>

namespace tracebench::systemtap {

inline constexpr const char* kKmodName = "tracebench";

// Hex of the build-id note in `note` (an ELF note: namesz, descsz, type,
// name, desc); "" when it is not a GNU build-id note.
std::string build_id_of_note(const std::string& note);
// The build-id of an ELF file's .note.gnu.build-id section; "" when none.
std::string elf_build_id(const std::string& path);
// The build-id of the loaded companion module; "" when it is not loaded.
std::string loaded_kmod_build_id();

}  // namespace tracebench::systemtap
