#include "build_id.h"

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "tracers/common/proc.h"

namespace tracebench::systemtap {
namespace {

template <typename T>
bool load(const std::string& b, std::size_t at, T* v) {
  if (at > b.size() || b.size() - at < sizeof(T)) return false;
  std::memcpy(v, b.data() + at, sizeof(T));
  return true;
}

}  // namespace

std::string build_id_of_note(const std::string& note) {
  std::uint32_t namesz = 0, descsz = 0, type = 0;
  if (!load(note, 0, &namesz) || !load(note, 4, &descsz) || !load(note, 8, &type)) return {};
  const std::size_t name_at = 12, desc_at = name_at + ((namesz + 3) & ~3u);
  if (type != 3 || namesz != 4 || note.compare(name_at, 4, std::string("GNU\0", 4)) != 0) return {};
  if (desc_at + descsz > note.size() || descsz == 0) return {};
  std::string hex;
  for (std::size_t i = 0; i < descsz; ++i) hex += fmt::format("{:02x}", static_cast<unsigned char>(note[desc_at + i]));
  return hex;
}

std::string elf_build_id(const std::string& path) {
  const std::string f = common::read_text(path);
  if (f.size() < 64 ||
      f.compare(0, 4,
                "\x7f"
                "ELF") != 0 ||
      f[4] != 2)
    return {};  // ELF64 only
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!load(f, 0x28, &shoff) || !load(f, 0x3A, &shentsize) || !load(f, 0x3C, &shnum) || !load(f, 0x3E, &shstrndx))
    return {};
  auto section = [&](std::uint16_t i, std::uint32_t* name, std::uint64_t* off, std::uint64_t* size) {
    const std::uint64_t h = shoff + std::uint64_t{i} * shentsize;
    return load(f, h, name) && load(f, h + 0x18, off) && load(f, h + 0x20, size);
  };
  std::uint32_t sname = 0;
  std::uint64_t stroff = 0, strsize = 0;
  if (shstrndx >= shnum || !section(shstrndx, &sname, &stroff, &strsize)) return {};
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::uint32_t name = 0;
    std::uint64_t off = 0, size = 0;
    if (!section(i, &name, &off, &size) || stroff + name >= f.size()) continue;
    if (std::strcmp(f.c_str() + stroff + name, ".note.gnu.build-id") != 0) continue;
    if (off > f.size() || size > f.size() - off) return {};
    return build_id_of_note(f.substr(off, size));
  }
  return {};
}

std::string loaded_kmod_build_id() {
  return build_id_of_note(common::read_text(std::string("/sys/module/") + kKmodName + "/notes/.note.gnu.build-id"));
}

}  // namespace tracebench::systemtap
