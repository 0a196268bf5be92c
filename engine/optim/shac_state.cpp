// BatchShacTrainerT's state across ranks and time: the windows every rank receives after a
// window, rank 0's weights at the start, the replicas' fingerprints, checkpoints
#include <sstream>

#include "engine/optim/checkpoint_state.h"
#include "engine/optim/shac.h"

namespace adj::optim {

nlohmann::json network_form_json(const MlpForm& form) {
  return {{"activation", form.activation == MlpActivation::elu ? "elu" : "tanh"},
          {"layer_norm", form.layer_norm},
          {"init", form.init == MlpInit::orthogonal ? "orthogonal" : "glorot"}};
}

template <class S>
Status BatchShacTrainerT<S>::gather_copies(bool backward) {
  if (!distributed()) return Status::ok();
  dist::Bytes mine;
  dist::ByteWriter out(mine);
  for (int i = mine_.begin; i < mine_.end; ++i) {
    const Copy& c = copies_[i];
    out.put_string(c.status ? std::string() : c.status.message());
    if (!c.status) continue;
    out.put(c.frames), out.put(c.start), out.put(c.done), out.put(c.value), out.put(c.end_value);
    out.put(c.cut), out.put(c.critic), out.put(c.failed);
    out.put_vector(c.cost), out.put_vector(c.contact);
    std::vector<S> raw;
    for (int t = 0; t <= c.frames; ++t) raw.insert(raw.end(), c.raw[t].begin(), c.raw[t].end());
    out.put_vector(raw);
    if (backward) out.put_vector(c.d_w), out.put_vector(c.d_log_std), out.put_string(c.blowup);
  }
  std::vector<dist::Bytes> parts;
  if (Status st = options_.comm->allgather(mine, parts); !st) return st;
  const int ranks = options_.comm->size(), no = env_->observation_size();
  for (int r = 0; r < ranks; ++r) {
    if (r == options_.comm->rank()) continue;
    const dist::Block b = dist::block(env_count(), r, ranks);
    dist::ByteReader in(parts[r]);
    bool ok = true;
    for (int i = b.begin; i < b.end && ok; ++i) {
      Copy& c = copies_[i];
      std::string failure;
      ok = in.get_string(failure);
      c.status = failure.empty() ? Status::ok() : Status::error(failure);
      if (!ok || !failure.empty()) continue;
      std::vector<S> raw;
      ok = in.get(c.frames) && in.get(c.start) && in.get(c.done) && in.get(c.value) && in.get(c.end_value) &&
           in.get(c.cut) && in.get(c.critic) && in.get(c.failed) && in.get_vector(c.cost) && in.get_vector(c.contact) &&
           in.get_vector(raw) && raw.size() == std::size_t(c.frames + 1) * std::size_t(no);
      if (ok && backward) ok = in.get_vector(c.d_w) && in.get_vector(c.d_log_std) && in.get_string(c.blowup);
      if (!ok) break;
      // the critic's inputs: normalized as the owner did, with the same frozen statistics
      c.raw.resize(std::size_t(c.frames + 1));
      c.obs.resize(std::size_t(c.frames + 1));
      for (int t = 0; t <= c.frames; ++t) {
        c.raw[t].assign(raw.begin() + long(t * no), raw.begin() + long((t + 1) * no));
        normalize(c.raw[t], c.obs[t]);
      }
    }
    if (!ok || !in.done())
      return Status::error("SHAC window " + std::to_string(iteration_) + ": rank " + std::to_string(r) +
                           "'s copies arrived malformed on rank " + std::to_string(options_.comm->rank()));
  }
  return Status::ok();
}

template <class S>
Status BatchShacTrainerT<S>::broadcast_weights() {
  if (!distributed()) return Status::ok();
  dist::Bytes bytes;
  dist::ByteWriter out(bytes);
  out.put_vector(w_), out.put_vector(critic_w_), out.put_vector(target_w_), out.put_vector(log_std_);
  out.put_vector(critic2_w_), out.put_vector(target2_w_);
  if (Status st = options_.comm->broadcast(bytes, 0); !st) return st;
  dist::ByteReader in(bytes);
  if (!(in.get_vector(w_) && in.get_vector(critic_w_) && in.get_vector(target_w_) && in.get_vector(log_std_) &&
        in.get_vector(critic2_w_) && in.get_vector(target2_w_) && in.done()))
    return Status::error("rank 0's weights arrived malformed on rank " + std::to_string(options_.comm->rank()));
  return Status::ok();
}

template <class S>
std::uint64_t BatchShacTrainerT<S>::fingerprint() const {
  std::uint64_t h = dist::fnv1a(w_.data(), w_.size() * sizeof(S));
  h = dist::fnv1a(critic_w_.data(), critic_w_.size() * sizeof(S), h);
  if (!log_std_.empty()) h = dist::fnv1a(log_std_.data(), log_std_.size() * sizeof(S), h);
  if (!critic2_w_.empty()) {  // AHAC's second critic
    h = dist::fnv1a(critic2_w_.data(), critic2_w_.size() * sizeof(S), h);
    h = dist::fnv1a(target2_w_.data(), target2_w_.size() * sizeof(S), h);
  }
  return dist::fnv1a(target_w_.data(), target_w_.size() * sizeof(S), h);
}

template <class S>
Status BatchShacTrainerT<S>::check_replicas() {
  if (!distributed()) return Status::ok();
  return dist::compare_fingerprints(
      *options_.comm, fingerprint(),
      std::string(options_.ahac.enabled ? "AHAC" : "SHAC") + ", after " + std::to_string(iteration_) + " windows");
}

template <class S>
Status BatchShacTrainerT<S>::save(Checkpoint& ck) {
  // every copy's episode and random engine (its owner's) to every rank
  const int n = env_count();
  std::vector<typename PolicyEnvT<S>::Episode> episodes(static_cast<std::size_t>(n));
  std::vector<std::string> engines(static_cast<std::size_t>(n));
  for (int i = mine_.begin; i < mine_.end; ++i)
    episodes[i] = env_->episode(i - mine_.begin), engines[i] = engine_text(rngs_[i]);
  if (distributed()) {
    dist::Bytes mine;
    dist::ByteWriter out(mine);
    for (int i = mine_.begin; i < mine_.end; ++i) {
      StateColumns<S> cols;
      cols.add(episodes[i].state);
      cols.add(episodes[i].start);
      out.put_vector(cols.particle_q), out.put_vector(cols.particle_qd);
      out.put_vector(cols.joint_q), out.put_vector(cols.joint_qd);
      out.put(episodes[i].frame), out.put(episodes[i].done), out.put_string(engines[i]);
      out.put_vector(episodes[i].action);
    }
    std::vector<dist::Bytes> parts;
    if (Status st = options_.comm->allgather(mine, parts); !st) return st;
    const StateT<S>& like = env_->state(0);
    for (int r = 0; r < options_.comm->size(); ++r) {
      const dist::Block b = dist::block(n, r, options_.comm->size());
      dist::ByteReader in(parts[r]);
      for (int i = b.begin; i < b.end; ++i) {
        StateColumns<S> cols;
        in.get_vector(cols.particle_q), in.get_vector(cols.particle_qd);
        in.get_vector(cols.joint_q), in.get_vector(cols.joint_qd);
        in.get(episodes[i].frame), in.get(episodes[i].done), in.get_string(engines[i]);
        in.get_vector(episodes[i].action);
        if (cols.joint_q.size() != 2 * like.joint_q.size() || cols.particle_q.size() != 6 * like.particle_q.size())
          return Status::error("checkpoint: rank " + std::to_string(r) + "'s episodes arrived malformed");
        episodes[i].state = cols.at(0, like);
        episodes[i].start = cols.at(1, like);
      }
    }
  }
  StateColumns<S> state, start;
  nlohmann::json frames = nlohmann::json::array(), done = nlohmann::json::array();
  for (const auto& e : episodes)
    state.add(e.state), start.add(e.start), frames.push_back(e.frame), done.push_back(e.done);
  state.put(ck, "episodes.state");
  start.put(ck, "episodes.start");
  // each copy's last action (what a previous_action observation reads next), when the env keeps one
  std::vector<S> actions;
  for (const auto& e : episodes) actions.insert(actions.end(), e.action.begin(), e.action.end());
  if (!actions.empty()) ck.put("episodes.action", actions);
  ck.header["shac"] = {{"iteration", iteration_},
                       {"skipped", skipped_},
                       {"sim_steps", sim_steps_},
                       {"copies", n},
                       {"window", options_.window},
                       {"observation_size", env_->observation_size()},
                       {"action_size", env_->action_size()},
                       {"actor_network", network_form_json(env_->mlp().form())},
                       {"critic_network", network_form_json(critic_.form())},
                       {"precision", sizeof(S) == 4 ? "f32" : "f64"},
                       {"actor_adam", {{"t", actor_opt_.t}, {"lr", actor_opt_.lr}}},
                       {"critic_adam", {{"t", critic_opt_.t}, {"lr", critic_opt_.lr}}},
                       {"statistics_count", stats_.count},
                       {"minibatch_engine", engine_text(rng_)},
                       {"copy_engines", engines},
                       {"episode_frames", frames},
                       {"episode_done", done}};
  ck.put("actor.weights", w_);
  if (!log_std_.empty()) ck.put("actor.log_std", log_std_);
  ck.put("critic.weights", critic_w_);
  ck.put("critic.target", target_w_);
  ck.put("actor.adam_m", actor_opt_.m);
  ck.put("actor.adam_v", actor_opt_.v);
  ck.put("critic.adam_m", critic_opt_.m);
  ck.put("critic.adam_v", critic_opt_.v);
  ck.put("observations.mean", stats_.mean);
  ck.put("observations.m2", stats_.m2);
  ck.put("observations.norm_mean", norm_mean_);
  ck.put("observations.norm_inv_std", norm_inv_std_);
  // the training episodes' returns (the printed training reward)
  std::vector<double> returns = episode_return_;
  returns.resize(std::size_t(n), 0.0);
  ck.put("training.episode_return", returns);
  ck.put("training.recent_returns", std::vector<double>(recent_returns_.begin(), recent_returns_.end()));
  if (options_.ahac.enabled) {  // AHAC: the horizon, its dual variable and the second critic
    ck.header["ahac"] = {{"horizon", horizon_},
                         {"dual", dual_},
                         {"double_critic", !critic2_w_.empty()},
                         {"critic2_adam", {{"t", critic2_opt_.t}, {"lr", critic2_opt_.lr}}}};
    if (!critic2_w_.empty()) {
      ck.put("critic2.weights", critic2_w_);
      ck.put("critic2.target", target2_w_);
      ck.put("critic2.adam_m", critic2_opt_.m);
      ck.put("critic2.adam_v", critic2_opt_.v);
    }
  }
  return Status::ok();
}

template <class S>
Status BatchShacTrainerT<S>::load(const Checkpoint& ck) {
  if (!ck.header.contains("shac") || !ck.header["shac"].is_object())
    return ck.error("no SHAC training state in the header (a checkpoint of another method?)");
  const nlohmann::json& h = ck.header["shac"];
  const int n = env_count();
  auto same = [&](const char* key, const nlohmann::json& ours, const char* hint) {
    if (h.contains(key) && h[key] == ours) return Status::ok();
    return ck.error(std::string("the checkpoint's ") + key + " is " + (h.contains(key) ? h[key].dump() : "missing") +
                    ", this run's is " + ours.dump() + " (" + hint + ")");
  };
  Status st = same("precision", sizeof(S) == 4 ? "f32" : "f64", "another precision");
  if (st) st = same("copies", n, "--envs must match");
  if (st) st = same("window", options_.window, "the window length must match");
  if (st) st = same("observation_size", env_->observation_size(), "the policy's observations differ");
  if (st) st = same("action_size", env_->action_size(), "the policy's actions differ");
  // the networks' forms (checkpoints written before they were kept: not compared)
  const char* form_hint = "the scene's shac activation, layer_norm and init must be those of the run that wrote it";
  if (st && h.contains("actor_network")) st = same("actor_network", network_form_json(env_->mlp().form()), form_hint);
  if (st && h.contains("critic_network")) st = same("critic_network", network_form_json(critic_.form()), form_hint);
  if (!st) return st;
  std::vector<S> w, cw, tw, nm, ns, ls;
  std::vector<double> am, av, cm, cv, mean, m2;
  const long long nw = (long long)w_.size(), nc = (long long)critic_w_.size(), nls = (long long)log_std_.size();
  // a learned exploration std: both runs have one of the same size, or neither has
  if (ck.has("actor.log_std") != (nls > 0))
    return ck.error(nls > 0 ? "the checkpoint's policy has no learned exploration std, this run's has (log_std_init)"
                            : "the checkpoint's policy has a learned exploration std, this run's has none "
                              "(log_std_init)");
  st = ck.get("actor.weights", w, nw);
  if (st && nls > 0) st = ck.get("actor.log_std", ls, nls);
  if (st) st = ck.get("critic.weights", cw, nc);
  if (st) st = ck.get("critic.target", tw, nc);
  if (st) st = ck.get("actor.adam_m", am), st = st ? ck.get("actor.adam_v", av) : st;
  if (st) st = ck.get("critic.adam_m", cm), st = st ? ck.get("critic.adam_v", cv) : st;
  // an Adam that has not stepped has no moments yet
  if (st && !((am.empty() || (long long)am.size() == nw + nls) && av.size() == am.size() &&
              (cm.empty() || (long long)cm.size() == nc) && cv.size() == cm.size()))
    st = ck.error("the Adam moments do not match the networks' weights");
  if (st) st = ck.get("observations.mean", mean), st = st ? ck.get("observations.m2", m2) : st;
  if (st) st = ck.get("observations.norm_mean", nm), st = st ? ck.get("observations.norm_inv_std", ns) : st;
  if (!st) return st;
  StateColumns<S> state, start;
  const StateT<S>& like = env_->state(0);
  if (st = state.get(ck, "episodes.state", n, like); !st) return st;
  if (st = start.get(ck, "episodes.start", n, like); !st) return st;
  std::vector<S> actions;  // absent: zeros (an env that keeps no action, or a checkpoint from before)
  const long long na = env_->action_size();
  if (ck.has("episodes.action"))
    if (st = ck.get("episodes.action", actions, n * na); !st) return st;
  const nlohmann::json engines = h.value("copy_engines", nlohmann::json()),
                       frames = h.value("episode_frames", nlohmann::json()),
                       done = h.value("episode_done", nlohmann::json());
  if (!engines.is_array() || int(engines.size()) != n || !frames.is_array() || int(frames.size()) != n ||
      !done.is_array() || int(done.size()) != n)
    return ck.error("shac.copy_engines, episode_frames and episode_done must list " + std::to_string(n) + " copies");
  std::vector<std::mt19937_64> rngs(static_cast<std::size_t>(n));
  std::mt19937_64 minibatch;
  try {
    for (int i = 0; i < n; ++i)
      if (!engine_from_text(engines[i].get<std::string>(), rngs[i]))
        return ck.error("shac.copy_engines[" + std::to_string(i) + "] is not a random engine's state");
    if (!engine_from_text(h.at("minibatch_engine").get<std::string>(), minibatch))
      return ck.error("shac.minibatch_engine is not a random engine's state");
    for (int i = mine_.begin; i < mine_.end; ++i) {
      typename PolicyEnvT<S>::Episode e{
          state.at(i, like), start.at(i, like), frames[i].get<int>(), done[i].get<bool>(), {}};
      if (!actions.empty()) e.action.assign(actions.begin() + long(i) * na, actions.begin() + long(i + 1) * na);
      if (st = env_->set_episode(i - mine_.begin, e); !st) return ck.error(st.message());
    }
    iteration_ = h.at("iteration").get<int>();
    skipped_ = h.at("skipped").get<int>();
    sim_steps_ = h.at("sim_steps").get<long long>();
    actor_opt_.t = h.at("actor_adam").at("t").get<int>();
    actor_opt_.lr = h.at("actor_adam").at("lr").get<double>();
    critic_opt_.t = h.at("critic_adam").at("t").get<int>();
    critic_opt_.lr = h.at("critic_adam").at("lr").get<double>();
    stats_.count = h.at("statistics_count").get<long long>();
  } catch (const nlohmann::json::exception& e) {
    return ck.error(std::string("header.shac: ") + e.what());
  }
  // AHAC: both runs AHAC or neither, with as many critics
  const bool ahac = options_.ahac.enabled;
  if (ck.header.contains("ahac") != ahac)
    return ck.error(ahac ? "the checkpoint holds SHAC's training state, this run is AHAC's (--method must match)"
                         : "the checkpoint holds AHAC's training state, this run is SHAC's (--method must match)");
  std::vector<S> c2, t2;
  std::vector<double> c2m, c2v;
  double horizon = options_.window, dual = 0, c2lr = critic2_opt_.lr;
  int c2t = 0;
  if (ahac) {
    const nlohmann::json& a = ck.header["ahac"];
    bool two = false;
    try {
      horizon = a.at("horizon").get<double>(), dual = a.at("dual").get<double>();
      two = a.at("double_critic").get<bool>();
      c2t = a.at("critic2_adam").at("t").get<int>(), c2lr = a.at("critic2_adam").at("lr").get<double>();
    } catch (const nlohmann::json::exception& e) {
      return ck.error(std::string("header.ahac: ") + e.what());
    }
    if (two != !critic2_w_.empty())
      return ck.error(std::string("the checkpoint's AHAC run has ") + (two ? "two critics" : "one critic") +
                      ", this run's has " + (two ? "one" : "two") + " (ahac.double_critic must match)");
    if (two) {
      st = ck.get("critic2.weights", c2, nc);
      if (st) st = ck.get("critic2.target", t2, nc);
      if (st) st = ck.get("critic2.adam_m", c2m), st = st ? ck.get("critic2.adam_v", c2v) : st;
      if (st && !((c2m.empty() || (long long)c2m.size() == nc) && c2v.size() == c2m.size()))
        st = ck.error("the second critic's Adam moments do not match its weights");
      if (!st) return st;
    }
  }
  // the training episodes' returns (absent from checkpoints written before they were kept: none yet)
  std::vector<double> returns, recent;
  if (ck.has("training.episode_return"))
    if (st = ck.get("training.episode_return", returns, n); !st) return st;
  if (ck.has("training.recent_returns"))
    if (st = ck.get("training.recent_returns", recent); !st) return st;
  if (int(recent.size()) > kTrainEpisodes)
    return ck.error("training.recent_returns holds " + std::to_string(recent.size()) + " returns, at most " +
                    std::to_string(kTrainEpisodes) + " are kept");
  if (ahac) {
    horizon_ = horizon, dual_ = dual;
    critic2_w_ = std::move(c2), target2_w_ = std::move(t2);
    critic2_opt_.m = std::move(c2m), critic2_opt_.v = std::move(c2v);
    critic2_opt_.t = c2t, critic2_opt_.lr = c2lr;
  }
  w_ = std::move(w), critic_w_ = std::move(cw), target_w_ = std::move(tw), log_std_ = std::move(ls);
  actor_opt_.m = std::move(am), actor_opt_.v = std::move(av);
  critic_opt_.m = std::move(cm), critic_opt_.v = std::move(cv);
  stats_.mean = std::move(mean), stats_.m2 = std::move(m2);
  norm_mean_ = std::move(nm), norm_inv_std_ = std::move(ns);
  rngs_ = std::move(rngs);
  rng_ = minibatch;
  episode_return_ = std::move(returns);
  recent_returns_.assign(recent.begin(), recent.end());
  return Status::ok();
}

// the members defined here (the class itself is instantiated in shac.cpp)
#define ADJ_SHAC_STATE(S)                                           \
  template Status BatchShacTrainerT<S>::gather_copies(bool);        \
  template Status BatchShacTrainerT<S>::broadcast_weights();        \
  template std::uint64_t BatchShacTrainerT<S>::fingerprint() const; \
  template Status BatchShacTrainerT<S>::check_replicas();           \
  template Status BatchShacTrainerT<S>::save(Checkpoint&);          \
  template Status BatchShacTrainerT<S>::load(const Checkpoint&);
ADJ_SHAC_STATE(float)
ADJ_SHAC_STATE(double)
#undef ADJ_SHAC_STATE

}  // namespace adj::optim
