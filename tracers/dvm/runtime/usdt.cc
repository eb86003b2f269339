// The usdt provider of the kernel home: DTrace's USDT naming,
// <provider><P>:<module>:<function>:<name>, for the SDT notes
// (.note.stapsdt, what sys/sdt.h's DTRACE_PROBE/STAP_PROBE leave) of
// process P's modules (names as DTrace shows them: function__entry is
// function-entry).  Each note is a site: the module registers a uprobe
// at its file offset with the note's semaphore as the uprobe's reference
// counter (so `if (PROVIDER_NAME_ENABLED())` guards run while it is
// enabled), and reads arg0.. where the note's argument specs say (a
// register, an immediate, memory at base + index * scale + displacement, a
// global through %rip).
#include "tracers/dvm/runtime/internal.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "kmod/include/tracebench_kmod_abi.h"

namespace tbdvm {

namespace {

// x86-64 register names as GNU as writes them, by the module's numbering;
// every width names its full register (the spec's size truncates).
bool usdt_register(const std::string& name, uint8_t* reg) {
  static const std::map<std::string, uint8_t> regs = [] {
    std::map<std::string, uint8_t> m;
    const struct {
      const char* names[4];
      uint8_t reg;
    } legacy[] = {
        {{"rax", "eax", "ax", "al"}, TB_KMOD_USDT_REG_AX},  {{"rbx", "ebx", "bx", "bl"}, TB_KMOD_USDT_REG_BX},
        {{"rcx", "ecx", "cx", "cl"}, TB_KMOD_USDT_REG_CX},  {{"rdx", "edx", "dx", "dl"}, TB_KMOD_USDT_REG_DX},
        {{"rsi", "esi", "si", "sil"}, TB_KMOD_USDT_REG_SI}, {{"rdi", "edi", "di", "dil"}, TB_KMOD_USDT_REG_DI},
        {{"rbp", "ebp", "bp", "bpl"}, TB_KMOD_USDT_REG_BP}, {{"rsp", "esp", "sp", "spl"}, TB_KMOD_USDT_REG_SP},
    };
    for (const auto& l : legacy)
      for (const char* n : l.names) m[n] = l.reg;
    for (int r = 8; r <= 15; r++)
      for (const char* suffix : {"", "d", "w", "b", "l"})
        m["r" + std::to_string(r) + suffix] = static_cast<uint8_t>(TB_KMOD_USDT_REG_R8 + (r - 8));
    m["rip"] = TB_KMOD_USDT_REG_IP;
    return m;
  }();
  const auto it = regs.find(name);
  if (it == regs.end()) return false;
  *reg = it->second;
  return true;
}

// A whole decimal or 0x-hex integer, optionally signed.
bool parse_integer(const std::string& s, int64_t* v) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(s.c_str(), &end, 0);
  if (errno || !end || *end) return false;
  *v = x;
  return true;
}

// A probe's name as DTrace shows USDT names: "__" becomes "-"
// (function__entry is function-entry).
std::string dtrace_name(const std::string& raw) {
  std::string s;
  for (size_t i = 0; i < raw.size(); i++) {
    if (raw.compare(i, 2, "__") == 0) {
      s += '-';
      i++;
    } else {
      s += raw[i];
    }
  }
  return s;
}

// One SDT note: where it is and what it says.
struct SdtNote {
  std::string provider, name, raw_name, function;
  uint64_t offset = 0, ref_ctr = 0;
  std::vector<UsdtArg> args;
  std::string error;  // why this note cannot be probed (said when a description names it)
};

// The SDT notes of an ELF file (none: not an error), as the usdt provider
// names and reads them.  A note this reader cannot use (an argument spec it
// does not take, an address outside the loaded segments) carries why; the
// file's other notes stay usable.
Error sdt_notes(const std::string& path, std::vector<SdtNote>* out) {
  ElfFile file;
  if (std::string e = file.open(path); !e.empty()) return {e};
  std::vector<tracebench::elf::SdtNote> raw;
  if (std::string e = tracebench::elf::sdt_notes(file, &raw); !e.empty()) return {e};
  if (raw.empty()) return Error::none();  // most files: their symbols are not read
  if (!file.x86_64()) return {path + ": SDT notes are read for x86-64 files only"};
  // Symbols: every defined one, for rip-relative arguments; functions, for
  // the function field (a file without symbols leaves it empty).
  std::map<std::string, uint64_t> symbols;
  file.for_each_symbol([&](const char* name, uint64_t value, uint64_t, bool) { symbols.emplace(name, value); });
  std::vector<FileFunction> funcs;
  elf_functions(file, &funcs);
  const auto lookup = [&](const std::string& s, uint64_t* addr) {
    const auto it = symbols.find(s);
    if (it == symbols.end()) return false;
    *addr = it->second;
    return true;
  };
  for (const tracebench::elf::SdtNote& r : raw) {
    SdtNote n;
    n.provider = r.provider;
    n.raw_name = r.name;
    n.name = dtrace_name(r.name);
    n.offset = r.offset;
    n.ref_ctr = r.semaphore_offset;
    n.error = r.error;
    const std::string what = path + ": SDT note " + n.provider + ":" + n.name;
    for (const FileFunction& f : funcs)
      if (n.offset >= f.offset && n.offset < f.offset + f.size) {
        n.function = f.name;
        break;
      }
    // Arguments: space-separated specs; the module carries the first ten.
    size_t i = 0, argn = 0;
    const std::string& specs = r.args;
    while (i < specs.size() && argn < TB_KMOD_DVM_USDT_ARGS) {
      if (specs[i] == ' ') {
        i++;
        continue;
      }
      const size_t end = std::min(specs.find(' ', i), specs.size());
      UsdtArg a;
      if (Error e = parse_usdt_arg(specs.substr(i, end - i), r.pc, lookup, &a); !e.ok() && n.error.empty())
        n.error = what + ": arg" + std::to_string(argn) + ": " + e.message;
      n.args.push_back(a);
      argn++;
      i = end;
    }
    out->push_back(std::move(n));
  }
  return Error::none();
}

constexpr size_t kMaxUsdtProbes = 2048;  // of the module's TB_KMOD_DVM_MAX_PROBES

}  // namespace

Error parse_usdt_arg(const std::string& spec, uint64_t pc,
                     const std::function<bool(const std::string&, uint64_t*)>& symbol, UsdtArg* out) {
  const std::string what = "'" + spec + "'";
  const auto at = spec.find('@');
  int64_t size = 0;
  if (at == std::string::npos || !parse_integer(spec.substr(0, at), &size) ||
      (std::llabs(size) != 1 && std::llabs(size) != 2 && std::llabs(size) != 4 && std::llabs(size) != 8))
    return {what + " is not SIZE@OPERAND with SIZE 1, 2, 4 or 8 (negative: signed)"};
  UsdtArg a;
  a.size = static_cast<int8_t>(size);
  const std::string op = spec.substr(at + 1);
  if (op.size() > 1 && op[0] == '$') {  // an immediate
    if (!parse_integer(op.substr(1), &a.value)) return {what + ": the immediate is not a number"};
    a.kind = TB_KMOD_USDT_ARG_IMM;
  } else if (op.size() > 1 && op[0] == '%') {  // a register
    if (!usdt_register(op.substr(1), &a.reg) || a.reg == TB_KMOD_USDT_REG_IP)
      return {what + ": not a general-purpose register this reader knows"};
    a.kind = TB_KMOD_USDT_ARG_REG;
  } else {  // memory: [disp](%base)
    const auto open = op.find('('), close = op.rfind(')');
    if (open == std::string::npos || close != op.size() - 1)
      return {what + ": not a register, immediate or memory operand"};
    std::string inner = op.substr(open + 1, close - open - 1);
    const std::string disp = op.substr(0, open);
    // (%base) or (%base,%index[,scale])
    const auto comma = inner.find(',');
    if (comma != std::string::npos) {
      const std::string rest = inner.substr(comma + 1);
      inner.resize(comma);
      const auto comma2 = rest.find(',');
      const std::string index = rest.substr(0, comma2);
      int64_t scale = 1;
      if (comma2 != std::string::npos && !parse_integer(rest.substr(comma2 + 1), &scale)) scale = 0;
      if (index.size() < 2 || index[0] != '%' || !usdt_register(index.substr(1), &a.index) ||
          a.index == TB_KMOD_USDT_REG_IP || (scale != 1 && scale != 2 && scale != 4 && scale != 8))
        return {what + ": the index is not a general-purpose register scaled by 1, 2, 4 or 8"};
      a.scale = static_cast<uint8_t>(scale);
    }
    if (inner.size() < 2 || inner[0] != '%' || !usdt_register(inner.substr(1), &a.reg))
      return {what + ": the base is not a register this reader knows (a memory operand needs one)"};
    if (a.scale && a.reg == TB_KMOD_USDT_REG_IP) return {what + ": %rip takes no index"};
    a.kind = TB_KMOD_USDT_ARG_MEM;
    if (a.reg == TB_KMOD_USDT_REG_IP) {
      // sym(%rip), sym+N(%rip), sym-N(%rip): the symbol's address, kept
      // relative to the probe's own (the uprobe's ip when it fires).
      const auto sign = disp.find_first_of("+-", 1);
      const std::string name = disp.substr(0, sign);
      int64_t addend = 0;
      uint64_t addr = 0;
      if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || name[0] == '-')
        return {what + ": a numeric displacement from %rip is not read (only symbol(%rip))"};
      if (sign != std::string::npos && !parse_integer(disp.substr(sign), &addend))
        return {what + ": the symbol's addend is not a number"};
      if (!symbol || !symbol(name, &addr)) return {what + ": no symbol " + name + " in the file"};
      a.value = static_cast<int64_t>(addr + static_cast<uint64_t>(addend) - pc);
    } else if (!disp.empty() && !parse_integer(disp, &a.value)) {
      return {what + ": the displacement is not a number"};
    }
  }
  *out = a;
  return Error::none();
}

Error kernel_usdt_probes(const std::vector<std::string>& patterns, const Options& o, uint32_t first_id,
                         std::vector<ProbeInfo>* out) {
  std::map<std::string, std::vector<SdtNote>> by_path;  // read once
  std::set<std::string> made;                           // "provider:path:offset"
  for (const std::string& pattern : patterns) {
    const std::vector<std::string> f = description_fields(pattern);
    std::string provider;
    long pid = 0;
    if (f.empty() || !provider_process(f[0], &provider, &pid) || provider == "pid") continue;
    const std::string where = "probe description " + pattern + ": ";
    std::vector<ProcessModule> modules;
    if (Error e = process_modules(pid, f[1], o, where, &modules); !e.ok()) return e;
    size_t matched = 0;
    bool raw_match = false;  // the name as the note spells it, not as D does
    for (const auto& [mod_name, path] : modules) {
      auto it = by_path.find(path);
      if (it == by_path.end()) {
        std::vector<SdtNote> notes;
        if (Error e = sdt_notes(path, &notes); !e.ok()) {
          if (f[1].find_first_of("*?[") == std::string::npos) return {where + e.message};
          continue;  // a glob met a file that is not one (see kernel_pid_probes)
        }
        it = by_path.emplace(path, std::move(notes)).first;
      }
      for (const SdtNote& n : it->second) {
        if (n.provider != provider || !glob(f[2], n.function)) continue;
        if (!glob(f[3], n.name)) {
          raw_match = raw_match || glob(f[3], n.raw_name);
          continue;
        }
        matched++;
        if (!n.error.empty()) return {where + n.error};
        if (!made.insert(f[0] + ":" + path + ":" + std::to_string(n.offset)).second) continue;
        if (made.size() > kMaxUsdtProbes)
          return {where + "more than " + std::to_string(kMaxUsdtProbes) + " usdt sites; name fewer"};
        ProbeInfo p{first_id++,
                    nullptr,
                    f[0],
                    mod_name,
                    n.function,
                    n.name,
                    TB_KMOD_DVM_PROBE_USDT,
                    static_cast<uint32_t>(pid)};
        p.kernel_path = path;
        p.kernel_offset = n.offset;
        p.kernel_ref_ctr = n.ref_ctr;
        p.usdt_args = n.args;
        out->push_back(std::move(p));
      }
    }
    if (!matched)
      return {where + "process " + std::to_string(pid) + " has no USDT probe of provider " + provider + " in module " +
              (f[1].empty() ? "*" : f[1]) + " matching " + (f[2].empty() ? "*" : f[2]) + ":" +
              (f[3].empty() ? "*" : f[3]) +
              (raw_match ? " (D names USDT probes with each \"__\" as \"-\": " + dtrace_name(f[3]) + ")" : "")};
  }
  return Error::none();
}

}  // namespace tbdvm
