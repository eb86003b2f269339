// The probe-site check (tracebench/probe_site.h): parsing maps and
// uprobe_events, the byte comparison, and the check on this binary's own
// code, clean and then patched the way a uprobe patches it (a private copy
// of the page with an int3 in it, the file untouched).
#include "tracebench/probe_site.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" __attribute__((noinline, used)) int tb_probe_site_test_target(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}

namespace tracebench {
namespace {

TEST(ProbeSite, FindsTheMappingTable) {
  const std::string maps =
      "55d0c0000000-55d0c0001000 r--p 00000000 fd:01 1311 /usr/bin/tb\n"
      "55d0c0001000-55d0c0400000 r-xp 00001000 fd:01 1311 /usr/bin/tb\n"
      "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
      "7f1000000000-7f1000002000 r-xp 00002000 08:03 77 /lib/with space.so (deleted)\n";
  struct Case {
    std::uintptr_t address;
    bool found, exec;
    std::uint64_t offset;
    std::string path;
  };
  const Case cases[] = {
      {0x55d0c0000000, true, false, 0, "/usr/bin/tb"},
      {0x55d0c0001234, true, true, 0x1000, "/usr/bin/tb"},
      {0x55d0c03fffff, true, true, 0x1000, "/usr/bin/tb"},
      {0x55d0c0400000, false, false, 0, ""},  // the end is exclusive
      {0x7f0000000010, true, false, 0, ""},   // anonymous
      {0x7f1000000001, true, true, 0x2000, "/lib/with space.so (deleted)"},
      {0x10, false, false, 0, ""},
  };
  for (const auto& c : cases) {
    MappedRange m;
    ASSERT_EQ(find_mapping(maps, c.address, &m), c.found) << std::hex << c.address;
    if (!c.found) continue;
    EXPECT_EQ(m.executable, c.exec) << std::hex << c.address;
    EXPECT_EQ(m.file_offset, c.offset) << std::hex << c.address;
    EXPECT_EQ(m.path, c.path) << std::hex << c.address;
  }
  MappedRange m;
  ASSERT_TRUE(find_mapping(maps, 0x55d0c0001234, &m));
  EXPECT_EQ(m.inode, 1311u);
  EXPECT_EQ(m.start, 0x55d0c0001000u);
  EXPECT_EQ(m.end, 0x55d0c0400000u);
}

TEST(ProbeSite, DifferingOffsetsTable) {
  std::vector<std::uint8_t> disk(20000);
  for (std::size_t i = 0; i < disk.size(); ++i) disk[i] = static_cast<std::uint8_t>(i * 7);
  struct Case {
    std::vector<std::size_t> patched;
    std::size_t max;
    std::vector<std::size_t> want;
    std::size_t total;
  };
  const Case cases[] = {
      {{}, 4, {}, 0},
      {{0}, 4, {0}, 1},
      {{4095, 4096}, 4, {4095, 4096}, 2},                // across a chunk boundary
      {{19999}, 4, {19999}, 1},                          // the last byte
      {{10, 11, 12, 13, 14, 9000}, 3, {10, 11, 12}, 6},  // capped list, full count
  };
  for (const auto& c : cases) {
    std::vector<std::uint8_t> mapped = disk;
    for (std::size_t at : c.patched) mapped[at] = 0xcc == disk[at] ? 0x90 : 0xcc;
    std::size_t total = 99;
    EXPECT_EQ(differing_offsets(mapped.data(), disk.data(), disk.size(), c.max, &total), c.want);
    EXPECT_EQ(total, c.total);
  }
}

TEST(ProbeSite, UprobeEntriesOnTheSameInode) {
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  struct stat st {};
  ASSERT_EQ(stat(self, &st), 0);
  const std::string mine = std::string(self);
  const std::string events = "p:tracebench/tb99999_call " + mine + ":0x0000000000001139\n" +
                             "p:foreign/x /usr/bin/true:0x0000000000001000\n" + "p:sdt/hot " + mine +
                             ":0x0000000000002000(0x0000000000004010) arg1=%di\n" +
                             "r:uprobes/gone /no/such/file:0x0000000000000010\n" + "garbage\n";
  std::vector<std::string> got = uprobe_entries_on(events, mine, st.st_dev, st.st_ino);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].rfind("p:tracebench/tb99999_call ", 0), 0u);
  EXPECT_EQ(got[1].rfind("p:sdt/hot ", 0), 0u);
  // A path that cannot be looked up matches by name only.
  EXPECT_EQ(uprobe_entries_on(events, "/no/such/file", 0, 0).size(), 1u);
}

TEST(ProbeSite, ThisBinaryIsClean) {
  std::string unchecked;
  Status s =
      check_probe_site_unshared(reinterpret_cast<std::uintptr_t>(&tb_probe_site_test_target), "test", &unchecked);
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_TRUE(unchecked.empty()) << unchecked;
  // 0: this binary's code wherever the harness lives in it.
  EXPECT_TRUE(check_probe_site_unshared(0, "self", &unchecked).is_ok());
}

// A uprobe gives the process a private copy of the page with an int3 at the
// site; mprotect + a write here does the same to this process's mapping.
TEST(ProbeSite, PatchedSiteIsNamedAndRestoredSiteIsClean) {
  auto* site = reinterpret_cast<std::uint8_t*>(&tb_probe_site_test_target);
  const long page = sysconf(_SC_PAGESIZE);
  auto* page_start = reinterpret_cast<std::uint8_t*>(reinterpret_cast<std::uintptr_t>(site) & ~(page - 1));
  const std::size_t len = static_cast<std::size_t>(site + 1 - page_start + page - 1) / page * page;
  ASSERT_EQ(mprotect(page_start, len, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
  const std::uint8_t original = *site;
  *site = 0xcc;
  std::string unchecked;
  Status s =
      check_probe_site_unshared(reinterpret_cast<std::uintptr_t>(site), "user:tb_probe_site_test_target", &unchecked);
  *site = original;
  ASSERT_EQ(mprotect(page_start, len, PROT_READ | PROT_EXEC), 0);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("foreign probe"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("1 byte(s)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("(the probe site user:tb_probe_site_test_target +0): 0xcc here"), std::string::npos)
      << s.message();
  EXPECT_TRUE(check_probe_site_unshared(reinterpret_cast<std::uintptr_t>(site), "test", &unchecked).is_ok());
  EXPECT_EQ(tb_probe_site_test_target(2), 7);
}

}  // namespace
}  // namespace tracebench
