# tracebench_command_code(<target>): a target whose code runs once per
# command (arguments, orchestration, files), never inside a timed region:
# compiled -O1 -g1 outside Debug builds.  Its header-only command-line
# library costs ~10 s of CPU per file at -O2 -g; the build of the tool spends
# most of its time on such files.  Measurement code keeps the build type's
# flags.
function(tracebench_command_code target)
  target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O1 -g1>)
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
