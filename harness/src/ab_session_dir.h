// Internal to `tracebench ab`: the session's directory, claimed before
// anything runs.  Checking that a directory is empty and using it later lets
// two sessions started in the same second both pass the check, and the
// second writes its runs into the first's pairs; a claim is made instead,
// in one step the file system decides: DIR/ab.json created with O_EXCL.
#pragma once

#include <string>

#include "tracebench/status.h"

namespace tracebench {

// Claims `dir` (made when missing; an existing one must be empty) for this
// session: the first of two sessions to create DIR/ab.json has it, the
// other is refused (*taken true when given).  *made: this call made the
// directory.
Status claim_session_dir(const std::string& dir, bool* made, bool* taken = nullptr);

// Without --out: results/ab-<UTC time>, or -2, -3, ... when another session
// claimed that name first.
Status claim_default_session_dir(std::string* dir, bool* made);

// Undoes a claim when the session never started (the machine lock was
// refused): ab.json removed, and the directory when the claim made it.
void release_session_dir(const std::string& dir, bool made);

}  // namespace tracebench
