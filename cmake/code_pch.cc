// The translation unit that builds the precompiled header of the code at the
// build type's flags (tracebench_code_headers in TracebenchHelpers.cmake);
// nothing of its own.
