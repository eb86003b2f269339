# The D-VM's sources, one list for the suite's libraries (CMakeLists.txt here)
# and the fuzz project (tests/dvm/fuzz), relative to this directory.  The DIF
# core is below both homes of the D-VM, beside the module's ABI headers: the
# module (kmod/Kbuild) builds the same files.
set(TB_DVM_CORE_SOURCES ../../kmod/dvm/core/vm.cc ../../kmod/dvm/core/verify.cc)
set(TB_DVM_RUNTIME_SOURCES runtime/probes.cc runtime/host.cc runtime/options.cc runtime/session.cc
    runtime/consumer.cc runtime/records.cc runtime/kernel.cc runtime/pid.cc runtime/usdt.cc)
set(TB_DVM_COMPILER_SOURCES compiler/dcompile.cc compiler/disasm.cc)
