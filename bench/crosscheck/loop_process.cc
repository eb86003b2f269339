#include "loop_process.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace tracebench::crosscheck {

Status LoopProcess::start(const Env& env, const LoopSide& loop) {
  path_ = env.program(loop.program);
  warm_ = loop.warm;
  if (env.loop_dir.empty() || access(path_.c_str(), X_OK) != 0)
    return Status::error(loop.program + " was not built (it is built with the tracebench target)");
  ChildSpec spec;
  spec.argv = {path_, loop.mode, std::to_string(env.cpu), std::to_string(loop.calls), std::to_string(loop.chunk)};
  if (loop.payload > 0) spec.argv.push_back(std::to_string(loop.payload));
  spec.cpus = {env.cpu};
  spec.stdin_pipe = spec.stdout_pipe = true;
  spec.stderr_path = env.work + "/loop.stderr";
  TB_TRY(child_.start(spec));
  std::string line;
  TB_TRY(child_.read_line(30, &line));
  if (line.rfind("ready ", 0) != 0) return Status::error(loop.program + " said `" + line + "`, not ready");
  return Status::ok();
}

Status LoopProcess::run(LoopRun* out) {
  TB_TRY(child_.write_line(warm_ > 0 ? "run " + std::to_string(warm_) : std::string("run")));
  std::string line;
  TB_TRY(child_.read_line(120, &line));
  try {
    const auto j = nlohmann::json::parse(line);
    out->fired = j.at("fired").get<std::uint64_t>();
    out->calls = j.at("calls").get<std::uint64_t>();
    out->chunk = j.at("chunk").get<std::uint64_t>();
    out->median_chunk_ns = j.at("median_chunk_ns").get<double>();
    out->mean_ns = j.at("mean_ns").get<double>();
    out->getpid_ns = j.at("getpid_ns").get<double>();
  } catch (const std::exception& e) { return Status::error("the loop's line `" + line + "`: " + e.what()); }
  return Status::ok();
}

void LoopProcess::stop() {
  if (!child_.running()) return;
  (void)child_.write_line("quit");
  int st = 0;
  if (!child_.wait(5, &st)) child_.kill();
}

}  // namespace tracebench::crosscheck
