#include "tracers/common/elf.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tracebench::elf {

File::~File() {
  if (elf_) elf_end(elf_);
  if (fd_ >= 0) close(fd_);
}

std::string File::open(const std::string& path) {
  path_ = path;
  if (elf_version(EV_CURRENT) == EV_NONE) return "libelf: " + std::string(elf_errmsg(-1));
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return path + ": " + std::strerror(errno);
  elf_ = elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr eh;
  if (!elf_ || elf_kind(elf_) != ELF_K_ELF || !gelf_getehdr(elf_, &eh)) return path + ": not an ELF file";
  x86_64_ = eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == EM_X86_64;
  size_t nph = 0;
  elf_getphdrnum(elf_, &nph);
  for (size_t i = 0; i < nph; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf_, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
      segments_.push_back({ph.p_vaddr, ph.p_filesz, ph.p_offset, (ph.p_flags & PF_X) != 0});
  }
  return "";
}

bool File::file_offset(std::uint64_t addr, bool exec, std::uint64_t* off) const {
  for (const Segment& s : segments_)
    if ((!exec || s.exec) && addr >= s.vaddr && addr < s.vaddr + s.filesz) {
      *off = addr - s.vaddr + s.offset;
      return true;
    }
  return false;
}

void File::for_each_symbol(const std::function<void(const char*, std::uint64_t, std::uint64_t, bool)>& fn) const {
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    const size_t n = data ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; i < n; i++) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
      const char* name = elf_strptr(elf_, sh.sh_link, sym.st_name);
      if (name && *name) fn(name, sym.st_value, sym.st_size, GELF_ST_TYPE(sym.st_info) == STT_FUNC);
    }
  }
}

std::string sdt_notes(const File& file, std::vector<SdtNote>* out) {
  Elf* elf = file.elf();
  const std::string& path = file.path();
  size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) return path + ": no section names";
  Elf_Scn* notes = nullptr;
  std::uint64_t base_addr = 0;
  bool have_base = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    const char* name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : nullptr;
    if (!name) continue;
    if (sh.sh_type == SHT_NOTE && std::strcmp(name, ".note.stapsdt") == 0) notes = scn;
    if (std::strcmp(name, ".stapsdt.base") == 0) {
      base_addr = sh.sh_addr;
      have_base = true;
    }
  }
  if (!notes) return "";
  Elf_Data* data = elf_getdata(notes, nullptr);
  size_t pos = 0, name_off = 0, desc_off = 0;
  GElf_Nhdr nh;
  while (data && (pos = gelf_getnote(data, pos, &nh, &name_off, &desc_off)) > 0) {
    const char* bytes = static_cast<const char*>(data->d_buf);
    if (nh.n_type != 3 || nh.n_namesz != 8 || std::memcmp(bytes + name_off, "stapsdt", 8) != 0) continue;
    if (nh.n_descsz < 3 * 8 + 3) return path + ": an SDT note shorter than its header";
    const char* desc = bytes + desc_off;
    std::uint64_t pc, base, sem;
    std::memcpy(&pc, desc, 8);
    std::memcpy(&base, desc + 8, 8);
    std::memcpy(&sem, desc + 16, 8);
    // Strings: provider, name, arguments, each NUL-terminated inside the desc.
    std::string fields[3];
    size_t at = 24;
    for (std::string& field : fields) {
      const void* nul = at < nh.n_descsz ? std::memchr(desc + at, '\0', nh.n_descsz - at) : nullptr;
      if (!nul) return path + ": an SDT note's strings are not terminated";
      field.assign(desc + at, static_cast<const char*>(nul) - (desc + at));
      at += field.size() + 1;
    }
    // Prelinked files moved: the notes say where .stapsdt.base was.
    if (have_base && base) {
      pc += base_addr - base;
      if (sem) sem += base_addr - base;
    }
    SdtNote n;
    n.provider = fields[0];
    n.name = fields[1];
    n.args = fields[2];
    n.pc = pc;
    n.semaphore = sem;
    const std::string what = path + ": SDT note " + n.provider + ":" + n.name;
    if (!file.file_offset(pc, true, &n.offset)) n.error = what + ": its address is in no executable segment";
    if (sem && !file.file_offset(sem, false, &n.semaphore_offset))
      n.error = what + ": its semaphore is in no loaded segment";
    out->push_back(std::move(n));
  }
  return "";
}

}  // namespace tracebench::elf
