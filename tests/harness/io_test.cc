// Run ids (unique across folders and processes) and the file checks every
// command makes before it reads or writes (util.h): the same-file check that
// keeps an output from destroying its input, and the bounded, non-blocking
// check of input files.
#include "tracebench/results.h"
#include "tracebench/util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

namespace tracebench {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tracebench-io-test-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

RunContext context(const std::string& host, const std::string& sha) {
  RunContext c;
  c.host = host;
  c.git_sha = sha;
  return c;
}

TEST(RunId, TimeToTheMicrosecondHostShaAndRandomSuffix) {
  const std::string id = make_run_id(context("ci8", "58fae67"));
  EXPECT_TRUE(std::regex_match(id, std::regex(R"(\d{8}T\d{6}\.\d{6}Z-ci8-58fae67-[0-9a-f]{8})"))) << id;
}

TEST(RunId, DistinctWithinOneMicrosecond) {
  // Many ids in a tight loop share their time stamp; the suffix tells them apart.
  std::set<std::string> ids;
  for (int i = 0; i < 2000; ++i) ids.insert(make_run_id(context("host", "abc")));
  EXPECT_EQ(ids.size(), 2000u);
}

TEST(RunId, HostAndShaAreSafeShortNameParts) {
  const std::string id = make_run_id(context(std::string(300, 'h') + "/../x y", "sha/../1"));
  EXPECT_EQ(id.find('/'), std::string::npos) << id;
  EXPECT_EQ(id.find(' '), std::string::npos) << id;
  EXPECT_LT(id.size(), 160u) << id;  // a directory name far below NAME_MAX
  EXPECT_TRUE(std::regex_search(make_run_id(context("", "")), std::regex(R"(Z-host-nosha-[0-9a-f]{8}$)")));
}

TEST(RunDir, TwoRunsOfOneInstantGetTwoDirectories) {
  TempDir t;
  RunContext a = context("host", "abc"), b = context("host", "abc");
  std::string da, db;
  ASSERT_TRUE(make_run_dir((t.path / "out").string(), &a, &da).is_ok());  // base made when missing
  ASSERT_TRUE(make_run_dir((t.path / "out").string(), &b, &db).is_ok());
  EXPECT_NE(a.run_id, b.run_id);
  EXPECT_NE(da, db);
  EXPECT_TRUE(fs::is_directory(da));
  EXPECT_TRUE(fs::is_directory(db));
  EXPECT_EQ(fs::path(da).filename().string(), a.run_id);
}

TEST(RunDir, BaseThatCannotBeMadeIsAnError) {
  TempDir t;
  write(t.path / "file", "x");
  RunContext c = context("host", "abc");
  std::string dir;
  Status s = make_run_dir((t.path / "file" / "out").string(), &c, &dir);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("--out"), std::string::npos) << s.message();
}

TEST(SameFile, SamePathLinkSymlinkAndDotSegmentsAreOneFile) {
  TempDir t;
  const fs::path f = t.path / "result.json", g = t.path / "other.json";
  write(f, "{}");
  write(g, "{}");
  fs::create_hard_link(f, t.path / "hard");
  fs::create_symlink(f, t.path / "soft");
  EXPECT_TRUE(same_file(f.string(), f.string()));
  EXPECT_TRUE(same_file(f.string(), (t.path / "." / "result.json").string()));
  EXPECT_TRUE(same_file(f.string(), (t.path / "hard").string()));
  EXPECT_TRUE(same_file(f.string(), (t.path / "soft").string()));
  EXPECT_FALSE(same_file(f.string(), g.string()));  // same content, another file
  EXPECT_FALSE(same_file(f.string(), (t.path / "missing").string()));
  EXPECT_FALSE(same_file((t.path / "missing").string(), (t.path / "missing").string()));
}

TEST(SameFile, OutputThatIsAnInputIsRefusedAndNamed) {
  TempDir t;
  const fs::path in = t.path / "result.json";
  write(in, "{}");
  fs::create_symlink(in, t.path / "link.json");
  Status s =
      check_output_not_input("--out", (t.path / "link.json").string(), {(t.path / "x.json").string(), in.string()});
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("--out"), std::string::npos);
  EXPECT_NE(s.message().find("one of the inputs"), std::string::npos) << s.message();
  EXPECT_TRUE(check_output_not_input("--out", (t.path / "new.json").string(), {in.string()}).is_ok());
}

TEST(InputFile, FifoAndDevicesAreRefusedWithoutBlocking) {
  TempDir t;
  const fs::path fifo = t.path / "result.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  Status s = check_input_file(fifo.string(), kMaxInputBytes);  // no writer: a blocking open would hang here
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("FIFO"), std::string::npos) << s.message();
  std::string text;
  s = read_input_file("/dev/zero", kMaxInputBytes, &text);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("character device"), std::string::npos) << s.message();
  EXPECT_TRUE(text.empty());
  EXPECT_FALSE(check_input_file(t.path.string(), kMaxInputBytes).is_ok());  // a directory
}

TEST(InputFile, SizeIsBounded) {
  TempDir t;
  const fs::path f = t.path / "big.json";
  write(f, std::string(1000, ' ') + "{}");
  std::string text;
  Status s = read_input_file(f.string(), 100, &text);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("1002 bytes"), std::string::npos) << s.message();
  ASSERT_TRUE(read_input_file(f.string(), 2000, &text).is_ok());
  EXPECT_EQ(text.size(), 1002u);
  nlohmann::json j;
  EXPECT_TRUE(read_json_file(f.string(), &j).is_ok());
}

TEST(InputFile, SymlinkLoopIsAnErrorNotAnException) {
  TempDir t;
  fs::create_symlink("loop", t.path / "loop");
  std::string text;
  Status s = read_input_file((t.path / "loop").string(), kMaxInputBytes, &text);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("symbolic links"), std::string::npos) << s.message();
  std::vector<std::string> files;
  s = result_files((t.path / "loop").string(), &files);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("symbolic links"), std::string::npos) << s.message();
}

// A directory of runs as `ab` and a results folder leave them: a run beside
// an ab folder whose runs are three levels down (ab-*/pair-*/<run>/); a run
// is not looked into, a symlinked run is a run, a symlinked directory that
// is not one is not walked (a loop), and too deep is not found.
TEST(ResultFiles, RunsNestedAsAbLeavesThemAreFound) {
  TempDir t;
  const auto run = [&](const fs::path& d) {
    fs::create_directories(d);
    write(d / "result.json", "{}");
  };
  run(t.path / "plain");
  run(t.path / "ab-1" / "pair-0001" / "run-a");
  run(t.path / "ab-1" / "pair-0002" / "run-b");
  run(t.path / "plain" / "inner");  // inside a run: not another run
  fs::create_directory_symlink(t.path / "plain", t.path / "linked");
  fs::create_directory_symlink(t.path, t.path / "ab-1" / "loop");
  run(t.path / "a" / "b" / "c" / "d" / "too-deep");  // five levels down
  fs::create_directories(t.path / "none" / "x");
  std::vector<std::string> files;
  ASSERT_TRUE(result_files(t.path.string(), &files).is_ok());
  const std::vector<std::string> want = {
      (t.path / "ab-1/pair-0001/run-a/result.json").string(), (t.path / "ab-1/pair-0002/run-b/result.json").string(),
      (t.path / "linked/result.json").string(), (t.path / "plain/result.json").string()};
  EXPECT_EQ(files, want);
  files.clear();
  ASSERT_TRUE(result_files((t.path / "ab-1").string(), &files).is_ok());
  EXPECT_EQ(files.size(), 2u);
  files.clear();
  ASSERT_TRUE(result_files((t.path / "a").string(), &files).is_ok());  // four levels down from it
  EXPECT_EQ(files.size(), 1u);
  files.clear();
  const Status s = result_files((t.path / "none").string(), &files);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("no result.json in it or in its subdirectories (4 levels down)"), std::string::npos)
      << s.message();
}

TEST(AtomicWrite, FailedWriteLeavesTheOldFileAndNoTemp) {
  TempDir t;
  const fs::path f = t.path / "out.json";
  write(f, "old");
  // A name too long for the temp file: refused, nothing changed.
  EXPECT_FALSE(write_file_atomic((t.path / std::string(255, 'x')).string(), "new").is_ok());
  ASSERT_TRUE(write_file_atomic(f.string(), "new").is_ok());
  std::string text;
  ASSERT_TRUE(read_input_file(f.string(), 100, &text).is_ok());
  EXPECT_EQ(text, "new");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(t.path)) entries += e.path().filename() != "out.json";
  EXPECT_EQ(entries, 0u);  // no temp file left
}

}  // namespace
}  // namespace tracebench
