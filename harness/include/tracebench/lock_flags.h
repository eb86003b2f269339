// The machine lock's flags, the same in every command that takes it
// (tracebench/machine_lock.h): --wait-lock[=SECONDS] and --allow-concurrent.
#pragma once

#include <CLI/CLI.hpp>

#include "tracebench/machine_lock.h"

namespace tracebench {

// Without a value --wait-lock waits up to an hour: every wait has a bound.
inline constexpr double kDefaultLockWaitS = 3600;

struct LockFlags {
  double wait_s = kDefaultLockWaitS;
  bool allow_concurrent = false;
  CLI::Option* wait = nullptr;
  // What the flags ask for; an error for both at once.
  Status request(LockRequest* out) const {
    const bool waits = wait && wait->count() > 0;
    if (waits && allow_concurrent)
      return Status::error(
          "--wait-lock and --allow-concurrent exclude each other: wait for the lock, or run beside "
          "its holder");
    out->mode = allow_concurrent ? LockMode::kConcurrent : waits ? LockMode::kWait : LockMode::kRefuse;
    out->wait_s = wait_s;
    return Status::ok();
  }
  // For a command that runs its measurements as children (model suite, ab):
  // the lock as the flags ask, held for the whole command and handed to each
  // child, which takes it too, so nobody else measures in between.
  // Every error begins with `what`, as acquire()'s do.
  Status hold_for_children(MachineLock* lock, const char* what) const {
    auto named = [what](const Status& s) { return Status::error(std::string(what) + ": " + s.message()); };
    LockRequest req;
    if (Status s = request(&req); !s) return named(s);
    TB_TRY(lock->acquire(req, what));
    if (Status s = lock->share_with_children(); !s) return named(s);
    return Status::ok();
  }
};

inline void add_lock_flags(CLI::App* app, LockFlags* f) {
  f->wait = app->add_option("--wait-lock", f->wait_s,
                            "When another tracebench command holds the machine lock, wait for it up to SECONDS "
                            "(1..86400; no value: 3600) instead of refusing at once")
                ->expected(0, 1)
                ->default_str("3600")
                ->check(CLI::Range(1.0, 86400.0));
  app->add_flag("--allow-concurrent", f->allow_concurrent,
                "Run even while another tracebench command holds the machine lock; the results are marked "
                "concurrent (each run's probes and load may be in the other's figures)");
}

}  // namespace tracebench
