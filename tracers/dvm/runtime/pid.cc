// The pid provider of the kernel home: pid<P>:<module>:<function>:entry and
// :return, made for the descriptions that name them.  Each is a uprobe
// (uretprobe) the module registers on a file at an offset; this resolves
// the module to a file (a.out: the process's executable, or the basename
// of a file the process maps) and the function to its file offset
// through the file's ELF symbol tables (libelf).  The usdt provider
// (usdt.cc) finds its files the same way.
#include "tracers/dvm/runtime/internal.h"

#include <fnmatch.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kmod/include/tracebench_kmod_abi.h"

namespace tbdvm {

namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The files process `pid` maps executable, by path (from /proc/<pid>/maps).
std::vector<std::string> mapped_files(long pid) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string range, perms, off, dev, inode, path;
    if (!(ls >> range >> perms >> off >> dev >> inode) || perms.size() < 3 || perms[2] != 'x') continue;
    std::getline(ls >> std::ws, path);
    if (path.empty() || path[0] != '/' || !seen.insert(path).second) continue;
    files.push_back(path);
  }
  return files;
}

constexpr size_t kMaxPidProbes = 2048;  // of the module's TB_KMOD_DVM_MAX_PROBES

}  // namespace

bool glob(const std::string& pattern, const std::string& s) {
  return pattern.empty() || fnmatch(pattern.c_str(), s.c_str(), 0) == 0;
}

bool provider_process(const std::string& field, std::string* prefix, long* pid) {
  const size_t digits = field.find_last_not_of("0123456789") + 1;  // 0 when all digits
  if (digits == 0 || digits == field.size() || field.size() - digits > 18) return false;
  for (size_t i = 0; i < digits; i++)
    if (!std::isalpha(static_cast<unsigned char>(field[i])) && field[i] != '_' &&
        !(i > 0 && std::isdigit(static_cast<unsigned char>(field[i]))))
      return false;
  *prefix = field.substr(0, digits);
  *pid = std::stol(field.substr(digits));
  return true;
}

Error elf_functions(const std::string& path, std::vector<FileFunction>* out) {
  ElfFile f;
  if (std::string e = f.open(path); !e.empty()) return {e};
  elf_functions(f, out);
  return Error::none();
}

void elf_functions(const ElfFile& f, std::vector<FileFunction>* out) {
  std::set<std::string> seen;
  f.for_each_symbol([&](const char* name, uint64_t value, uint64_t size, bool function) {
    uint64_t off = 0;
    if (function && value != 0 && f.file_offset(value, true, &off) && seen.insert(name).second)
      out->push_back({name, off, size});
  });
}

Error process_modules(long pid, const std::string& mod, const Options& o, const std::string& where,
                      std::vector<ProcessModule>* out) {
  if (pid <= 0 || pid > (1l << 22)) return {where + "no such process"};  // PID_MAX_LIMIT
  const bool held = pid == o.target_pid && !o.target_exe.empty();        // -c: not exec'd yet
  std::string exe = held ? o.target_exe : "";
  if (!held) {
    char buf[PATH_MAX];
    const ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    if (n < 0)
      return {where +
              (errno == ENOENT ? "no such process" : "/proc/" + std::to_string(pid) + "/exe: " + std::strerror(errno))};
    exe.assign(buf, static_cast<size_t>(n));
  }
  // The module: a.out (the executable) or the basename of a file the
  // process maps (globs allowed; D's descriptions hold no paths).
  if (glob(mod, "a.out")) out->push_back({"a.out", exe});
  if (held && out->empty())
    return {where +
            "the -c command has not started, so a.out is its only module; trace a library's "
            "probes in a running process (-p PID)"};
  if (!held)
    for (const std::string& path : mapped_files(pid))
      if (path != exe && glob(mod, base_name(path))) out->push_back({base_name(path), path});
  if (out->empty()) return {where + "process " + std::to_string(pid) + " maps no module " + mod};
  return Error::none();
}

Error kernel_pid_probes(const std::vector<std::string>& patterns, const Options& o, uint32_t first_id,
                        std::vector<ProbeInfo>* out) {
  std::map<std::string, std::vector<FileFunction>> symbols;  // by path, read once
  std::set<std::string> made;                                // "pid:path:function:name"
  for (const std::string& pattern : patterns) {
    const std::vector<std::string> f = description_fields(pattern);
    std::string prefix;
    long pid = 0;
    if (f.empty() || !provider_process(f[0], &prefix, &pid) || prefix != "pid")
      continue;  // not a pid probe (its provider names a process by number)
    const std::string where = "probe description " + pattern + ": ";
    std::vector<ProcessModule> modules;
    if (Error e = process_modules(pid, f[1], o, where, &modules); !e.ok()) return e;
    for (const auto& [mod_name, path] : modules) {
      auto it = symbols.find(path);
      if (it == symbols.end()) {
        std::vector<FileFunction> funcs;
        if (Error e = elf_functions(path, &funcs); !e.ok()) {
          // A module named outright must be readable; one a glob met (a
          // mapping of a deleted or non-ELF file) is passed over.
          if (f[1].find_first_of("*?[") == std::string::npos) return {where + e.message};
          continue;
        }
        it = symbols.emplace(path, std::move(funcs)).first;
      }
      for (const FileFunction& fn : it->second) {
        if (!glob(f[2], fn.name)) continue;
        for (const char* name : {"entry", "return"}) {
          if (!glob(f[3], name)) continue;
          if (!made.insert(f[0] + ":" + path + ":" + fn.name + ":" + name).second) continue;
          if (made.size() > kMaxPidProbes)
            return {where + "more than " + std::to_string(kMaxPidProbes) +
                    " pid probes; name fewer functions or modules"};
          ProbeInfo p{first_id++,
                      nullptr,
                      f[0],
                      mod_name,
                      fn.name,
                      name,
                      std::strcmp(name, "entry") == 0 ? TB_KMOD_DVM_PROBE_PID_ENTRY : TB_KMOD_DVM_PROBE_PID_RETURN,
                      static_cast<uint32_t>(pid)};
          p.kernel_path = path;
          p.kernel_offset = fn.offset;
          out->push_back(std::move(p));
        }
      }
    }
  }
  return Error::none();
}

Error kernel_process_probes(const std::vector<std::string>& patterns, const Options& o, uint32_t first_id,
                            std::vector<ProbeInfo>* out) {
  const size_t before = out->size();
  if (Error e = kernel_pid_probes(patterns, o, first_id, out); !e.ok()) return e;
  return kernel_usdt_probes(patterns, o, first_id + static_cast<uint32_t>(out->size() - before), out);
}

}  // namespace tbdvm
