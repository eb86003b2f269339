// lavacli's identity file, the server's error replies and a job log's
// verdict (tracebench lava submit|wait|fetch), on recorded fixtures: the
// logs in fixtures/ are a real lab's (job-test-failed is job-passed with its
// `uname` case turned to fail); the replies are the bodies LAVA 2023.01 sent.
#include <chrono>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "lava_identity.h"
#include "lava_record.h"
#include "lava_remote.h"
#include "lava_rest.h"
#include "lava_yaml.h"

namespace tracebench::lava {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(TB_LAVA_FIXTURES) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

const char* kIdentities = R"(default:
  uri: https://lava.example.org/RPC2
  username: alice
  token: aaaa
tracebench-lab:
  uri: http://127.0.0.1:49307/RPC2/
  username: tracebench
  token: "s3cr3t:with#chars"
  timeout: 20.0
embedded:
  uri: http://bob:tok123@lab.local:8000/RPC2
notoken:
  uri: http://lab.local/RPC2
  username: carol
)";

TEST(LavaIdentity, ReadsLavacliIdentities) {
  LavaServer s;
  ASSERT_TRUE(identity_from_yaml(kIdentities, "f.yaml", "tracebench-lab", &s)) << "";
  EXPECT_EQ(s.base_url, "http://127.0.0.1:49307");
  EXPECT_EQ(s.username, "tracebench");
  EXPECT_EQ(s.token, "s3cr3t:with#chars");
  ASSERT_TRUE(identity_from_yaml(kIdentities, "f.yaml", "default", &s));
  EXPECT_EQ(s.base_url, "https://lava.example.org");
  LavaServer e;
  ASSERT_TRUE(identity_from_yaml(kIdentities, "f.yaml", "embedded", &e));
  EXPECT_EQ(e.base_url, "http://lab.local:8000");
  EXPECT_EQ(e.username, "bob");
  EXPECT_EQ(e.token, "tok123");
}

TEST(LavaIdentity, RefusesWithWhatToDo) {
  LavaServer s;
  Status missing = identity_from_yaml(kIdentities, "f.yaml", "nope", &s);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("no identity 'nope'"), std::string::npos) << missing.message();
  EXPECT_NE(missing.message().find("tracebench-lab"), std::string::npos) << "names the identities it has";
  Status notoken = identity_from_yaml(kIdentities, "f.yaml", "notoken", &s);
  ASSERT_FALSE(notoken);
  EXPECT_NE(notoken.message().find("no token"), std::string::npos) << notoken.message();
  Status bad = identity_from_yaml("a: [unclosed\n", "f.yaml", "a", &s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("f.yaml: line"), std::string::npos) << bad.message();
  EXPECT_FALSE(identity_from_yaml("- a\n- b\n", "f.yaml", "a", &s));
  EXPECT_FALSE(identity_from_yaml("x:\n  uri: ftp://h/RPC2\n  token: t\n", "f.yaml", "x", &s));
}

TEST(LavaIdentity, BaseUrl) {
  std::string base, user, token;
  ASSERT_TRUE(base_url_from_uri("http://h:1/lava/RPC2", &base, &user, &token));
  EXPECT_EQ(base, "http://h:1/lava");
  ASSERT_TRUE(base_url_from_uri("https://h/api/v0.2/", &base, &user, &token));
  EXPECT_EQ(base, "https://h");
  ASSERT_TRUE(base_url_from_uri("http://h", &base, &user, &token));
  EXPECT_EQ(base, "http://h");
  EXPECT_FALSE(base_url_from_uri("h:80", &base, &user, &token));
  EXPECT_FALSE(base_url_from_uri("http:///RPC2", &base, &user, &token));
}

TEST(LavaIdentity, EnvironmentAndFileOrder) {
  const std::string dir = ::testing::TempDir() + "/lava_identity_xdg";
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  std::ofstream(dir + "/lavacli.yaml") << kIdentities;
  std::map<std::string, std::string> env = {{"XDG_CONFIG_HOME", dir}, {"HOME", "/nonexistent"}};
  EXPECT_EQ(default_identity_file(env), dir + "/lavacli.yaml");
  EXPECT_EQ(default_identity_file({{"HOME", "/h"}}), "/h/.config/lavacli.yaml");
  LavaServer s;
  ASSERT_TRUE(resolve_server("", "", env, &s));  // lavacli's `default`
  EXPECT_EQ(s.base_url, "https://lava.example.org");
  env["LAVA_URL"] = "http://env-lab:9999/";
  env["LAVA_TOKEN"] = "envtok";
  ASSERT_TRUE(resolve_server("", "", env, &s));  // the environment before `default`
  EXPECT_EQ(s.base_url, "http://env-lab:9999");
  EXPECT_EQ(s.token, "envtok");
  ASSERT_TRUE(resolve_server("tracebench-lab", "", env, &s));  // --identity before the environment
  EXPECT_EQ(s.base_url, "http://127.0.0.1:49307");
  env.erase("LAVA_TOKEN");
  Status half = resolve_server("", "", env, &s);
  ASSERT_FALSE(half);
  EXPECT_NE(half.message().find("LAVA_TOKEN"), std::string::npos) << half.message();
  Status none = resolve_server("", "", {{"HOME", "/nonexistent"}}, &s);
  ASSERT_FALSE(none);
  EXPECT_NE(none.message().find("--identity"), std::string::npos) << none.message();
}

TEST(LavaReply, SaysLavasMessage) {
  EXPECT_EQ(
      reply_error(
          {400, R"({"message":"Problem with submitted job data: required key not provided @ data['timeouts']"})"}),
      "HTTP 400: Problem with submitted job data: required key not provided @ data['timeouts']");
  EXPECT_EQ(reply_error({403, R"({"detail":"Invalid token."})"}), "HTTP 403: Invalid token.");
  EXPECT_EQ(reply_error({502, "<html>\nBad Gateway</html>"}), "HTTP 502: <html> Bad Gateway</html>");
  EXPECT_EQ(reply_error({500, ""}), "HTTP 500");
}

TEST(LavaLog, PassedJob) {
  LogVerdict v = verdict_from_log(fixture("job-passed.log.yaml"));
  EXPECT_TRUE(v.has_job_result);
  EXPECT_EQ(v.job_result, "pass");
  EXPECT_EQ(v.cases, 1);  // uname; LAVA's own `lava` cases are not the job's tests
  EXPECT_TRUE(v.failed_cases.empty());
  JobOutcome o;
  o.status.id = 3;
  o.status.state = "Finished";
  o.status.health = "Complete";
  o.log = v;
  EXPECT_EQ(o.kind(), "passed");
  EXPECT_TRUE(o.passed());
}

TEST(LavaLog, BadKernelIsLavasJobError) {
  JobOutcome o;
  o.status.id = 4;
  o.status.state = "Finished";
  o.status.health = "Incomplete";
  o.status.device = "qemu-1";
  o.worker = "worker-1";
  o.log = verdict_from_log(fixture("job-bad-kernel.log.yaml"));
  EXPECT_EQ(o.log.error_type, "Job");
  EXPECT_EQ(o.log.error_msg,
            "Invalid job data: [\"Image file '/boot/vmlinuz-does-not-exist' does not exist or is not readable\"]");
  EXPECT_EQ(o.kind(), "job error");
  EXPECT_FALSE(o.passed());
  LavaServer s{"http://lab:1", "u", "TOPSECRET", "test"};
  const std::string line = outcome_line(s, o);
  EXPECT_EQ(line,
            "job 4 on qemu-1 (worker-1): job error: LAVA: [Job] " + o.log.error_msg + "  http://lab:1/scheduler/job/4");
  nlohmann::json rec = lava_record(FetchOutcome{}, o, &s);
  EXPECT_EQ(rec["figures_valid"], false);
  EXPECT_EQ(rec["source"], "server");
  EXPECT_EQ(rec["error_type"], "Job");
  EXPECT_EQ(rec["worker"], "worker-1");
  EXPECT_EQ(rec.dump().find("TOPSECRET"), std::string::npos) << "the token is never written";
}

TEST(LavaLog, FailedTestCaseIsATestFailure) {
  JobOutcome o;
  o.status.state = "Finished";
  o.status.health = "Complete";  // LAVA says Complete when the job ran, whatever its tests said
  o.log = verdict_from_log(fixture("job-test-failed.log.yaml"));
  ASSERT_EQ(o.log.failed_cases, std::vector<std::string>{"0_smoke/uname"});
  EXPECT_EQ(o.kind(), "test failure");
  EXPECT_FALSE(o.passed());
  EXPECT_NE(o.lava_error().find("0_smoke/uname"), std::string::npos);
}

TEST(LavaLog, UnsteadyAndSkippedBenchmarksAreNoTestFailure) {
  // What `tracebench lava cases` gives a benchmark whose overhead had no one
  // level (unknown) and one skipped (skip): no verdict on the kernel.
  const std::string log =
      R"(- {"dt": "2026-11-30T00:00:01", "lvl": "results", "msg": {"case": "a", "definition": "0_tracebench", "result": "pass"}})"
      "\n"
      R"(- {"dt": "2026-11-30T00:00:02", "lvl": "results", "msg": {"case": "b", "definition": "0_tracebench", "result": "unknown"}})"
      "\n"
      R"(- {"dt": "2026-11-30T00:00:03", "lvl": "results", "msg": {"case": "c", "definition": "0_tracebench", "result": "skip"}})"
      "\n"
      R"(- {"dt": "2026-11-30T00:00:04", "lvl": "results", "msg": {"case": "d", "definition": "0_tracebench", "result": "fail"}})"
      "\n";
  LogVerdict v = verdict_from_log(log);
  EXPECT_EQ(v.cases, 4);
  EXPECT_EQ(v.failed_cases, std::vector<std::string>{"0_tracebench/d"});
}

TEST(LavaLog, ErrorTypesAndStates) {
  // The `lava/job` record as the dispatcher writes it for an infrastructure
  // error (the form of the recorded ones; this message is made up).
  const std::string infra =
      R"(- {"dt": "2026-11-27T22:49:24.5", "lvl": "results", "msg": {"case": "job", "definition": "lava", )"
      R"("error_msg": "login-action timed out after 300 seconds\n", "error_type": "Infrastructure", "result": "fail"}})";
  JobOutcome o;
  o.status.state = "Finished";
  o.status.health = "Incomplete";
  o.log = verdict_from_log("- {\"lvl\": \"target\", \"msg\": \"- {junk\"}\nnot a record\n" + infra + "\n");
  EXPECT_EQ(o.log.error_msg, "login-action timed out after 300 seconds");
  EXPECT_EQ(o.kind(), "infrastructure error");
  o.log.error_type = "LAVATimeout";
  EXPECT_EQ(o.kind(), "timeout");
  o.status.health = "Canceled";
  EXPECT_EQ(o.kind(), "canceled");
  o.status.state = "Running";
  EXPECT_EQ(o.kind(), "running");
  // No log at all (never started): still not a pass, and said so.
  JobOutcome none;
  none.status.state = "Finished";
  none.status.health = "Incomplete";
  EXPECT_EQ(none.kind(), "failed");
  EXPECT_NE(none.lava_error().find("health Incomplete"), std::string::npos);
}

// lava.json has one schema whether the job came from a server or a log alone:
// the same keys, the server's null without one, figures only from a passed
// job whose run came back whole.
TEST(LavaRecord, OneSchemaForServerAndLog) {
  const std::string log =
      R"({"dt": "2026-01-01T00:00:00", "lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "pass"}})"
      "\n";
  FetchOutcome run;
  run.job_result = "pass";
  run.guest_status = 0;
  run.files.push_back({"results/x/result.json", 2, true, 10, "ab"});
  const JobOutcome alone = outcome_from_log(log);
  EXPECT_EQ(alone.kind(), "passed") << "a log without the list's dash is read too";
  nlohmann::json from_log = lava_record(run, alone, nullptr);
  EXPECT_EQ(from_log["source"], "log");
  EXPECT_TRUE(from_log["job_id"].is_null());
  EXPECT_TRUE(from_log["worker"].is_null());
  EXPECT_EQ(from_log["figures_valid"], true);

  JobOutcome served = alone;
  served.status.id = 9;
  served.status.device = "qemu-2";
  served.worker = "worker-2";
  LavaServer s{"http://lab:1", "u", "TOPSECRET", "test"};
  nlohmann::json from_server = lava_record(run, served, &s);
  EXPECT_EQ(from_server["job_url"], "http://lab:1/scheduler/job/9");
  EXPECT_EQ(from_server["worker"], "worker-2");
  EXPECT_EQ(from_server["files"][0]["sha256"], "ab");
  for (const auto& [key, value] : from_server.items()) EXPECT_TRUE(from_log.contains(key)) << key;
  EXPECT_EQ(from_server.size(), from_log.size());

  run.guest_status = 1;  // the guest's run failed: the job passed, the figures are not valid
  EXPECT_EQ(lava_record(run, served, &s)["figures_valid"], false);
  EXPECT_EQ(lava_record(FetchOutcome{}, served, &s)["figures_valid"], false) << "no run came back";
}

TEST(LavaJobStatus, FromServerJson) {
  JobStatus st;
  ASSERT_TRUE(job_status_from_json(nlohmann::json::parse(R"({"id": 7, "state": "Finished", "health": "Complete",
      "actual_device": "qemu-2", "requested_device_type": "qemu", "failure_comment": null,
      "start_time": "2026-11-27T22:49:24.265266Z", "end_time": null})"),
                                   &st));
  EXPECT_EQ(st.id, 7);
  EXPECT_TRUE(st.finished());
  EXPECT_EQ(st.device, "qemu-2");
  EXPECT_EQ(st.failure_comment, "");
  EXPECT_FALSE(job_status_from_json(nlohmann::json::parse(R"({"detail": "Not found."})"), &st));
}

TEST(LavaYaml, TagsAndNulls) {
  nlohmann::json j;
  ASSERT_TRUE(parse_yaml("- {\"a\": ! \"580\", b: ~, c: [1, x]}\n", "t", &j));
  EXPECT_EQ(j[0]["a"], "580");
  EXPECT_TRUE(j[0]["b"].is_null());
  EXPECT_EQ(j[0]["c"][1], "x");
  ASSERT_TRUE(parse_yaml("", "t", &j));
  EXPECT_TRUE(j.is_null());
}

// Aliases of aliases ("billion laughs"): six levels of ten make 10^6 nodes
// when expanded (ten levels, 10^10, took a process to 1 GB in seconds).
// Refused at once, the message says why; aliases within bounds read.
TEST(LavaYaml, AliasBombIsRefusedNotExpanded) {
  std::string bomb =
      "a0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n";
  for (int i = 1; i <= 6; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  nlohmann::json j;
  const auto start = std::chrono::steady_clock::now();
  Status s = parse_yaml(bomb, "lavacli.yaml", &j);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("alias bomb"), std::string::npos) << s.message();
  // One long scalar used through an alias many times: bounded by bytes too.
  std::string wide = "s: &s \"" + std::string(1 << 20, 'x') + "\"\nl: [";
  for (int k = 0; k < 100; ++k) wide += (k ? ", *s" : "*s");
  wide += "]\n";
  EXPECT_FALSE(parse_yaml(wide, "log", &j).is_ok());
  // A text larger than any identity file or log record is not parsed at all.
  EXPECT_FALSE(parse_yaml(std::string(17u << 20, ' '), "log", &j).is_ok());
  ASSERT_TRUE(parse_yaml("a: &x [1, 2]\nb: *x\n", "t", &j).is_ok());
  EXPECT_EQ(j["b"][1], "2");
}

}  // namespace
}  // namespace tracebench::lava
