// `tracebench systemtap build --headers DIR --out DIR`: compiles, on this
// machine, the script of every workload and action the adapter supports
// for another kernel's headers, and puts the modules in DIR.  The VM lab
// runs it for the guest's kernel (scripts/vm/tracebench-vm.sh) and packs
// DIR as /tb/stap: the guest has no compiler and no headers.  The scripts
// depend only on the probe and the action, so a handful of modules serves
// every run; stap's own cache and this adapter's make a second build quick.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include "build_id.h"
#include "compile.h"
#include "script.h"
#include "systemtap_tracer.h"
#include "tracebench/command.h"
#include "tracebench/workload.h"

namespace fs = std::filesystem;

namespace tracebench::systemtap {
namespace {

struct BuildArgs {
  std::string headers, out, kmod;
  // Where this tracebench will be when the scripts run (its uprobes are
  // placed on that path); by default where it is now.
  std::string exe_path;
  std::string runtime = "module";  // module, bpf or all
  // Also the handler counts of the model's sweep (`model suite`), for the
  // workloads of the runtime's scenarios that have handlers.
  bool model_sweep = false;
  std::vector<std::string> workloads;  // only these (none: every workload)
  std::vector<std::string> actions;    // these (none: count, a run's default)
  std::vector<unsigned> handlers;      // count scripts with these handler counts too (a run's ecbs)
  bool at_return = false;              // user functions' return probes too (a run's at=return)
};

// The handler counts to compile a workload's script with: 1, those of
// --handlers, and with --model-sweep those `model suite` runs for a scenario of the runtime's
// on that workload (ModelScenario::handler_sweep()), extra predicates
// holding and failing.
std::vector<Handlers> handler_variants(const BuildArgs& a, Runtime runtime, const std::string& workload) {
  std::vector<Handlers> v = {Handlers{}};
  for (unsigned n : a.handlers)
    if (n > 1)
      for (bool holds : {true, false}) v.push_back(Handlers{.count = n, .extra_holds = holds});
  if (!a.model_sweep) return v;
  for (const auto& sc : SystemtapTracer(runtime).model().scenarios) {
    if (sc.workload != workload) continue;
    if (sc.handlers > 1) v.push_back(Handlers{.count = static_cast<unsigned>(sc.handlers), .extra_holds = false});
    for (int n : sc.handler_sweep())
      for (bool holds : {true, false}) v.push_back(Handlers{.count = static_cast<unsigned>(n), .extra_holds = holds});
  }
  return v;
}

struct ScriptVariant {
  std::string action;
  Handlers handlers;
  bool at_return = false;
};

// Each action asked for with one handler, and count with the handler
// counts; with --at-return each of them on a user function's return too.
std::vector<ScriptVariant> script_variants(const BuildArgs& a, Runtime runtime, const Workload& w) {
  std::vector<ScriptVariant> v;
  for (const auto& action : a.actions.empty() ? std::vector<std::string>{"count"} : a.actions)
    if (action != "count") v.push_back({action, Handlers{}});
  if (a.actions.empty() || std::find(a.actions.begin(), a.actions.end(), "count") != a.actions.end())
    for (const Handlers& h : handler_variants(a, runtime, w.name)) v.push_back({"count", h});
  if (a.at_return && w.probe.kind == ProbeKind::kUserFunction) {
    const std::size_t entries = v.size();
    for (std::size_t i = 0; i < entries; ++i) v.push_back({v[i].action, v[i].handlers, true});
  }
  return v;
}

int run_build(const BuildArgs& a) {
  if (Status s = a.exe_path.empty() ? Status::ok() : check_stap_path(a.exe_path); !s) {
    std::cerr << "tracebench systemtap build: --exe-path: " << s.message() << "\n";
    return 2;
  }
  CompileTree tree;
  if (Status s = prepare_tree(a.headers, &tree); !s) {
    std::cerr << "tracebench systemtap build: " << s.message() << "\n";
    return 2;
  }
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) {
    std::cerr << "tracebench systemtap build: mkdir " << a.out << ": " << ec.message() << "\n";
    return 1;
  }
  ScriptTargets targets;
  CompileFiles files{.kmod = a.kmod, .exe = fs::canonical("/proc/self/exe", ec).string()};
  if (!a.kmod.empty()) {
    targets.kmod_build_id = elf_build_id(a.kmod);
    if (targets.kmod_build_id.empty()) {
      std::cerr << "tracebench systemtap build: --kmod " << a.kmod << " has no GNU build-id note\n";
      return 2;
    }
  }
  // The user-space probes are compiled for this very build of tracebench.
  targets.exe_path = a.exe_path.empty() ? files.exe : a.exe_path;
  targets.exe_build_id = elf_build_id(files.exe);
  std::set<std::string> done;
  for (const auto& name : a.workloads)
    if (!find_workload(name)) {
      std::cerr << "tracebench systemtap build: --workload '" << name << "' is not a workload (tracebench list)\n";
      return 2;
    }
  for (const auto& w : workload_registry()) {
    if (!a.workloads.empty() && std::find(a.workloads.begin(), a.workloads.end(), w.name) == a.workloads.end())
      continue;
    if (!w.only_tracer.empty() && w.only_tracer != "systemtap") continue;
    for (const Runtime runtime : {Runtime::kModule, Runtime::kBpf}) {
      if (a.runtime != "all" && a.runtime != to_string(runtime)) continue;
      if (!script_supports(w.probe, nullptr, runtime)) continue;
      for (const auto& [action, handlers, at_return] : script_variants(a, runtime, w)) {
        StapScript s;
        // Without --kmod the companion module's probes are left out.
        if (!make_script(w.probe, action, targets, &s, runtime, handlers, at_return) || !done.insert(s.module).second)
          continue;
        double seconds = 0;
        bool cached = false;
        if (Status st = compile_module(tree, s, files, &seconds, &cached); !st) {
          std::cerr << "tracebench systemtap build: " << st.message() << "\n";
          return 1;
        }
        fs::copy_file(tree.modules + "/" + compiled_file(s), a.out + "/" + compiled_file(s),
                      fs::copy_options::overwrite_existing, ec);
        if (ec) {
          std::cerr << "tracebench systemtap build: copy " << s.module << ".ko: " << ec.message() << "\n";
          return 1;
        }
        std::cerr << "systemtap: " << compiled_file(s) << " (" << w.probe.name << (at_return ? " return" : "") << ", "
                  << action
                  << (handlers.count > 1 ? ", " + std::to_string(handlers.count) + " handlers" : std::string())
                  << "): " << (cached ? "cached" : "compiled in " + std::to_string(static_cast<int>(seconds)) + " s")
                  << "\n";
      }
    }
  }
  std::cout << a.out << "\n";
  return 0;
}

void install(CLI::App& app, int* exit_status) {
  auto args = std::make_shared<BuildArgs>();
  CLI::App* sub = app.add_subcommand("systemtap", "SystemTap's scripts compiled for a kernel (the VM lab's guest)");
  CLI::App* build =
      sub->add_subcommand("build", "Compile every supported workload's script against a kernel's headers");
  build->add_option("--headers", args->headers, "The kernel's build tree (/usr/src/linux-headers-<release>)")
      ->required();
  build->add_option("--out", args->out, "Folder the modules are copied to")->required();
  build->add_option("--kmod", args->kmod,
                    "The companion module's .ko that the kernel will load (its probes are compiled against it)");
  build->add_option("--exe-path", args->exe_path,
                    "The path this tracebench binary will have where the scripts run (its uprobes are placed on that "
                    "file; the VM lab's guest: /tb/bin/tracebench); default: where it is now");
  build->add_option("--workload", args->workloads, "Only this workload's scripts (repeatable; default: every one)");
  build->add_option("--action", args->actions, "Scripts of this action (repeatable: count, record; default: count)")
      ->check(CLI::IsMember({"count", "record"}));
  build
      ->add_option("--handlers", args->handlers,
                   "Count scripts with this many handlers too, extra filters holding and failing (repeatable; a "
                   "run's -o systemtap.ecbs=N)")
      ->check(CLI::Range(1u, kMaxHandlers));
  build->add_flag("--at-return", args->at_return, "User functions' return probes too (a run's -o systemtap.at=return)");
  build->add_flag("--model-sweep", args->model_sweep,
                  "Also the handler counts `model suite` sweeps (ecbs, extra_predicate) on the scenarios' workloads");
  build->add_option("--runtime", args->runtime, "Which runtime's scripts: module (.ko), bpf (.bo, for stapbpf) or all")
      ->check(CLI::IsMember({"module", "bpf", "all"}));
  sub->require_subcommand(1);
  build->callback([args, exit_status] { *exit_status = run_build(*args); });
}

}  // namespace
}  // namespace tracebench::systemtap

TRACEBENCH_REGISTER_COMMAND(systemtap, tracebench::Command{"systemtap", tracebench::systemtap::install});
