// The translation unit that builds the commands' precompiled header
// (tracebench_command_headers in TracebenchHelpers.cmake); nothing of its own.
