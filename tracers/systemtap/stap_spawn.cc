#include "stap_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cstring>

extern char** environ;

namespace tracebench::systemtap {

Status spawn(const SpawnSpec& s, pid_t* pid) {
  if (s.argv.empty()) return Status::error("spawn: no command");
  std::vector<char*> argv;
  for (const auto& a : s.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, s.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (s.stderr_path.empty())
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  else
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, s.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!s.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, s.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (s.own_group_default_signals) {
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  const int rc = posix_spawnp(pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::error("spawn " + s.argv[0] + ": " + std::strerror(rc));
  return Status::ok();
}

}  // namespace tracebench::systemtap
