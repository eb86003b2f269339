// The machine lock (tracebench/machine_lock.h): the holder's record, its
// description, and taking, refusing, sharing and inheriting the lock in a
// directory of the test's own (TRACEBENCH_LOCK_DIR), never the machine's.
#include "tracebench/machine_lock.h"

#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace tracebench {
namespace {

TEST(LockRecord, RoundTrips) {
  LockHolder h;
  h.pid = 4242;
  h.pid_ns = "pid:[4026531836]";
  h.start_ticks = 123456;
  h.started_utc = "2026-11-27T19:40:02Z";
  h.boot_id = "39348ec2-305b-49e1-bb6c-064120ea682a";
  h.command = "tracebench run -t ftrace -w call -o ftrace.x=a=b";
  LockHolder back;
  ASSERT_TRUE(parse_lock_record(format_lock_record(h), &back));
  EXPECT_EQ(back.pid, h.pid);
  EXPECT_EQ(back.pid_ns, h.pid_ns);
  EXPECT_EQ(back.start_ticks, h.start_ticks);
  EXPECT_EQ(back.started_utc, h.started_utc);
  EXPECT_EQ(back.boot_id, h.boot_id);
  EXPECT_EQ(back.command, h.command);
}

TEST(LockRecord, NewlinesInTheCommandStayOnItsLine) {
  LockHolder h;
  h.pid = 7;
  h.command = "tracebench dvm -n 'BEGIN\n{ exit(0); }'\npid=99";
  LockHolder back;
  ASSERT_TRUE(parse_lock_record(format_lock_record(h), &back));
  EXPECT_EQ(back.pid, 7);
  EXPECT_EQ(back.command, "tracebench dvm -n 'BEGIN { exit(0); }' pid=99");
}

TEST(LockRecord, ParsesOrRefusesTable) {
  struct Case {
    const char* text;
    bool ok;
    long pid;
    const char* command;
  };
  const Case cases[] = {
      {"", false, 0, ""},                          // a free lock, or a holder not written yet
      {"command=tracebench run\n", false, 0, ""},  // no pid
      {"pid=abc\n", false, 0, ""},                 // not a number
      {"pid=12x\n", false, 0, ""},                 // trailing garbage
      {"pid=0\n", false, 0, ""},                   // no process has pid 0
      {"pid=-5\n", false, 0, ""},
      {"pid=12", true, 12, ""},                                      // no final newline
      {"pid=12\ncommand=a=b c\n", true, 12, "a=b c"},                // '=' in a value
      {"junk line\npid=31\nnew_key=1\ncommand=x\n", true, 31, "x"},  // unknown lines ignored
      {"pid=31\nstart_ticks=zz\n", true, 31, ""},                    // a bad optional field is dropped
  };
  for (const auto& c : cases) {
    LockHolder h;
    EXPECT_EQ(parse_lock_record(c.text, &h), c.ok) << c.text;
    if (c.ok) {
      EXPECT_EQ(h.pid, c.pid) << c.text;
      EXPECT_EQ(h.command, c.command) << c.text;
    }
  }
}

TEST(LockRecord, DescribesTheHolderTable) {
  LockHolder h;
  h.pid = 812;
  h.pid_ns = "pid:[4026531836]";
  h.started_utc = "2026-11-27T19:40:02Z";
  h.boot_id = "boot-a";
  h.command = "tracebench run -t ftrace -w call";
  struct Case {
    std::string ns, boot, command;
    std::string want, not_want;
  };
  const Case cases[] = {
      {"pid:[4026531836]", "boot-a", h.command, "pid 812, since 2026-11-27T19:40:02Z: tracebench run -t ftrace -w call",
       "namespace"},
      {"pid:[4026532999]", "boot-a", h.command, "pid 812 of another pid namespace (pid:[4026531836]", "earlier boot"},
      {"pid:[4026531836]", "boot-b", h.command, "(recorded in an earlier boot)", "namespace"},
      {"pid:[4026531836]", "boot-a", "", ": command unknown", "tracebench run"},
  };
  for (const auto& c : cases) {
    LockHolder x = h;
    x.command = c.command;
    std::string d = describe_holder(x, c.ns, c.boot);
    EXPECT_NE(d.find(c.want), std::string::npos) << d;
    EXPECT_EQ(d.find(c.not_want), std::string::npos) << d;
  }
}

TEST(LockRecord, ThisProcessKnowsItself) {
  LockHolder me = this_process();
  EXPECT_EQ(me.pid, getpid());
  EXPECT_EQ(me.pid_ns.rfind("pid:[", 0), 0u) << me.pid_ns;
  EXPECT_GT(me.start_ticks, 0u);
  EXPECT_FALSE(me.boot_id.empty());
  EXPECT_NE(me.command.find("lock_site_test"), std::string::npos) << me.command;
}

// Each test takes locks in a fresh directory of its own.
class LockDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tb-lock-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv("TRACEBENCH_LOCK_DIR", dir_.c_str(), 1);
    unsetenv("TRACEBENCH_LOCK_FD");
  }
  void TearDown() override {
    unsetenv("TRACEBENCH_LOCK_DIR");
    unsetenv("TRACEBENCH_LOCK_FD");
    for (const char* name : {"tracebench.lock", "tracebench.concurrent", "victim", "elsewhere"})
      unlink((dir_ + "/" + name).c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_;
};

TEST_F(LockDir, SecondCommandIsRefusedWithTheHolder) {
  EXPECT_EQ(lock_dir(), dir_);
  MachineLock first;
  ASSERT_TRUE(first.acquire({}, "first").is_ok());
  EXPECT_FALSE(first.concurrent());
  // A second open of the file is another holder, as a second process's would be.
  MachineLock second;
  Status s = second.acquire({}, "tracebench run");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("held by pid " + std::to_string(getpid())), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("lock_site_test"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--allow-concurrent"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--wait-lock"), std::string::npos) << s.message();
  // A refused command leaves the holder's record as it was.
  MachineLock third;
  Status again = third.acquire({}, "tracebench cleanup");
  EXPECT_NE(again.message().find("held by pid " + std::to_string(getpid())), std::string::npos) << again.message();
  // Nobody ran beside the first.
  EXPECT_FALSE(first.others_ran_beside());
  first.release();
  EXPECT_TRUE(second.acquire({}, "tracebench run").is_ok());
}

TEST_F(LockDir, WaitGivesUpAtItsBound) {
  MachineLock first;
  ASSERT_TRUE(first.acquire({}, "first").is_ok());
  MachineLock second;
  LockRequest wait{LockMode::kWait, 0.3};
  Status s = second.acquire(wait, "tracebench run");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("(waited 0.3 s)"), std::string::npos) << s.message();
}

TEST_F(LockDir, ConcurrentRunsBesideAndBothKnow) {
  MachineLock first;
  ASSERT_TRUE(first.acquire({}, "first").is_ok());
  MachineLock beside;
  ASSERT_TRUE(beside.acquire({LockMode::kConcurrent, 0}, "tracebench run").is_ok());
  EXPECT_TRUE(beside.concurrent());
  EXPECT_NE(beside.concurrent_with().find("pid " + std::to_string(getpid())), std::string::npos);
  EXPECT_TRUE(first.others_ran_beside());
  // Cleanup removes nothing while either lives.
  MachineLock cleanup;
  EXPECT_FALSE(cleanup.acquire_for_cleanup().is_ok());
  first.release();
  Status s = cleanup.acquire_for_cleanup();
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("--allow-concurrent"), std::string::npos) << s.message();
  beside.release();
  EXPECT_TRUE(cleanup.acquire_for_cleanup().is_ok());
}

TEST_F(LockDir, ConcurrentRunThatEndedIsStillSeenByTheHolder) {
  MachineLock first;
  ASSERT_TRUE(first.acquire({}, "first").is_ok());
  usleep(20000);
  {
    MachineLock beside;
    ASSERT_TRUE(beside.acquire({LockMode::kConcurrent, 0}, "tracebench run").is_ok());
  }
  EXPECT_TRUE(first.others_ran_beside());
}

TEST_F(LockDir, ChildInheritsOnlyTheRealLock) {
  MachineLock parent;
  ASSERT_TRUE(parent.acquire({}, "tracebench model suite").is_ok());
  ASSERT_TRUE(parent.share_with_children().is_ok());
  ASSERT_NE(getenv("TRACEBENCH_LOCK_FD"), nullptr);
  {
    // The very open file: flock on it succeeds, so the child runs under it.
    MachineLock child;
    EXPECT_TRUE(child.acquire({}, "tracebench run").is_ok());
    EXPECT_FALSE(child.concurrent());
  }                                // a child's release never frees its parent's lock
  unsetenv("TRACEBENCH_LOCK_FD");  // another process: no such descriptor
  MachineLock other;
  EXPECT_FALSE(other.acquire({}, "tracebench run").is_ok()) << "the child's end released the parent's lock";
  // A descriptor that is not the lock file proves nothing.
  int devnull = open("/dev/null", O_RDONLY);
  setenv("TRACEBENCH_LOCK_FD", std::to_string(devnull).c_str(), 1);
  MachineLock forged;
  EXPECT_FALSE(forged.acquire({}, "tracebench run").is_ok());
  EXPECT_EQ(getenv("TRACEBENCH_LOCK_FD"), nullptr) << "a false name is not passed on";
  close(devnull);
}

TEST_F(LockDir, CleanupTakesItAndRunsAreRefusedMeanwhile) {
  MachineLock cleanup;
  ASSERT_TRUE(cleanup.acquire_for_cleanup().is_ok());
  MachineLock run;
  Status s = run.acquire({}, "tracebench run");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("held by pid " + std::to_string(getpid())), std::string::npos) << s.message();
}

// Waits up to `seconds` for `pid` (a child, or an orphan this subreaper
// adopted) to end; its wait status, or -1 when it did not.
int reaped(pid_t pid, double seconds) {
  for (int i = 0; i < seconds * 100; ++i) {
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) return st;
    usleep(10000);
  }
  return -1;
}

// A child measuring under the lock its parent handed down ends with that
// parent (`ab` or `model suite` killed by SIGKILL), and one whose parent is
// already gone does not take the lock.  The parent and its children are
// forked here; this process adopts the orphans to see how they end.
TEST_F(LockDir, AChildEndsWithTheParentThatHandedItTheLock) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  const pid_t parent = fork();
  if (parent == 0) {
    MachineLock lock;
    if (!lock.acquire({}, "tracebench ab").is_ok() || !lock.share_with_children().is_ok()) _exit(3);
    for (int k = 0; k < 2; ++k) {
      const pid_t child = fork();
      if (child == 0) {
        char c = 0;
        if (k == 0 && read(go[0], &c, 1) != 1) _exit(6);  // the late one: takes it after the parent died
        MachineLock mine;
        const bool took = mine.acquire({}, "tracebench run").is_ok();
        if (k == 0) _exit(took ? 4 : 5);
        pid_t me = getpid();
        (void)!write(ready[1], &me, sizeof me);
        for (;;) pause();
      }
      if (k == 0) (void)!write(ready[1], &child, sizeof child);  // before the other child exists
    }
    for (;;) pause();
  }
  pid_t measuring = 0, late = 0;
  ASSERT_EQ(read(ready[0], &late, sizeof late), static_cast<ssize_t>(sizeof late));
  ASSERT_EQ(read(ready[0], &measuring, sizeof measuring), static_cast<ssize_t>(sizeof measuring));
  kill(parent, SIGKILL);
  ASSERT_NE(reaped(parent, 5), -1);
  const int st = reaped(measuring, 5);
  if (st == -1) kill(measuring, SIGKILL);
  EXPECT_TRUE(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM) << "the child measured on: status " << st;
  (void)!write(go[1], "x", 1);
  const int late_st = reaped(late, 5);
  if (late_st == -1) kill(late, SIGKILL);
  EXPECT_TRUE(late_st != -1 && WIFEXITED(late_st) && WEXITSTATUS(late_st) == 5)
      << "a child took a lock whose parent was gone: status " << late_st;
  MachineLock next;
  EXPECT_TRUE(next.acquire({}, "tracebench run").is_ok()) << "the lock stayed held";
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  for (int fd : {ready[0], ready[1], go[0], go[1]}) close(fd);
}

std::string text_of(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A name planted at the lock's path (the lock directories are writable by
// anyone) is refused, never followed: a victim file keeps its bytes, a
// dangling link's target is not created, a FIFO does not block.
TEST_F(LockDir, PlantedNamesAreRefusedNotFollowedTable) {
  const std::string victim = dir_ + "/victim", elsewhere = dir_ + "/elsewhere";
  struct Case {
    const char* name;
    const char* lock;  // which of the two files
    const char* expect;
    int (*plant)(const std::string& victim, const std::string& elsewhere, const std::string& at);
  };
  const Case cases[] = {
      {"symlink to a file", "tracebench.lock", "a symbolic link",
       [](const std::string& v, const std::string&, const std::string& at) { return symlink(v.c_str(), at.c_str()); }},
      {"dangling symlink", "tracebench.lock", "a symbolic link",
       [](const std::string&, const std::string& e, const std::string& at) { return symlink(e.c_str(), at.c_str()); }},
      {"hard link", "tracebench.lock", "hard links",
       [](const std::string& v, const std::string&, const std::string& at) { return link(v.c_str(), at.c_str()); }},
      {"FIFO", "tracebench.lock", "a FIFO",
       [](const std::string&, const std::string&, const std::string& at) { return mkfifo(at.c_str(), 0644); }},
      {"symlink as the concurrent file", "tracebench.concurrent", "a symbolic link",
       [](const std::string& v, const std::string&, const std::string& at) { return symlink(v.c_str(), at.c_str()); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    { std::ofstream(victim) << "root:x:0:0:root:/root:/bin/bash\n"; }
    const std::string at = dir_ + "/" + c.lock;
    ASSERT_EQ(c.plant(victim, elsewhere, at), 0);
    MachineLock holder, lock;
    const bool concurrent = std::string(c.lock) == "tracebench.concurrent";
    if (concurrent) { ASSERT_TRUE(holder.acquire({}, "holder").is_ok()); }
    Status s = lock.acquire({concurrent ? LockMode::kConcurrent : LockMode::kRefuse, 0}, "tracebench run");
    EXPECT_FALSE(s.is_ok());
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("remove it"), std::string::npos) << s.message();
    lock.release();
    holder.release();
    MachineLock cleanup;
    EXPECT_FALSE(cleanup.acquire_for_cleanup().is_ok());
    cleanup.release();
    EXPECT_EQ(text_of(victim), "root:x:0:0:root:/root:/bin/bash\n");
    EXPECT_NE(access(elsewhere.c_str(), F_OK), 0) << "a dangling link's target was created";
    unlink(at.c_str());
    unlink(victim.c_str());
  }
}

}  // namespace
}  // namespace tracebench
