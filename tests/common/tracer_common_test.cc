// tracers/common: the naming scheme of owned objects and process liveness.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tracers/common/names.h"
#include "tracers/common/proc.h"

namespace tracebench::common {
namespace {

TEST(OwnedNames, CarryThisProcessAndParseBack) {
  const long me = ::getpid();
  EXPECT_EQ(owned_name(), "tracebench-" + std::to_string(me));
  EXPECT_EQ(owned_name("kp3"), "tracebench-" + std::to_string(me) + "-kp3");
  EXPECT_EQ(owned_event_name("features"), "tb" + std::to_string(me) + "_features");
  EXPECT_EQ(name_owner(owned_name("kp3")), me);
  EXPECT_EQ(name_owner(owned_name()), me);
  EXPECT_EQ(event_owner(owned_event_name("p0_tb_site")), me);
  EXPECT_EQ(name_owner("tracebench-lttng-4242-aZ81", "tracebench-lttng-"), 4242);
}

TEST(OwnedNames, OthersNamesAreNotOurs) {
  for (const char* n : {"tracebench-xcheck-12", "tracebench-", "tracebench-12x", "other-12", "tracebench-1234567890",
                        "tb12", "tracebench12"})
    EXPECT_EQ(name_owner(n), -1) << n;
  EXPECT_EQ(event_owner("tb_count"), -1);   // a BPF program name, no pid
  EXPECT_EQ(event_owner("tb12-x"), -1);
}

TEST(Liveness, ThisProcessIsAliveAndNotGone) {
  EXPECT_TRUE(pid_alive(::getpid()));
  EXPECT_FALSE(owner_is_gone(::getpid()));  // never our own objects
  EXPECT_FALSE(pid_alive(0));
  EXPECT_FALSE(pid_alive(-1));
  EXPECT_FALSE(owner_is_gone(-1));
}

TEST(Liveness, AZombieIsGoneAndAReapedProcessToo) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  // Not reaped yet: a zombie.  Its objects are leftovers already.
  for (int i = 0; i < 200 && pid_alive(child); ++i) usleep(10000);
  EXPECT_FALSE(pid_alive(child));
  EXPECT_TRUE(owner_is_gone(child));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(pid_alive(child));
}

TEST(Proc, AddressOfOurOwnCodeMapsToOurBinary) {
  std::string file;
  std::uint64_t offset = 0;
  ASSERT_TRUE(address_to_file_offset(::getpid(), reinterpret_cast<std::uintptr_t>(&pid_alive), &file, &offset));
  EXPECT_EQ(file.substr(file.rfind('/') + 1), "tracer_common_test");
  EXPECT_GT(offset, 0u);
  int on_stack = 0;
  Status s = address_to_file_offset(::getpid(), reinterpret_cast<std::uintptr_t>(&on_stack), &file, &offset);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("not in a file-backed mapping"), std::string::npos) << s.message();
  EXPECT_FALSE(online_cpus().empty());
  EXPECT_FALSE(threads_of(::getpid()).empty());
}

}  // namespace
}  // namespace tracebench::common
