// The compile step: a stap script to a kernel module for a kernel build
// tree (stap -p4), outside any timed region, cached by the script's hash.
#pragma once

#include <string>
#include <vector>

#include "script.h"
#include "tracebench/status.h"

namespace tracebench::systemtap {

// What stap compiles against: a build tree it can use and a runtime.
struct CompileTree {
  std::string build;    // the build tree stap -r gets
  std::string runtime;  // the runtime stap -R gets
  std::string modules;  // where compiled modules are cached for this tree
  std::string release;  // the kernel release the headers are for (may be empty)
};

// ~/.cache/tracebench/systemtap (XDG_CACHE_HOME honoured).
std::string cache_root();

// Makes the tree for a kernel's headers (a Debian linux-headers-<release>
// folder, or /lib/modules/<release>/build), under cache_root():
//  - build/: links to the headers' files, plus `source` -> the common
//    headers a Debian Makefile includes (stap looks for tracepoint headers
//    in the build tree or its `source`, and Debian splits them apart);
//  - runtime/: SystemTap's runtime, patched where the kernel renamed
//    task_work_cancel(task, func) to task_work_cancel_func() (6.1.y stable
//    took that change after SystemTap 4.8 was released; the runtime would
//    not compile).
//  - build/System.map -> the kernel's real System.map where one is here
//    (real_system_map): stap takes the kernel's functions from it, and
//    compiles a user function's return probe only when it names
//    arch_uretprobe_hijack_return_addr; Debian's headers carry none and
//    /boot's is a placeholder.
Status prepare_tree(const std::string& headers, CompileTree* out);

// The kernel release a headers folder is for (linux-headers-<release>, or
// /lib/modules/<release>/build); empty when its name does not say.
std::string release_of_headers(const std::string& headers);
// A System.map with the kernel's symbols, not Debian's one-line placeholder.
bool is_real_system_map(const std::string& path);
// The first real System.map of `release` among: the one
// scripts/systemtap/fetch-system-map.sh keeps in cache_root(), the
// linux-image-<release>-dbg package's (/usr/lib/debug/boot), /boot's;
// empty when there is none.
std::string real_system_map(const std::string& release);
// What a failed compile's log needs said beside it: why stap refused a
// return probe on a user function (no real System.map), else empty.
std::string compile_hint(const std::string& log_text, const std::string& release);

// Compiles `script` to <tree.modules>/<module>.ko unless it is there;
// `seconds` gets stap's time (0 when the cached module was used).
// What a script probes besides the kernel, as files on this machine.
struct CompileFiles {
  std::string kmod;  // the companion module's .ko, for a script that needs_kmod
  // The executable a script with an exe_path probes (its symbols and SDT
  // notes).  Where it is not at exe_path here (the VM lab compiles for the
  // guest's /tb/bin/tracebench), stap gets a sysroot that holds it there.
  std::string exe;
};

// Compiles `script` to <tree.modules>/<module>.ko unless it is there;
// `seconds` gets stap's time (0 when the cached module was used).
Status compile_module(const CompileTree& tree, const StapScript& script, const CompileFiles& files, double* seconds,
                      bool* cached);

// Runs argv (argv[0] looked up in PATH) in `cwd` with stdout and stderr to
// `log`; its exit status in *status (-1 when it did not exit).
Status run_logged(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log, int* status);

}  // namespace tracebench::systemtap
