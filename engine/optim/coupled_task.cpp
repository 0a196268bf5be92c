#include "engine/optim/coupled_task.h"

#include <chrono>
#include <cmath>

#include "engine/optim/check_grad.h"

namespace adj::optim {

template <class S>
Result<CoupledTaskRunnerT<S>> CoupledTaskRunnerT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                                            int thread_count) {
  CoupledTaskRunnerT r;
  r.task_ = task;
  const std::string where = "task '" + task.name + "'";
  if (!cs.has_robots() || !cs.has_particles())
    return Status::error(where + ": a coupled task needs robots and particles in the scene");
  if (task.has_policy) return Status::error(where + ": policies are not supported with robot-particle coupling yet");
  const scene::OptimizerSpec& os = task.optimizer;
  if (!(os.lr > 0) || !std::isfinite(os.lr)) return Status::error(where + ": optimizer lr must be > 0");
  if (!(os.clip >= 0) || !std::isfinite(os.clip)) return Status::error(where + ": optimizer clip must be >= 0");
  // robot side: entries on robots, and the scene-wide kinds the robots have a field of
  // (contact_*); the rest (lift, drag, gravity...): particle side
  auto robot = [&](const std::string& name) {
    const scene::ObjectRange* o = cs.find(name);
    return name.empty() || (o && o->kind == scene::ObjectKind::robot);
  };
  auto robot_param = [&](const scene::ParamSpec& p) {
    if (p.object.empty() && p.kind != scene::ParamKind::policy) return field_of(p.kind, FieldSide::robot) != nullptr;
    return robot(p.object);
  };
  scene::Task rt = task, pt = task;
  rt.parameters.clear();
  rt.loss.clear();
  pt.parameters.clear();
  pt.loss.clear();
  for (const scene::ParamSpec& p : task.parameters) (robot_param(p) ? rt : pt).parameters.push_back(p);
  for (const scene::LossTerm& l : task.loss) (robot(l.object) ? rt : pt).loss.push_back(l);
  auto rp = RigidParametersT<S>::create(cs, rt);
  if (!rp) return rp.status();
  r.rparams_ = std::move(rp.value());
  auto pp = ParametersT<S>::create(cs, pt);
  if (!pp) return pp.status();
  r.pparams_ = std::move(pp.value());
  if (r.rparams_.size() + r.pparams_.size() == 0) return Status::error(where + ": no parameters to optimize");
  if (task.loss.empty()) return Status::error(where + ": no loss terms");
  if (!rt.loss.empty()) {
    auto rl = RigidLossT<S>::create(cs, rt, r.rparams_);
    if (!rl) return rl.status();
    r.rloss_ = std::move(rl.value());
  }
  if (!pt.loss.empty()) {
    auto pl = LossT<S>::create(cs, pt, r.pparams_);
    if (!pl) return pl.status();
    r.ploss_ = std::move(pl.value());
  }
  r.blocks_ = r.rparams_.blocks();
  for (ParamBlock b : r.pparams_.blocks()) {
    b.offset += r.rparams_.size();
    r.blocks_.push_back(b);
  }
  r.optimizer_ = OptimizerT<S>(os, r.rparams_.size() + r.pparams_.size());
  r.rbase_ = cs.model.rigid;
  r.model_ = std::make_unique<ModelT<S>>(cs.model);
  if (r.rloss_) r.rloss_->bind(&r.model_->rigid);
  RolloutOptions<S> ro;
  ro.steps = task.horizon;
  ro.dt = cs.frame_dt;
  ro.substeps = cs.substeps;
  ro.checkpoint_every = task.checkpoint_every;
  ro.thread_count = thread_count;
  r.rollout_ = std::make_unique<RolloutT<S>>(*r.model_, ro);
  std::vector<S> tr = r.rparams_.initial(cs), tp = r.pparams_.initial(cs);
  r.theta_ = tr;
  r.theta_.insert(r.theta_.end(), tp.begin(), tp.end());
  return r;
}

template <class S>
void CoupledTaskRunnerT<S>::split(const std::vector<S>& theta, std::vector<S>& tr, std::vector<S>& tp) const {
  tr.assign(theta.begin(), theta.begin() + rparams_.size());
  tp.assign(theta.begin() + rparams_.size(), theta.end());
}

template <class S>
void CoupledTaskRunnerT<S>::clamp(std::vector<S>& theta) const {
  std::vector<S> tr, tp;
  split(theta, tr, tp);
  rparams_.clamp(tr);
  pparams_.clamp(tp);
  std::copy(tr.begin(), tr.end(), theta.begin());
  std::copy(tp.begin(), tp.end(), theta.begin() + rparams_.size());
}

template <class S>
std::string CoupledTaskRunnerT<S>::entry_name(int i) const {
  return i < rparams_.size() ? rparams_.entry_name(i) : pparams_.entry_name(i - rparams_.size());
}

template <class S>
void CoupledTaskRunnerT<S>::set_theta(std::vector<S> theta) {
  clamp(theta);
  theta_ = std::move(theta);
}

template <class S>
Result<S> CoupledTaskRunnerT<S>::evaluate(const std::vector<S>& theta, std::vector<S>* grad) {
  const std::string where = "task '" + task_.name + "': ";
  if (int(theta.size()) != rparams_.size() + pparams_.size())
    return Status::error(where + "theta has " + std::to_string(theta.size()) + " entries, the task " +
                         std::to_string(rparams_.size() + pparams_.size()));
  std::vector<S> tr, tp;
  split(theta, tr, tp);
  // both sides' parameters into the models, the initial states and the controls
  // (the particle side first: it starts from the model's initial state, joints included)
  std::vector<ControlT<S>> pc;
  pparams_.apply(tp, *model_, initial_, pc);
  std::vector<ControlT<S>> rc;
  rparams_.apply(tr, rbase_, *model_, initial_, rc);
  const int T = task_.horizon;
  controls_.clear();
  if (!rc.empty() || !pc.empty()) {
    controls_.assign(std::size_t(T), model_->make_control());
    for (int t = 0; t < T; ++t) {
      if (!pc.empty()) controls_[t] = pc[std::size_t(t)];
      if (!rc.empty()) controls_[t].joint_act = rc[std::size_t(t)].joint_act;
    }
  }
  if (rloss_) rloss_->begin();
  if (ploss_) ploss_->begin();
  frames_.assign(std::size_t(T + 1), StateT<S>{});
  Status st = rollout_->forward(initial_, controls_, [&](int t, const StateT<S>& s) {
    if (rloss_) rloss_->observe(t, s);
    if (ploss_) ploss_->observe(t, s);
    frames_[std::size_t(t)] = s;
  });
  if (!st) return Status::error(where + st.message());
  S value = S(0);
  if (rloss_) value += rloss_->value(tr);
  if (ploss_) value += ploss_->value(tp);
  if (!std::isfinite(double(value))) return Status::error(where + "the loss is not finite");
  if (!grad) return value;
  st = rollout_->backward([&](int t, const StateT<S>& s, StateT<S>& adj) {
    if (rloss_) rloss_->seed(t, s, adj);
    if (ploss_) ploss_->seed(t, adj);
  });
  if (!st) return Status::error(where + st.message());
  std::vector<S> gr, gp;
  const StateT<S>& gi = rollout_->grad_initial();
  rparams_.gather(gi, rollout_->grad_controls(), rollout_->grad_model(), gr);
  pparams_.gather(gi, rollout_->grad_controls(), rollout_->grad_model(), gp);
  if (rloss_) rloss_->add_effort(tr, gr);
  if (ploss_) ploss_->add_effort(tp, gp);
  grad->assign(gr.begin(), gr.end());
  grad->insert(grad->end(), gp.begin(), gp.end());
  for (int i = 0; i < int(grad->size()); ++i)
    if (!std::isfinite(double((*grad)[i])))
      return Status::error(where + "gradient entry " + entry_name(i) + " is not finite");
  return value;
}

template <class S>
Result<IterationStats> CoupledTaskRunnerT<S>::iterate() {
  return iterate_step(
      theta_, grad_, optimizer_, history_, [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); },
      [&](std::vector<S>& x) { clamp(x); });
}

template <class S>
Result<GradCheckReport> CoupledTaskRunnerT<S>::check_grad(int samples, double eps, std::uint64_t seed) {
  return check_grad_at(
      theta_, grad_, blocks_, samples, eps, seed,
      [&](const std::vector<S>& x, std::vector<S>* g) { return evaluate(x, g); }, [&](int i) { return entry_name(i); });
}

template class CoupledTaskRunnerT<float>;
template class CoupledTaskRunnerT<double>;

}  // namespace adj::optim
