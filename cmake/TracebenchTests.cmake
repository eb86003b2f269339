# Test tiers: every test carries one of these labels (README "Tests"), a
# TIMEOUT, and reports a skip as a skip.
#   unit         no root, no tracer, fast (`ctest -L unit`, under a minute)
#   adapters     needs root and a tracer
#   integration  runs the tracebench binary end to end
#   vmlab        boots the VM lab (qemu)
#   fuzz         the D-VM's fuzz targets, seeded and time-boxed
#   slow         takes minutes (in addition to its tier)
# Per-tracer labels (ebpf, ftrace, lttng, ...) may be added beside the tier.
# tests.tiers (tests/tiers_check.py) fails on a test without a tier label or
# a TIMEOUT.

# tb_gtest(<target> LABELS <label>... TIMEOUT <s> [FILTER <gtest filter>] [PREFIX <name prefix>]
#          [UNTIMED | UNTIMED_ON_HOST])
# gtest_discover_tests with the properties set after discovery by a ctest
# include file of our own: handed to gtest_discover_tests' PROPERTIES, a list
# (LABELS "ebpf;root") is split into words and every property after it is
# taken apart, so the tests lost their labels, RUN_SERIAL and TIMEOUT.  Each
# runs alone (RUN_SERIAL, as every test but a guest: tb_tests_run_alone below)
# unless the binary is UNTIMED: its tests time nothing and check nothing that
# depends on time (parsers, files, fits on synthetic figures), so they may run
# beside a guest or one another, as tb_untimed's tests do; or UNTIMED_ON_HOST:
# as tb_untimed_on_host's, they attach a tracer on this host and check what it
# recorded, never how long it took, beside the guests one at a time.
function(tb_gtest target)
  cmake_parse_arguments(arg "UNTIMED;UNTIMED_ON_HOST" "TIMEOUT;FILTER;PREFIX" "LABELS" ${ARGN})
  if(NOT arg_LABELS OR NOT arg_TIMEOUT)
    message(FATAL_ERROR "tb_gtest(${target}): LABELS (a tier) and TIMEOUT are required")
  endif()
  set(list_var tb_gtest_${target}_${arg_PREFIX}_tests)
  string(MAKE_C_IDENTIFIER "${list_var}" list_var)
  set(extra "")
  if(arg_FILTER)
    list(APPEND extra TEST_FILTER ${arg_FILTER})
  endif()
  if(arg_PREFIX)
    list(APPEND extra TEST_PREFIX ${arg_PREFIX})
  endif()
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 TEST_LIST ${list_var} ${extra})
  # A test's own code (assertions, fixtures, gtest's templates) times
  # nothing itself: what it measures is the libraries' code, built with the
  # build type's flags.  -O1 -g1 halves its compile time (a file of gtest
  # and nlohmann/json: 29.6 -> 13.6 CPU s).
  target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O1 -g1>)
  # And its files in batches (tracebench_unity): gtest's and json's
  # templates instantiated once per batch, not once per file (harness_test's
  # first 12 files: 46.3 CPU s one by one, 14.6 as one batch).
  tracebench_unity(${target})
  set(serial "RUN_SERIAL TRUE ")
  if(arg_UNTIMED)
    set(serial "")
  elseif(arg_UNTIMED_ON_HOST)
    set(serial "RESOURCE_LOCK tb_host_tracers ")
  endif()
  set(props_file ${CMAKE_CURRENT_BINARY_DIR}/${list_var}_props.cmake)
  # Runs in ctest after gtest's own include file has defined ${list_var}.
  file(WRITE ${props_file}
    "if(${list_var})\n"
    "  set_tests_properties(\${${list_var}} PROPERTIES LABELS \"${arg_LABELS}\" TIMEOUT ${arg_TIMEOUT}\n"
    "    ${serial}SKIP_REGULAR_EXPRESSION \"\\\\[  SKIPPED \\\\]\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${props_file})
endfunction()

set(TB_TIERS unit adapters integration vmlab fuzz)

# tb_directory_tier(<tier> [SLOW <test>...]): at the end of this directory's
# CMakeLists.txt, every add_test() test of it that has no tier label gets
# <tier>, and the SLOW ones the label slow too.  Tests added to the directory
# later are in their tier without a line of their own.
function(tb_directory_tier tier)
  cmake_parse_arguments(arg "" "" "SLOW" ${ARGN})
  # A deferred call's arguments are expanded when it runs, in the directory's
  # scope: write the values into the call now.
  string(JOIN " " slow ${arg_SLOW})
  cmake_language(EVAL CODE "cmake_language(DEFER CALL tb_apply_directory_tier ${tier} ${slow})")
endfunction()

function(tb_apply_directory_tier tier)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t ${tests})
    get_property(labels TEST ${t} PROPERTY LABELS)
    set(has_tier FALSE)
    foreach(l ${labels})
      if(l IN_LIST TB_TIERS)
        set(has_tier TRUE)
      endif()
    endforeach()
    if(NOT has_tier)
      set_property(TEST ${t} APPEND PROPERTY LABELS ${tier})
    endif()
  endforeach()
  foreach(t ${ARGN})
    if(NOT TEST ${t})
      message(FATAL_ERROR "tb_directory_tier: no test ${t} in ${CMAKE_CURRENT_SOURCE_DIR}")
    endif()
    set_property(TEST ${t} APPEND PROPERTY LABELS slow)
  endforeach()
endfunction()

# Tests run one at a time.  The README's test command is `ctest -j3`, and
# what may run beside another test is a guest under QEMU's TCG (one host CPU
# each, checking tracers, not host timings) or a test that times nothing.
# Guests are named with tb_beside_guest(<test>...): each holds one of two
# guest slots (RESOURCE_LOCK tb_guest_slot_1 or _2, tb_assign_guest_slots),
# so two guests run at once, one per host CPU.  Untimed tests that keep a CPU
# busy take a slot too (tb_untimed_busy); the third place is for untimed
# tests that are short or wait more than they compute (tb_untimed,
# tb_untimed_on_host).  Every other test of a directory is RUN_SERIAL:
# nothing runs beside a timing test.  tb_tests_run_alone() at the top of
# each test directory's CMakeLists.txt applies it at the directory's end;
# tb_check_run_alone(<dir>...) fails the configuration for a directory with
# tests that lacks it.
function(tb_beside_guest)
  foreach(t ${ARGN})
    get_property(labels TEST ${t} PROPERTY LABELS)
    if(NOT "vmlab" IN_LIST labels)
      message(FATAL_ERROR "tb_beside_guest: ${t} is not a vmlab test")
    endif()
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY TB_BESIDE_GUEST ${ARGN})
endfunction()

# tb_untimed(<test>...): tests that time nothing and that nothing they check
# depends on time (checks of files and of parsers), short or waiting: they
# take the third place beside the guests, or run beside one another, and are
# not RUN_SERIAL.  Without a COST of their own they come after the guests in
# ctest's order (a fixture's setup before the tests that need it) and take
# the place the guests leave, instead of holding both CPUs alone after them.
# A test that times the host (a tracer's overhead, a run's figures, a
# wall-time bound that a busy CPU would break) is never named here.
function(tb_untimed)
  set_property(DIRECTORY APPEND PROPERTY TB_UNTIMED ${ARGN})
endfunction()

# tb_untimed_on_host(<test>...): untimed tests that attach tracers on this
# host or drive its shared services (tracefs, the machine lock, the LTTng
# session daemon) and check what they did, never how long it took: signals
# mid-run, hostile inputs, history back ends.  Beside the guests, as
# tb_untimed's, but one at a time (RESOURCE_LOCK tb_host_tracers): two of
# them would meet at the machine lock and in tracefs.  Those that wait more
# than they compute (half a CPU or less while they run) take the third place
# and cost the guests little; those whose real runs keep a CPU busy are named
# with tb_untimed_busy too.
function(tb_untimed_on_host)
  set_property(DIRECTORY APPEND PROPERTY TB_UNTIMED ${ARGN})
  set_property(DIRECTORY APPEND PROPERTY TB_UNTIMED_ON_HOST ${ARGN})
endfunction()

# tb_untimed_busy(<test>...): untimed tests that keep a CPU busy for a while
# (a build, time-boxed fuzzing, quick runs of real tracers whose figures
# nothing checks): in the third place they would take the guests' CPUs, so
# they hold guest slot 2, as a guest does, and the guests are dealt around
# their COST (about their seconds on one CPU; tb_assign_guest_slots).  They
# must be in a directory configured before tests/vm, whose guests are dealt
# at its end.
function(tb_untimed_busy)
  set_property(DIRECTORY APPEND PROPERTY TB_UNTIMED ${ARGN})
  set_property(DIRECTORY APPEND PROPERTY TB_UNTIMED_BUSY ${ARGN})
endfunction()

function(tb_tests_run_alone)
  set_property(DIRECTORY PROPERTY TB_RUN_ALONE TRUE)
  cmake_language(DEFER CALL tb_apply_run_alone)
endfunction()

# The seconds (COSTs) dealt to guest slot N so far, over every directory.
function(tb_slot_seconds slot out)
  get_property(seconds GLOBAL PROPERTY TB_SLOT_${slot}_SECONDS)
  if(NOT seconds)
    set(seconds 0)
  endif()
  set(${out} ${seconds} PARENT_SCOPE)
endfunction()

# Puts `test` in guest slot N and adds its seconds to the slot's.
function(tb_put_in_slot test slot seconds)
  tb_slot_seconds(${slot} sum)
  math(EXPR sum "${sum} + ${seconds}")
  set_property(GLOBAL PROPERTY TB_SLOT_${slot}_SECONDS ${sum})
  set_property(TEST ${test} APPEND PROPERTY RESOURCE_LOCK tb_guest_slot_${slot})
endfunction()

# The directory's guests into the two guest slots, longest first, each to
# the slot with fewer seconds so far (a guest's COST is about its seconds
# under TCG; slot 2 holds the busy untimed tests' already): the two slots
# end within a short guest of each other.  A guest's COST then becomes
# 1000 + seconds, so ctest starts the guests before anything else, the
# longest first.
function(tb_assign_guest_slots)
  set_property(GLOBAL PROPERTY TB_GUEST_SLOTS_DEALT TRUE)
  set(entries "")
  foreach(t ${ARGN})
    get_property(cost TEST ${t} PROPERTY COST)
    if(NOT cost)
      set(cost 0)
    endif()
    list(APPEND entries "${cost}|${t}")
  endforeach()
  list(SORT entries COMPARE NATURAL ORDER DESCENDING)
  foreach(e ${entries})
    string(REPLACE "|" ";" parts "${e}")
    list(GET parts 0 cost)
    list(GET parts 1 t)
    tb_slot_seconds(1 load_1)
    tb_slot_seconds(2 load_2)
    set(slot 1)
    if(load_2 LESS load_1)
      set(slot 2)
    endif()
    tb_put_in_slot(${t} ${slot} ${cost})
    math(EXPR cost "1000 + ${cost}")
    set_property(TEST ${t} PROPERTY COST ${cost})
  endforeach()
endfunction()

# The busy untimed tests into guest slot 2, before the guests are dealt.
function(tb_hold_slot_2)
  get_property(dealt GLOBAL PROPERTY TB_GUEST_SLOTS_DEALT)
  foreach(t ${ARGN})
    if(dealt)
      message(FATAL_ERROR "tb_untimed_busy: ${t} is configured after the guests were dealt into their slots")
    endif()
    get_property(cost TEST ${t} PROPERTY COST)
    if(NOT cost)
      message(FATAL_ERROR "tb_untimed_busy: ${t} has no COST (its seconds on one CPU)")
    endif()
    tb_put_in_slot(${t} 2 ${cost})
  endforeach()
endfunction()

function(tb_apply_run_alone)
  get_property(tests DIRECTORY PROPERTY TESTS)
  get_property(beside DIRECTORY PROPERTY TB_BESIDE_GUEST)
  get_property(untimed DIRECTORY PROPERTY TB_UNTIMED)
  get_property(on_host DIRECTORY PROPERTY TB_UNTIMED_ON_HOST)
  get_property(busy DIRECTORY PROPERTY TB_UNTIMED_BUSY)
  foreach(t ${untimed})
    if(NOT TEST ${t})
      message(FATAL_ERROR "tb_untimed: no test ${t} in ${CMAKE_CURRENT_SOURCE_DIR}")
    endif()
    if(t IN_LIST beside)
      message(FATAL_ERROR "tb_untimed: ${t} is a guest (tb_beside_guest) already")
    endif()
  endforeach()
  foreach(t ${tests})
    if(t IN_LIST on_host)
      set_property(TEST ${t} APPEND PROPERTY RESOURCE_LOCK tb_host_tracers)
    endif()
    if(t IN_LIST untimed OR t IN_LIST beside)
      # Beside anything but a RUN_SERIAL test, which waits for it to end.
    else()
      set_property(TEST ${t} PROPERTY RUN_SERIAL TRUE)
    endif()
  endforeach()
  if(busy)
    tb_hold_slot_2(${busy})
  endif()
  if(beside)
    tb_assign_guest_slots(${beside})
  endif()
endfunction()

function(tb_check_run_alone)
  foreach(dir ${ARGN})
    get_property(tests DIRECTORY ${dir} PROPERTY TESTS)
    get_property(applied DIRECTORY ${dir} PROPERTY TB_RUN_ALONE)
    if(tests AND NOT applied)
      message(FATAL_ERROR "${dir}/CMakeLists.txt adds tests but does not call tb_tests_run_alone() at its top")
    endif()
  endforeach()
endfunction()
