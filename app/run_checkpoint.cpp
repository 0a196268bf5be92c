#include "app/run_checkpoint.h"

#include <filesystem>

#include "engine/optim/ppo.h"
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
  const std::string trainer = p.method == "ppo" ? "ppo" : "shac";  // the header's trainer state
  if ((p.method != "shac" && p.method != "ahac" && p.method != "ppo") || !h.contains(trainer) ||
      !h[trainer].is_object())
    return ck->error("not a policy run's checkpoint (SHAC, AHAC or PPO): its run's method is " +
                     (p.method.empty() ? std::string("missing") : "\"" + p.method + "\""));
  try {
    p.scene = run.at("scene").get<std::string>();
    p.task = run.at("task").get<std::string>();
    p.iterations = run.at(p.method == "ppo" ? "iterations" : "windows").get<int>();
    p.seed = run.at("seed").get<std::uint64_t>();
    p.trained = h[trainer].at("iteration").get<int>();
    p.copies = h[trainer].at("copies").get<int>();
  } catch (const nlohmann::json::exception& e) {
    return ck->error(std::string("the header's run identity: ") + e.what());
  }
  p.ck = std::move(*ck);
  return p;
}

namespace {

// the episode's states, frame 0 (the start) first, in float (what the renderer draws)
template <class S>
void keep_frame(std::vector<State>& states, const optim::PolicyEnvT<S>& env) {
  auto to_float = [](const StateT<S>& s) {
    State f;
    for (const vec3<S>& v : s.particle_q) f.particle_q.push_back({float(v.x), float(v.y), float(v.z)});
    for (const vec3<S>& v : s.particle_qd) f.particle_qd.push_back({float(v.x), float(v.y), float(v.z)});
    for (S v : s.joint_q) f.joint_q.push_back(float(v));
    for (S v : s.joint_qd) f.joint_qd.push_back(float(v));
    return f;
  };
  if (states.empty()) states.push_back(to_float(env.episode(0).start));
  states.push_back(to_float(env.state(0)));
}

// a SHAC or AHAC run's trainer as `adjoint optimize` makes it (app/cmd_shac.cpp), loaded
Result<double> evaluate_shac(const PolicyCheckpoint& p, const scene::Scene& doc, scene::Task task,
                             const std::string& dir, int threads, std::vector<State>& states) {
  auto cs = scene::compile<float>(doc, dir);
  if (!cs) return cs.status();
  // the networks the checkpoint was trained with (LayerNorm, init, activation), whatever the scene now says
  if (Status st = optim::use_checkpoint_networks(p.ck, task); !st) return st;
  auto made = optim::make_task(*cs, task, {.thread_count = threads});
  if (!made) return made.status();
  auto shac = optim::make_shac_trainer(
      **made,
      {.envs = p.copies, .windows = p.iterations, .seed = p.seed, .thread_count = threads, .ahac = p.method == "ahac"});
  if (!shac) return shac.status();
  if (Status st = shac->load(p.ck); !st) return st;
  auto cost = shac->evaluate([&](int, const optim::PolicyEnvT<float>& env) { keep_frame(states, env); });
  if (!cost) return cost.status();
  return double(*cost);
}

// a PPO run's trainer as `adjoint optimize --method ppo` makes it (app/cmd_ppo.cpp), loaded
Result<double> evaluate_ppo(const PolicyCheckpoint& p, const scene::Scene& doc, scene::Task task,
                            const std::string& dir, int threads, std::vector<State>& states) {
  auto cs = scene::compile<double>(doc, dir);
  if (!cs) return cs.status();
  task.seed = p.seed;
  auto made = optim::make_task(*cs, task, {.thread_count = threads});
  if (!made) return made.status();
  optim::PpoOptions po;
  po.seed = task.seed;
  po.steps_per_env = p.ck.header["ppo"].value("steps_per_env", po.steps_per_env);
  po.lr_anneal_steps = (long long)p.iterations * p.copies * po.steps_per_env * std::max(cs->substeps, 1);
  auto ppo = optim::PpoTrainer::create(**made, po, optim::training_starts(task, p.copies));
  if (!ppo) return ppo.status();
  if (Status st = ppo->load(p.ck); !st) return st;
  return ppo->evaluate([&](int, const optim::PolicyEnvT<double>& env) { keep_frame(states, env); });
}

}  // namespace

Result<PolicyEpisode> evaluate_policy_checkpoint(const PolicyCheckpoint& p, const scene::Scene& doc,
                                                 const std::string& scene_dir, int threads) {
  if (Status st = p.ck.expect_run("scene", doc.name); !st) return st;
  const scene::Task* task = doc.find_task(p.task);
  if (!task || task->name != p.task)
    return p.ck.error("the checkpoint is of task \"" + p.task + "\", which scene \"" + doc.name + "\" does not have");
  PolicyEpisode e;
  auto cost = p.method == "ppo" ? evaluate_ppo(p, doc, *task, scene_dir, threads, e.states)
                                : evaluate_shac(p, doc, *task, scene_dir, threads, e.states);
  if (!cost) return cost.status();
  e.length = int(e.states.size()) - 1;
  e.eval_cost = *cost;
  e.eval_return = -*cost * task->horizon;  // as `adjoint optimize` prints it
  return e;
}

}  // namespace adj::app
