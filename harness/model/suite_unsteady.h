// A model-suite measurement measured again while a benchmark it wrote came
// out `unsteady` (its overhead on no one level: no figure, so the fit would
// go without that configuration's point).  On a slow or emulated host a
// quick run is unsteady now and then; the fit's terms need every point the
// plan asked for (a per-enable term with three runs of its configuration has
// none to spare).  Every attempt stays in the runs folder and in the suite's
// steps: nothing is thrown away, the fit reads only the `ok` benchmarks.
#pragma once

#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace tracebench::model {

// How many times a measurement is run at most while it comes out unsteady.
inline constexpr int kUnsteadyAttempts = 3;

// The run folders (names) under `runs`; none when it does not exist yet.
std::set<std::string> run_folders(const std::string& runs);

// The benchmarks marked `unsteady` in the result.json of each run folder
// under `runs` that is not in `before`.
std::vector<std::string> unsteady_since(const std::string& runs, const std::set<std::string>& before);

// `step` (which writes one run folder under `runs`, and returns its exit
// status) until no benchmark of the folder it wrote is unsteady, at most
// `attempts` times; says on `say` why it measures again or gives up.
// Returns the last attempt's exit status (a failed attempt is not repeated).
int measure_until_steady(const std::function<int()>& step, const std::string& runs, int attempts, std::ostream& say);

}  // namespace tracebench::model
