// A benchmark's notes (BenchmarkResult::warnings) sorted for the reader:
// a warning is something a user should act on (a figure weakened by lost
// events, excluded samples, dropped repetitions, a consumer on the measured
// CPU); information says how the figure was taken and does not weaken it
// (a capped batch, why the repetitions stopped).  The console prints
// warnings always and information with -v; result.json keeps every note.
#pragma once

#include <string>

namespace tracebench {

// The prefixes of the notes that are information (the runner writes them:
// bench_run.h, runner.cc).
bool note_is_information(const std::string& note);

}  // namespace tracebench
