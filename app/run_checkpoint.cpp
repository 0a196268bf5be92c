#include "app/run_checkpoint.h"

#include <filesystem>

#include "engine/optim/shac_task.h"
#include "engine/optim/task.h"

namespace adj::app {

namespace {

std::string file_in(const std::string& dir) { return (std::filesystem::path(dir) / "checkpoint.adjck").string(); }

}  // namespace

nlohmann::json shac_run_identity(const std::string& scene, const std::string& task, int windows, std::uint64_t seed,
                                 const std::string& method) {
  return {{"method", method}, {"scene", scene}, {"task", task}, {"windows", windows}, {"seed", seed}};
}

Status checkpoint_plan(const OptimizeOptions& o, std::string& dir, int& every) {
  dir = !o.checkpoint_dir.empty() ? o.checkpoint_dir : o.resume;
  every = dir.empty() ? 0 : o.checkpoint_every > 0 ? o.checkpoint_every : 10;
  if ((o.checkpoint_every > 0 || o.stop_after > 0) && dir.empty())
    return Status::error("--checkpoint-every and --stop-after need --checkpoint-dir (or --resume): where to write");
  if (o.resume.empty() && !dir.empty() && std::filesystem::exists(file_in(dir)))
    return Status::error(dir + " already holds a checkpoint: continue that run with --resume " + dir +
                         ", or write into another folder");
  return Status::ok();
}

Result<optim::Checkpoint> read_run_checkpoint(const std::string& dir, const nlohmann::json& identity,
                                              dist::Communicator& comm, RunTotals& totals) {
  const std::string path = file_in(dir);
  // byte 0: 1 and the file, or 0 and why it could not be read
  dist::Bytes bytes{0};
  if (comm.rank() == 0) {
    auto read = optim::read_file_bytes(path);
    if (read) {
      bytes[0] = 1;
      bytes.insert(bytes.end(), read->begin(), read->end());
    } else {
      bytes.insert(bytes.end(), read.status().message().begin(), read.status().message().end());
    }
  }
  if (Status st = comm.broadcast(bytes, 0); !st) return st;
  if (bytes.empty() || bytes[0] != 1)
    return Status::error(bytes.size() > 1 ? std::string(bytes.begin() + 1, bytes.end()) : path + ": cannot read");
  bytes.erase(bytes.begin());
  auto ck = optim::decode_checkpoint(bytes, path);
  if (!ck) return ck.status();
  // the method first: the other keys differ between methods
  if (identity.contains("method"))
    if (Status st = ck->expect_run("method", identity["method"]); !st) return st;
  for (const auto& [key, value] : identity.items())
    if (Status st = ck->expect_run(key, value); !st) return st;
  try {
    const nlohmann::json& cli = ck->header.at("cli");
    totals.ended = cli.at("episodes_ended").get<int>();
    totals.first = cli.at("first_eval").get<double>();
    totals.rows = cli.at("rows");
  } catch (const nlohmann::json::exception& e) {
    return ck->error(std::string("header.cli: ") + e.what());
  }
  return ck;
}

Status write_run_checkpoint(const std::string& dir, const nlohmann::json& identity, const RunTotals& totals,
                            optim::Checkpoint& ck, dist::Communicator& comm) {
  ck.header["run"] = identity;
  ck.header["cli"] = {{"episodes_ended", totals.ended}, {"first_eval", totals.first}, {"rows", totals.rows}};
  if (comm.rank() != 0) return Status::ok();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::error(dir + ": cannot create the checkpoint folder: " + ec.message());
  return optim::write_checkpoint(ck, file_in(dir));
}

Result<PolicyCheckpoint> read_policy_checkpoint(const std::string& dir) {
  const std::string file = file_in(dir);
  auto ck = optim::read_checkpoint(file);
  if (!ck) return ck.status();
  PolicyCheckpoint p;
  const nlohmann::json& h = ck->header;
  const nlohmann::json run = h.contains("run") && h["run"].is_object() ? h["run"] : nlohmann::json::object();
  p.method = run.value("method", "");
  if ((p.method != "shac" && p.method != "ahac") || !h.contains("shac") || !h["shac"].is_object())
    return ck->error("not a SHAC or AHAC run's checkpoint (its run's method is " +
                     (p.method.empty() ? std::string("missing") : "\"" + p.method + "\"") +
                     "): only a policy trained by SHAC or AHAC is read here");
  try {
    p.scene = run.at("scene").get<std::string>();
    p.task = run.at("task").get<std::string>();
    p.windows = run.at("windows").get<int>();
    p.seed = run.at("seed").get<std::uint64_t>();
    p.trained = h["shac"].at("iteration").get<int>();
    p.copies = h["shac"].at("copies").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return ck->error(std::string("the header's run identity: ") + e.what());
  }
  p.ck = std::move(*ck);
  return p;
}

Result<PolicyEpisode> evaluate_policy_checkpoint(const PolicyCheckpoint& p, const scene::Scene& doc,
                                                 const scene::CompiledScene& cs, int threads) {
  if (Status st = p.ck.expect_run("scene", doc.name); !st) return st;
  const scene::Task* task = doc.find_task(p.task);
  if (!task || task->name != p.task)
    return p.ck.error("the checkpoint is of task \"" + p.task + "\", which scene \"" + doc.name + "\" does not have");
  // the trainer as `adjoint optimize` made it (app/cmd_shac.cpp), then the checkpoint's state
  auto made = optim::make_task(cs, *task, {.thread_count = threads});
  if (!made) return made.status();
  auto shac = optim::make_shac_trainer(
      **made,
      {.envs = p.copies, .windows = p.windows, .seed = p.seed, .thread_count = threads, .ahac = p.method == "ahac"});
  if (!shac) return shac.status();
  if (Status st = shac->load(p.ck); !st) return st;
  PolicyEpisode e;
  auto keep = [&](int, const optim::PolicyEnvT<float>& env) {
    if (e.states.empty()) e.states.push_back(env.episode(0).start);
    e.states.push_back(env.state(0));
  };
  auto cost = shac->evaluate(keep);
  if (!cost) return cost.status();
  e.length = int(e.states.size()) - 1;
  e.eval_cost = double(*cost);
  e.eval_return = -double(*cost) * task->horizon;  // as the run's rows print it
  return e;
}

}  // namespace adj::app
