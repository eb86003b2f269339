# tracebench_command_code(<target>): a target whose code runs once per
# command (arguments, orchestration, files), never inside a timed region:
# compiled -O1 -g1 outside Debug builds.  Its header-only command-line
# library costs ~10 s of CPU per file at -O2 -g; the build of the tool spends
# most of its time on such files.  Measurement code keeps the build type's
# flags.
function(tracebench_command_code target)
  tracebench_command_flags(${target})
  tracebench_command_headers(${target})
  tracebench_unity(${target})
endfunction()

# tracebench_unity(<target>): code that never runs inside a timed region
# (commands, reports, files, the model's fits, orchestration) compiled as a
# few large files (CMake's unity build): the headers' templates (nlohmann/json,
# fmt, CLI11) are instantiated and optimized once per batch instead of once
# per file, most of a file's compile time.  A file on a timed path is left
# out with set_source_files_properties(... SKIP_UNITY_BUILD_INCLUSION ON), so
# its code is the same whatever it would have been compiled beside.
function(tracebench_unity target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 12)
endfunction()

function(tracebench_command_flags target)
  target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O1 -g1>)
endfunction()

# tracebench_command_headers(<target>): the commands' heavy header-only
# libraries (CLI11 ~9.5 s of CPU per file, nlohmann/json ~2.7 s, fmt ~0.9 s)
# compiled once, into a precompiled header every command target reuses.  It
# is built by a target of its own with the command code's flags; where a
# target's flags differ GCC ignores it and compiles the headers as text
# (-Winvalid-pch says so), so it is never wrong, at worst not faster.
function(tracebench_command_headers target)
  if(NOT TARGET tracebench_command_pch)
    add_library(tracebench_command_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/command_pch.cc)
    target_link_libraries(tracebench_command_pch PRIVATE tracebench::harness CLI11::CLI11)
    tracebench_command_flags(tracebench_command_pch)
    target_precompile_headers(tracebench_command_pch PRIVATE <CLI/CLI.hpp> <nlohmann/json.hpp> <fmt/format.h>)
  endif()
  target_precompile_headers(${target} REUSE_FROM tracebench_command_pch)
endfunction()

# tracebench_code_headers(<target>): the headers most of the code at the
# build type's flags parses (nlohmann/json, fmt, the standard library's
# containers, streams and filesystem), compiled once into a precompiled
# header the target reuses: a third of a file's compile time was parsing them.
# One for position-independent targets and one for the others, since GCC
# refuses a header compiled otherwise (-Winvalid-pch says so; the headers
# are then compiled as text: never wrong, at worst not faster).
function(tracebench_code_headers target)
  get_target_property(pic ${target} POSITION_INDEPENDENT_CODE)
  set(pch tracebench_code_pch)
  if(pic)
    set(pch tracebench_code_pch_pic)
  endif()
  if(NOT TARGET ${pch})
    add_library(${pch} OBJECT ${PROJECT_SOURCE_DIR}/cmake/code_pch.cc)
    target_link_libraries(${pch} PRIVATE fmt::fmt nlohmann_json::nlohmann_json)
    if(pic)
      set_target_properties(${pch} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    endif()
    target_precompile_headers(${pch} PRIVATE
      <algorithm> <chrono> <cmath> <filesystem> <fstream> <map> <memory> <optional> <set> <sstream> <string>
      <vector> <fmt/format.h> <nlohmann/json.hpp>)
  endif()
  target_precompile_headers(${target} REUSE_FROM ${pch})
endfunction()

# tracebench_add_command(<name> SOURCES ... [LIBS ...]): a subcommand folder
# (TRACEBENCH_REGISTER_COMMAND in its source).
function(tracebench_add_command name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  set(target tracebench_command_${name})
  add_library(${target} OBJECT ${ARG_SOURCES})
  target_link_libraries(${target} PUBLIC tracebench::harness CLI11::CLI11 ${ARG_LIBS})
  tracebench_command_code(${target})
  tracebench_link_into_all(${target})
endfunction()

# tracebench_add_tracer(<name> SOURCES ... [LIBS ...] [DEPENDS ...])
# Builds tracers/<name>/ as an object library linked into every binary that
# links tracebench::all, so its TRACEBENCH_REGISTER_TRACER line runs.
function(tracebench_add_tracer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;DEPENDS;INCLUDES" ${ARGN})
  set(target tracebench_tracer_${name})
  add_library(${target} OBJECT ${ARG_SOURCES})
  target_link_libraries(${target} PUBLIC tracebench::harness ${ARG_LIBS})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR} ${ARG_INCLUDES})
  tracebench_code_headers(${target})
  if(ARG_DEPENDS)
    add_dependencies(${target} ${ARG_DEPENDS})
  endif()
  tracebench_link_into_all(${target})
endfunction()

# tracebench_add_workloads(<family> SOURCES ... [LIBS ...])
# One file per benchmark family in bench/; registered the same way.
function(tracebench_add_workloads family)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  set(target tracebench_workloads_${family})
  add_library(${target} OBJECT ${ARG_SOURCES})
  target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo>:-g>)  # SystemTap reads their DWARF
  target_link_libraries(${target} PUBLIC tracebench::harness ${ARG_LIBS})
  tracebench_link_into_all(${target})
endfunction()

# tracebench::all carries every self-registering object library (tracers,
# workloads, subcommands) to the binaries that link it.  $<TARGET_OBJECTS>
# keeps the registration objects from being dropped by the linker.
function(tracebench_link_into_all target)
  target_sources(tracebench_all INTERFACE $<TARGET_OBJECTS:${target}>)
  target_link_libraries(tracebench_all INTERFACE ${target})
endfunction()
