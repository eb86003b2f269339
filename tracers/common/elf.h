// ELF files as the adapters that place uprobes read them (libelf): where a
// loaded address is in the file, the symbols, and the SDT notes that
// sys/sdt.h leaves (.note.stapsdt).  No harness types: the D-VM's runtime,
// which does not depend on the harness, reads its pid and usdt probes here
// too.  Errors are strings, empty when all went well.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct Elf;

namespace tracebench::elf {

// An ELF file open with libelf, closed with it.
class File {
 public:
  File() = default;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();
  std::string open(const std::string& path);  // errors name the path
  ::Elf* elf() const { return elf_; }
  const std::string& path() const { return path_; }
  bool x86_64() const { return x86_64_; }
  // The file offset of `addr`, from the PT_LOAD segment that holds it (exec:
  // an executable one); false when none does.
  bool file_offset(std::uint64_t addr, bool exec, std::uint64_t* off) const;
  // Every defined, named symbol of .symtab and .dynsym, in that order:
  // fn(name, value, size, is a function).
  void for_each_symbol(const std::function<void(const char*, std::uint64_t, std::uint64_t, bool)>& fn) const;

 private:
  struct Segment {
    std::uint64_t vaddr, filesz, offset;
    bool exec;
  };
  ::Elf* elf_ = nullptr;
  int fd_ = -1;
  bool x86_64_ = false;
  std::string path_;
  std::vector<Segment> segments_;
};

// One SDT note (a STAP_PROBE/DTRACE_PROBE site): its provider and name as
// the note spells them, its argument specs ("-4@%edi 8@$5"), its address
// and its semaphore's (0: none) as linked (moved like .stapsdt.base when
// the file was prelinked), and where both are in the file: what a uprobe
// and its reference counter take.
struct SdtNote {
  std::string provider, name, args;
  std::uint64_t pc = 0, semaphore = 0;
  std::uint64_t offset = 0, semaphore_offset = 0;
  std::string error;  // why this note cannot be probed (its other fields as read)
};
// The file's SDT notes, in file order (none: not an error).  A note whose
// address is in no executable segment, or whose semaphore is in no loaded
// one, carries why; the others stay usable.
std::string sdt_notes(const File& f, std::vector<SdtNote>* out);

}  // namespace tracebench::elf
