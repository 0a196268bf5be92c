#include "engine/optim/shac_task.h"

namespace adj::optim {

MlpForm shac_network_form(const scene::Task& task) {
  const scene::ShacSpec& s = task.shac;
  MlpForm f;
  if (s.activation == "elu") f.activation = MlpActivation::elu;
  f.layer_norm = s.layer_norm.value_or(false);
  if (s.init == "orthogonal") f.init = MlpInit::orthogonal;
  return f;
}

Status use_checkpoint_networks(const Checkpoint& ck, scene::Task& task) {
  const nlohmann::json& h = ck.header;
  if (!h.contains("shac") || !h["shac"].is_object() || !h["shac"].contains("actor_network")) return Status::ok();
  const nlohmann::json& n = h["shac"]["actor_network"];
  try {
    task.shac.activation = n.at("activation").get<std::string>();
    task.shac.layer_norm = n.at("layer_norm").get<bool>();
    task.shac.init = n.at("init").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return ck.error(std::string("header.shac.actor_network: ") + e.what());
  }
  // words this version does not know (a misspelt or newer init) would build another network
  if (network_form_json(shac_network_form(task)) != n)
    return ck.error("header.shac.actor_network: " + n.dump() + " is not a network this version builds");
  return Status::ok();
}

BatchShacOptions shac_options(const scene::Task& task, int windows) {
  const scene::ShacSpec& s = task.shac;
  BatchShacOptions so;  // the defaults: the cartpole swing-up's settings (seeds 2-4 swing up)
  so.window = s.window.value_or(so.window);
  so.actor_lr = s.actor_lr.value_or(so.actor_lr);
  so.critic_lr = s.critic_lr.value_or(so.critic_lr);
  so.lr_decay_windows = s.lr_decay.value_or(true) ? windows : 0;
  so.lr_end = s.lr_end.value_or(so.lr_end);
  if (s.betas) so.beta1 = (*s.betas)[0], so.beta2 = (*s.betas)[1];
  so.clip = s.clip.value_or(so.clip);
  so.critic_clip = s.critic_clip.value_or(so.critic_clip);
  so.grad_bound = s.grad_bound.value_or(so.grad_bound);
  so.gamma = s.gamma.value_or(so.gamma);
  so.lambda = s.lambda.value_or(so.lambda);
  so.critic_hidden = s.critic_hidden.value_or(so.critic_hidden);
  so.critic_form = shac_network_form(task);
  so.critic_passes = s.critic_iterations.value_or(so.critic_passes);
  so.critic_minibatches = s.critic_minibatches.value_or(so.critic_minibatches);
  so.target_alpha = s.target_alpha.value_or(so.target_alpha);
  so.action_noise = s.action_noise.value_or(so.action_noise);
  so.learned_std = s.log_std_init.has_value();
  so.log_std_init = s.log_std_init.value_or(so.log_std_init);
  so.normalize_observations = s.normalize_observations.value_or(so.normalize_observations);
  return so;
}

AhacOptions ahac_options(const scene::Task& task) {
  const scene::AhacSpec& s = task.ahac;
  AhacOptions o;
  o.enabled = true;
  o.contact_threshold = s.contact_threshold.value_or(o.contact_threshold);
  o.horizon_min = s.horizon_min.value_or(o.horizon_min);
  o.dual_lr = s.dual_lr.value_or(o.dual_lr);
  o.double_critic = s.double_critic.value_or(o.double_critic);
  return o;
}

int shac_envs(const scene::Task& task, int envs) { return envs > 0 ? envs : task.shac.envs.value_or(32); }

Result<BatchShacTrainerT<float>> make_shac_trainer(const TaskT<float>& task, const ShacTaskSettings& settings) {
  BatchShacOptions so = shac_options(task.task(), settings.windows);
  so.seed = settings.seed;
  so.thread_count = settings.thread_count;
  so.comm = settings.comm;
  so.fingerprint_every = settings.fingerprint_every;
  if (settings.ahac) so.ahac = ahac_options(task.task());
  // copies start from random joint angles and rates around the task's start
  PolicyEnvOptions env = training_starts(task.task(), shac_envs(task.task(), settings.envs));
  env.world_seed = settings.seed;
  env.net = shac_network_form(task.task());
  return BatchShacTrainerT<float>::create(task, so, env);
}

}  // namespace adj::optim
