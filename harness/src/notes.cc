#include "tracebench/notes.h"

namespace tracebench {

bool note_is_information(const std::string& note) {
  // A capped batch is how the sample was sized (the baseline then resolves
  // to a fraction of a cycle per event); the repetitions' stop says how long
  // the figure was measured, its interval says how tight it is.
  // A level shift left out of the figure is how it was taken too: the figure
  // is of the level the run ended in (steady_state.h).
  for (const char* prefix :
       {"batch capped", "repetitions stopped", "repetitions went on", "level shift in the repetitions", "injected "}) {
    if (note.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace tracebench
