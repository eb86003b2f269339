# Finds PAPI through its pkg-config file (Debian's libpapi-dev ships papi.pc);
# defines PAPI::PAPI.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_PAPI QUIET papi)
endif()
find_path(PAPI_INCLUDE_DIR papi.h HINTS ${PC_PAPI_INCLUDE_DIRS})
find_library(PAPI_LIBRARY papi HINTS ${PC_PAPI_LIBRARY_DIRS})
set(PAPI_VERSION ${PC_PAPI_VERSION})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PAPI REQUIRED_VARS PAPI_LIBRARY PAPI_INCLUDE_DIR VERSION_VAR PAPI_VERSION)
if(PAPI_FOUND AND NOT TARGET PAPI::PAPI)
  add_library(PAPI::PAPI UNKNOWN IMPORTED)
  set_target_properties(PAPI::PAPI PROPERTIES IMPORTED_LOCATION ${PAPI_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${PAPI_INCLUDE_DIR})
endif()
mark_as_advanced(PAPI_INCLUDE_DIR PAPI_LIBRARY)
