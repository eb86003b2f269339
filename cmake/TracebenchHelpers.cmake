# tracebench_command_code(<target>): a target whose code runs once per
# command (arguments, orchestration, files), never inside a timed region:
# compiled -O1 -g1 outside Debug builds.  Its header-only command-line
# library costs ~10 s of CPU per file at -O2 -g; the build of the tool spends
# most of its time on such files.  Measurement code keeps the build type's
# flags.
function(tracebench_command_code target)
  tracebench_command_flags(${target})
  tracebench_command_headers(${target})
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
