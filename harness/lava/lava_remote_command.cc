// `tracebench lava submit|wait|fetch`: jobs on a LAVA server (REST API v0.2).
//
//   lava submit JOB.yaml...        prints each job's id, one a line
//   lava wait ID... [--timeout S]  until every job finished; exit 0 when all passed
//   lava fetch ID DIR              DIR/job.log.yaml, DIR/lava-results.json, the run
//                                  rebuilt from the log, DIR/lava.json (lava_record.h)
//   lava fetch --log LOG DIR       the run rebuilt from a log alone, DIR/lava.json
//   lava devices [--idle]          the server's devices, their health and state;
//                                  --idle: the names of those a job could start on now
//
// The server: --identity NAME [--identity-file FILE] (lavacli's file, default
// $XDG_CONFIG_HOME/lavacli.yaml or ~/.config/lavacli.yaml), else LAVA_URL and
// LAVA_TOKEN, else lavacli's `default` identity.  Exit 2 refused input (no
// server, unreadable job file, a definition LAVA refuses), 1 a job that did
// not pass, a timeout or an unreachable server, 0 done.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "lava_identity.h"
#include "lava_log.h"
#include "lava_record.h"
#include "lava_remote_command.h"
#include "lava_remote.h"
#include "lava_rest.h"
#include "tracebench/reporter.h"
#include "tracebench/results.h"
#include "tracebench/util.h"

namespace tracebench {
namespace {

namespace fs = std::filesystem;
using lava::JobOutcome;
using lava::RestClient;

struct ServerArgs {
  std::string identity, identity_file;
};

int fail(const std::string& cmd, const std::string& msg, int code) {
  std::cerr << "tracebench lava " << cmd << ": " << msg << "\n";
  return code;
}

// The client, or exit 2 with what to set.
bool make_client(const std::string& cmd, const ServerArgs& a, std::unique_ptr<RestClient>* client) {
  lava::LavaServer server;
  if (Status s = lava::resolve_server(a.identity, a.identity_file, lava::process_env(), &server); !s) {
    fail(cmd, s.message(), 2);
    return false;
  }
  *client = std::make_unique<RestClient>(server);
  return true;
}

int run_submit(const ServerArgs& a, const std::vector<std::string>& files) {
  // Every file is read before anything is submitted: a typo submits nothing.
  std::vector<std::string> definitions;
  for (const auto& f : files) {
    std::string text;
    if (Status s = read_input_file(f, 16 << 20, &text); !s) return fail("submit", s.message(), 2);
    definitions.push_back(std::move(text));
  }
  std::unique_ptr<RestClient> c;
  if (!make_client("submit", a, &c)) return 2;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::vector<long> ids;
    if (Status s = lava::submit_job(*c, definitions[i], &ids); !s) {
      // LAVA answered and refused the definition: the input's fault (2);
      // no answer at all: the run's (1).
      const bool refused = s.message().rfind("LAVA refused", 0) == 0;
      fail("submit",
           files[i] + ": " + s.message() + (i > 0 ? " (the files before it were submitted: their ids are above)" : ""),
           0);
      return refused ? 2 : 1;
    }
    for (long id : ids) std::cout << id << "\n" << std::flush;
  }
  return 0;
}

bool parse_ids(const std::string& cmd, const std::vector<std::string>& args, std::vector<long>* ids) {
  for (const auto& s : args) {
    char* end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v <= 0) {
      fail(cmd, "'" + s + "' is not a job id (a positive number, as `submit` prints)", 2);
      return false;
    }
    ids->push_back(v);
  }
  return true;
}

int run_wait(const ServerArgs& a, const std::vector<std::string>& id_args, int timeout_s, double poll_s) {
  std::vector<long> ids;
  if (!parse_ids("wait", id_args, &ids)) return 2;
  std::unique_ptr<RestClient> c;
  if (!make_client("wait", a, &c)) return 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::set<long> pending(ids.begin(), ids.end());
  bool all_passed = true;
  while (!pending.empty()) {
    for (auto it = pending.begin(); it != pending.end();) {
      JobOutcome o;
      if (Status s = lava::read_outcome(*c, *it, &o, nullptr); !s) return fail("wait", s.message(), 1);
      if (!o.status.finished()) {
        ++it;
        continue;
      }
      std::cout << lava::outcome_line(c->server(), o) << "\n" << std::flush;
      all_passed = all_passed && o.passed();
      it = pending.erase(it);
    }
    if (pending.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string left;
      for (long id : pending) left += " " + std::to_string(id);
      return fail("wait",
                  "timed out after " + std::to_string(timeout_s) + " s; not finished:" + left +
                      " (they go on running on the server: wait again, or cancel them there)",
                  1);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_s));
  }
  return all_passed ? 0 : 1;
}

// LAVA's results of a job as its REST API lists them: the suites, and every
// test case (name, result, measurement, unit, metadata, its suite's id).
Status write_results(const RestClient& c, long id, const std::string& path) {
  std::vector<nlohmann::json> suites, tests;
  const std::string job = "jobs/" + std::to_string(id);
  TB_TRY(c.get_all(job + "/suites/?limit=1000", &suites));
  TB_TRY(c.get_all(job + "/tests/?limit=1000", &tests));
  return write_file_atomic(path, nlohmann::json{{"suites", suites}, {"tests", tests}}.dump(2) + "\n");
}

// Prints the summary table of each result.json that came back.
void print_summaries(const std::string& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->path().filename() == "result.json") files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    RunResult run;
    if (Status s = read_run(f.string(), &run); !s) {
      std::cerr << "tracebench lava fetch: cannot read " << f.string() << ": " << s.message() << "\n";
      continue;
    }
    Report summary;
    if (Status s = run_reporters().write("console", RunReport{run}, &summary); !s)
      std::cerr << "tracebench lava fetch: " << s.message() << "\n";
    std::cout << summary.text << "results: " << f.string() << (run.context.complete ? "" : " (incomplete run)") << "\n";
  }
}

// The run rebuilt from the log under `dir`, and lava.json with what the
// server (if any) said of the job; exit 0 only when its figures are valid.
int rebuild_and_record(const std::string& log, const std::string& dir, const lava::JobOutcome& job,
                       const lava::LavaServer* server) {
  lava::FetchOutcome run;
  if (Status s = lava::fetch_from_log(log, dir, &run); !s) {
    // A server's log that is not one is the server's failure; a file given
    // with --log that is not one is refused input.
    return fail("fetch", s.message(), server ? 1 : 2);
  }
  if (Status s = lava::write_lava_record(dir, lava::lava_record(run, job, server)); !s)
    return fail("fetch", s.message(), 1);
  print_summaries(dir);
  for (const auto& b : run.broken) std::cerr << "tracebench lava fetch: " << b << "\n";
  std::cerr << "tracebench lava fetch: " << run.verdict() << " (" << dir << "/lava.json)\n";
  return lava::figures_valid(run, job) ? 0 : 1;
}

int run_fetch_log(const std::string& log_path, const std::string& dir) {
  std::string text;
  if (Status s = read_input_file(log_path, std::uint64_t{1} << 31, &text); !s) return fail("fetch", s.message(), 2);
  return rebuild_and_record(text, dir, lava::outcome_from_log(text), nullptr);
}

int run_fetch_server(const ServerArgs& a, const std::string& id_arg, const std::string& dir) {
  std::vector<long> ids;
  if (!parse_ids("fetch", {id_arg}, &ids)) return 2;
  std::unique_ptr<RestClient> c;
  if (!make_client("fetch", a, &c)) return 2;
  JobOutcome o;
  std::string log;
  if (Status s = lava::read_outcome(*c, ids[0], &o, &log); !s) return fail("fetch", s.message(), 1);
  if (!o.status.finished())
    return fail(
        "fetch",
        "job " + id_arg + " is " + o.status.state + ", not finished: `tracebench lava wait " + id_arg + "` first", 1);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("fetch", "cannot create " + dir + ": " + ec.message(), 1);
  if (Status s = write_file_atomic(dir + "/job.log.yaml", log); !s) return fail("fetch", s.message(), 1);
  if (Status s = write_results(*c, ids[0], dir + "/lava-results.json"); !s) return fail("fetch", s.message(), 1);
  std::cout << lava::outcome_line(c->server(), o) << "\n";
  if (log.empty()) {
    // A job refused before it started has no log: nothing of a run, LAVA's error in lava.json.
    lava::FetchOutcome none;
    if (Status s = lava::write_lava_record(dir, lava::lava_record(none, o, &c->server())); !s)
      return fail("fetch", s.message(), 1);
    std::cerr << "tracebench lava fetch: job " << id_arg << " has no log (" << dir << "/lava.json)\n";
    return 1;
  }
  return rebuild_and_record(log, dir, o, &c->server());
}

// `fetch ID DIR` from the server, `fetch --log LOG DIR` from a log alone.
int run_fetch(const ServerArgs& a, const std::string& log_path, const std::vector<std::string>& args) {
  if (!log_path.empty()) {
    if (args.size() != 1) return fail("fetch", "with --log LOG, give only the directory: fetch --log LOG DIR", 2);
    return run_fetch_log(log_path, args[0]);
  }
  if (args.size() != 2)
    return fail("fetch", "give a job id and a directory (fetch ID DIR), or a log (fetch --log LOG DIR)", 2);
  return run_fetch_server(a, args[0], args[1]);
}

// A string field of a REST row; empty when absent or null.
std::string field(const nlohmann::json& row, const char* key) {
  return row.contains(key) && row[key].is_string() ? row[key].get<std::string>() : std::string();
}

// A device a job could start on now: Idle, its health Good or Unknown (the
// health LAVA's scheduler gives jobs to), on a worker that is online and
// active; of `type` when one is given.
bool device_idle(const nlohmann::json& d, const std::set<std::string>& online_workers, const std::string& type) {
  const auto str = [&](const char* k) { return field(d, k); };
  const std::string health = str("health");
  return str("state") == "Idle" && (health == "Good" || health == "Unknown") &&
         online_workers.count(str("worker_host")) && (type.empty() || str("device_type") == type);
}

// GET /devices/ and /workers/: one line a device (name, type, health,
// state, worker and its state), or with `idle_only` the names of the idle
// ones, one a line (what `bisect-kernels.sh --lava` counts).
int run_devices(const ServerArgs& a, bool idle_only, const std::string& type) {
  std::unique_ptr<RestClient> c;
  if (!make_client("devices", a, &c)) return 2;
  std::vector<nlohmann::json> devices, workers;
  if (Status s = c->get_all("devices/?limit=1000", &devices); !s) return fail("devices", s.message(), 1);
  if (Status s = c->get_all("workers/?limit=1000", &workers); !s) return fail("devices", s.message(), 1);
  std::set<std::string> online;
  std::map<std::string, std::string> worker_state;
  for (const auto& w : workers) {
    const std::string name = field(w, "hostname"), state = field(w, "state"), health = field(w, "health");
    worker_state[name] = state + "/" + health;
    if (state == "Online" && health == "Active") online.insert(name);
  }
  for (const auto& d : devices) {
    const bool idle = device_idle(d, online, type);
    if (idle_only) {
      if (idle) std::cout << field(d, "hostname") << "\n";
      continue;
    }
    if (!type.empty() && field(d, "device_type") != type) continue;
    const std::string worker = field(d, "worker_host").empty() ? "-" : field(d, "worker_host");
    std::cout << field(d, "hostname") << " " << field(d, "device_type") << " health " << field(d, "health") << " state "
              << field(d, "state") << " worker " << worker << " ("
              << (worker_state.count(worker) ? worker_state[worker] : "unknown") << ")" << (idle ? " idle" : "")
              << "\n";
  }
  return 0;
}

void add_server_options(CLI::App* sub, ServerArgs* a) {
  sub->add_option("--identity,-i", a->identity,
                  "lavacli identity naming the server (default: LAVA_URL + LAVA_TOKEN, else `default`)");
  sub->add_option("--identity-file", a->identity_file,
                  "lavacli's identity file (default: $XDG_CONFIG_HOME/lavacli.yaml, else ~/.config/lavacli.yaml)");
}

}  // namespace

void lava::install_remote_commands(CLI::App* lava, int* exit_status) {
  auto server = std::make_shared<ServerArgs>();

  auto files = std::make_shared<std::vector<std::string>>();
  auto* submit = lava->add_subcommand("submit", "Submit LAVA job definitions (YAML); prints each job's id");
  add_server_options(submit, server.get());
  submit->add_option("jobs", *files, "Job definition files")->required();
  submit->callback([=] { *exit_status = run_submit(*server, *files); });

  auto ids = std::make_shared<std::vector<std::string>>();
  auto timeout = std::make_shared<int>(3600);
  auto poll = std::make_shared<double>(2.0);
  auto* wait =
      lava->add_subcommand("wait", "Wait until the jobs finished; one line each; exit 0 only when every job passed");
  add_server_options(wait, server.get());
  wait->add_option("ids", *ids, "Job ids")->required();
  wait->add_option("--timeout", *timeout, "Seconds to wait in all (exit 1 when reached)")
      ->capture_default_str()
      ->check(CLI::Range(1, 7 * 86400));
  wait->add_option("--poll", *poll, "Seconds between two looks at the server")
      ->capture_default_str()
      ->check(CLI::Range(0.2, 600.0));
  wait->callback([=] { *exit_status = run_wait(*server, *ids, *timeout, *poll); });

  auto log = std::make_shared<std::string>();
  auto args = std::make_shared<std::vector<std::string>>();
  auto* fetch = lava->add_subcommand(
      "fetch",
      "Fetch a finished job (ID DIR from the server, or --log LOG DIR): its run rebuilt and checked, lava.json; "
      "exit 0 only when the job passed and the run came back whole");
  add_server_options(fetch, server.get());
  fetch->add_option("--log", *log,
                    "Read this job log instead of a server (lava-run's output, or lavacli jobs logs --raw ID)");
  fetch->add_option("args", *args, "ID DIR (a job on the server), or DIR with --log")->required()->expected(1, 2);
  fetch->callback([=] { *exit_status = run_fetch(*server, *log, *args); });

  auto idle = std::make_shared<bool>(false);
  auto type = std::make_shared<std::string>();
  auto* devices = lava->add_subcommand(
      "devices", "The server's devices: health, state, worker; --idle: the names of those a job could start on now");
  add_server_options(devices, server.get());
  devices->add_flag("--idle", *idle,
                    "Only the idle devices' names, one a line (Idle, health Good or Unknown, worker online)");
  devices->add_option("--device-type", *type, "Only devices of this type (e.g. qemu)");
  devices->callback([=] { *exit_status = run_devices(*server, *idle, *type); });
}

}  // namespace tracebench
