// PpoTrainer's state in a checkpoint and back: a resumed run takes the same steps, bit for bit
#include "engine/dist/communicator.h"
#include "engine/optim/checkpoint_state.h"
#include "engine/optim/ppo.h"

namespace adj::optim {

Status PpoTrainer::save(Checkpoint& ck) {
  // every copy's episode, random engine and running returns, from the rank that steps it
  const int n = env_count(), no = net().input_size();
  std::vector<PolicyEnvT<double>::Episode> episodes(static_cast<std::size_t>(n));
  std::vector<std::string> engines(static_cast<std::size_t>(n));
  for (int i = mine_.begin; i < mine_.end; ++i)
    episodes[i] = env_->episode(i - mine_.begin), engines[i] = engine_text(rngs_[std::size_t(i)]);
  if (distributed()) {
    dist::Bytes mine;
    dist::ByteWriter out(mine);
    for (int i = mine_.begin; i < mine_.end; ++i) {
      StateColumns<double> cols;
      cols.add(episodes[i].state), cols.add(episodes[i].start);
      out.put_vector(cols.particle_q), out.put_vector(cols.particle_qd);
      out.put_vector(cols.joint_q), out.put_vector(cols.joint_qd);
      out.put(episodes[i].frame), out.put(episodes[i].done), out.put_string(engines[i]);
      out.put_vector(obs_[i]), out.put(disc_return_[i]), out.put(ep_return_[i]);
    }
    std::vector<dist::Bytes> parts;
    if (Status st = options_.comm->allgather(mine, parts); !st) return st;
    const StateT<double>& like = env_->state(0);
    for (int r = 0; r < int(parts.size()); ++r) {
      const dist::Block b = dist::block(n, r, int(parts.size()));
      dist::ByteReader in(parts[r]);
      for (int i = b.begin; i < b.end; ++i) {
        StateColumns<double> cols;
        bool ok = in.get_vector(cols.particle_q) && in.get_vector(cols.particle_qd) && in.get_vector(cols.joint_q) &&
                  in.get_vector(cols.joint_qd) && in.get(episodes[i].frame) && in.get(episodes[i].done) &&
                  in.get_string(engines[i]) && in.get_vector(obs_[i]) && in.get(disc_return_[i]) &&
                  in.get(ep_return_[i]);
        if (!ok || cols.joint_q.size() != 2 * like.joint_q.size() ||
            cols.particle_q.size() != 6 * like.particle_q.size() || int(obs_[i].size()) != no)
          return Status::error("checkpoint: rank " + std::to_string(r) + "'s copies arrived malformed");
        episodes[i].state = cols.at(0, like), episodes[i].start = cols.at(1, like);
      }
    }
  }
  StateColumns<double> state, start;
  nlohmann::json frames = nlohmann::json::array(), done = nlohmann::json::array();
  std::vector<double> obs;
  for (int i = 0; i < n; ++i) {
    const PolicyEnvT<double>::Episode& e = episodes[i];
    state.add(e.state), start.add(e.start), frames.push_back(e.frame), done.push_back(e.done);
    obs.insert(obs.end(), obs_[i].begin(), obs_[i].end());
  }
  state.put(ck, "episodes.state");
  start.put(ck, "episodes.start");
  ck.header["ppo"] = {{"iteration", iteration_},
                      {"skipped", skipped_},
                      {"sim_steps", sim_steps_},
                      {"copies", n},
                      {"steps_per_env", options_.steps_per_env},
                      {"observation_size", net().input_size()},
                      {"action_size", net().output_size()},
                      {"policy_adam_t", pi_opt_.iteration()},
                      {"value_adam_t", v_opt_.iteration()},
                      {"observation_count", obs_rms_.count},
                      {"return_count", ret_rms_.count},
                      {"last_mean_return", last_mean_return_},
                      {"engine", engine_text(rng_)},
                      {"copy_engines", engines},
                      {"episode_frames", frames},
                      {"episode_done", done}};
  ck.put("policy.parameters", pi_);
  ck.put("value.weights", v_);
  ck.put("policy.adam_m", pi_opt_.first_moment());
  ck.put("policy.adam_v", pi_opt_.second_moment());
  ck.put("value.adam_m", v_opt_.first_moment());
  ck.put("value.adam_v", v_opt_.second_moment());
  ck.put("observations.mean", obs_rms_.mean);
  ck.put("observations.var", obs_rms_.var);
  ck.put("returns.mean", ret_rms_.mean);
  ck.put("returns.var", ret_rms_.var);
  ck.put("copies.observation", obs);  // normalized when it was observed
  ck.put("copies.discounted_return", disc_return_);
  ck.put("copies.episode_return", ep_return_);
  return Status::ok();
}

Status PpoTrainer::load(const Checkpoint& ck) {
  if (!ck.header.contains("ppo") || !ck.header["ppo"].is_object())
    return ck.error("no PPO training state in the header (a checkpoint of another method?)");
  const nlohmann::json& h = ck.header["ppo"];
  const int n = env_count(), no = net().input_size();
  for (const auto& [key, ours] : std::vector<std::pair<const char*, int>>{{"copies", n},
                                                                          {"steps_per_env", options_.steps_per_env},
                                                                          {"observation_size", no},
                                                                          {"action_size", net().output_size()}})
    if (!h.contains(key) || h[key] != ours)
      return ck.error(std::string("the checkpoint's ") + key + " is " + (h.contains(key) ? h[key].dump() : "missing") +
                      ", this run's is " + std::to_string(ours));
  std::vector<double> pi, v, pm, pv, vm, vv, om, ov, rm, rv, obs, disc, ep;
  const long long np = (long long)pi_.size(), nv = (long long)v_.size();
  Status st = ck.get("policy.parameters", pi, np);
  if (st) st = ck.get("value.weights", v, nv);
  if (st) st = ck.get("policy.adam_m", pm), st = st ? ck.get("policy.adam_v", pv) : st;
  if (st) st = ck.get("value.adam_m", vm), st = st ? ck.get("value.adam_v", vv) : st;
  if (st) st = ck.get("observations.mean", om, no), st = st ? ck.get("observations.var", ov, no) : st;
  if (st) st = ck.get("returns.mean", rm, 1), st = st ? ck.get("returns.var", rv, 1) : st;
  if (st) st = ck.get("copies.observation", obs, (long long)n * no);
  if (st) st = ck.get("copies.discounted_return", disc, n), st = st ? ck.get("copies.episode_return", ep, n) : st;
  if (!st) return st;
  // an Adam that has not stepped has no moments yet
  if (!((pm.empty() || (long long)pm.size() == np) && pv.size() == pm.size() &&
        (vm.empty() || (long long)vm.size() == nv) && vv.size() == vm.size()))
    return ck.error("the Adam moments do not match the networks' weights");
  StateColumns<double> state, start;
  const StateT<double>& like = env_->state(0);
  if (st = state.get(ck, "episodes.state", n, like); !st) return st;
  if (st = start.get(ck, "episodes.start", n, like); !st) return st;
  std::mt19937_64 rng;
  std::vector<std::mt19937_64> rngs(static_cast<std::size_t>(n));
  try {
    const nlohmann::json &frames = h.at("episode_frames"), &done = h.at("episode_done"),
                         &engines = h.at("copy_engines");
    if (!frames.is_array() || int(frames.size()) != n || !done.is_array() || int(done.size()) != n ||
        !engines.is_array() || int(engines.size()) != n)
      return ck.error("ppo.copy_engines, episode_frames and episode_done must list " + std::to_string(n) + " copies");
    if (!engine_from_text(h.at("engine").get<std::string>(), rng))
      return ck.error("ppo.engine is not a random engine's state");
    for (int i = 0; i < n; ++i)
      if (!engine_from_text(engines[i].get<std::string>(), rngs[std::size_t(i)]))
        return ck.error("ppo.copy_engines[" + std::to_string(i) + "] is not a random engine's state");
    for (int i = mine_.begin; i < mine_.end; ++i) {  // this rank's copies
      PolicyEnvT<double>::Episode e{state.at(i, like), start.at(i, like), frames[i].get<int>(), done[i].get<bool>()};
      if (st = env_->set_episode(i - mine_.begin, e); !st) return ck.error(st.message());
    }
    iteration_ = h.at("iteration").get<int>();
    skipped_ = h.value("skipped", 0);  // absent in checkpoints written before failed steps were skipped
    sim_steps_ = h.at("sim_steps").get<long long>();
    obs_rms_.count = h.at("observation_count").get<double>();
    ret_rms_.count = h.at("return_count").get<double>();
    last_mean_return_ = h.at("last_mean_return").get<double>();
    pi_opt_.restore(std::move(pm), std::move(pv), h.at("policy_adam_t").get<int>());
    v_opt_.restore(std::move(vm), std::move(vv), h.at("value_adam_t").get<int>());
  } catch (const nlohmann::json::exception& e) {
    return ck.error(std::string("header.ppo: ") + e.what());
  }
  pi_ = std::move(pi), v_ = std::move(v);
  obs_rms_.mean = std::move(om), obs_rms_.var = std::move(ov);
  ret_rms_.mean = std::move(rm), ret_rms_.var = std::move(rv);
  for (int i = 0; i < n; ++i) obs_[i].assign(obs.begin() + long(i) * no, obs.begin() + long(i + 1) * no);
  disc_return_ = std::move(disc), ep_return_ = std::move(ep);
  rng_ = rng;
  rngs_ = std::move(rngs);
  return Status::ok();
}

std::uint64_t PpoTrainer::fingerprint() const {
  const std::uint64_t h = dist::fnv1a(pi_.data(), pi_.size() * sizeof(double));
  return dist::fnv1a(v_.data(), v_.size() * sizeof(double), h);
}

}  // namespace adj::optim
