#include "engine/optim/parameters.h"

#include <algorithm>
#include <cassert>

namespace adj::optim {

using scene::ParamKind;

namespace {

bool is_scene_wide(ParamKind k) {
  return k == ParamKind::contact_ke || k == ParamKind::contact_kd || k == ParamKind::contact_mu ||
         k == ParamKind::policy;
}

std::vector<int> iota(int begin, int end) {
  std::vector<int> v;
  for (int i = begin; i < end; ++i) v.push_back(i);
  return v;
}

}  // namespace

template <class S>
Result<ParametersT<S>> ParametersT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                              int policy_size) {
  ParametersT p;
  p.horizon_ = task.horizon;
  if (task.horizon < 1)
    return Status::error("task '" + task.name + "': horizon must be at least 1 frame, got " +
                         std::to_string(task.horizon));
  std::vector<scene::ParamSpec> specs = task.parameters;
  bool has_policy_spec = std::any_of(specs.begin(), specs.end(),
                                     [](const scene::ParamSpec& s) { return s.kind == ParamKind::policy; });
  if (task.has_policy && !has_policy_spec) specs.push_back(scene::ParamSpec{ParamKind::policy, "", -1e30, 1e30});
  const ModelT<S>& m = cs.model;
  for (std::size_t n = 0; n < specs.size(); ++n) {
    const scene::ParamSpec& spec = specs[n];
    std::string where = "task '" + task.name + "': parameters[" + std::to_string(n) + "] (" +
                        scene::to_string(spec.kind) + (spec.object.empty() ? "" : " of '" + spec.object + "'") + ")";
    if (!(spec.lower <= spec.upper)) return Status::error(where + ": lower bound above upper bound");
    for (const ParamBlock& b : p.blocks_)
      if (b.kind == spec.kind && b.object == (is_scene_wide(spec.kind) ? std::string() : spec.object))
        return Status::error(where + ": listed twice");
    ParamBlock b;
    b.kind = spec.kind;
    b.lower = spec.lower;
    b.upper = spec.upper;
    const scene::ObjectRange* obj = nullptr;
    if (!is_scene_wide(spec.kind)) {
      obj = cs.find(spec.object);
      if (!obj) return Status::error(where + ": no object named '" + spec.object + "'");
      b.object = spec.object;
    }
    switch (spec.kind) {
      case ParamKind::initial_position:
      case ParamKind::initial_velocity:
      case ParamKind::control_force:
        if (obj->particle_end <= obj->particle_begin) return Status::error(where + ": the object has no particles");
        b.index = iota(obj->particle_begin, obj->particle_end);
        b.width = 3;
        break;
      case ParamKind::spring_activation:
        for (int s : cs.actuated_springs)
          if (s >= obj->spring_begin && s < obj->spring_end) b.index.push_back(s);
        if (b.index.empty()) return Status::error(where + ": the object has no actuated springs");
        break;
      case ParamKind::spring_rest:
      case ParamKind::spring_ke:
        if (obj->spring_end <= obj->spring_begin) return Status::error(where + ": the object has no springs");
        b.index = iota(obj->spring_begin, obj->spring_end);
        break;
      case ParamKind::tet_mu:
      case ParamKind::tet_lambda:
      case ParamKind::tet_activation:
        if (obj->tet_end <= obj->tet_begin) return Status::error(where + ": the object has no tetrahedra");
        b.index = iota(obj->tet_begin, obj->tet_end);
        break;
      case ParamKind::contact_ke:
      case ParamKind::contact_kd:
      case ParamKind::contact_mu:
        b.index = {0};
        break;
      case ParamKind::policy:
        if (!task.has_policy || policy_size <= 0)
          return Status::error(where + ": the task has no policy (set has_policy and its layers)");
        b.index = iota(0, policy_size);
        break;
      default:  // robot parameters: engine/optim/rigid_parameters.h
        return Status::error(where + ": " + scene::to_string(spec.kind) + " is a robot parameter (run the task with RigidTaskRunner)");
    }
    for (int i : b.index) {
      bool ok = true;
      if (spec.kind == ParamKind::spring_rest || spec.kind == ParamKind::spring_ke ||
          spec.kind == ParamKind::spring_activation)
        ok = i < m.spring_count();
      else if (spec.kind == ParamKind::tet_mu || spec.kind == ParamKind::tet_lambda ||
               spec.kind == ParamKind::tet_activation)
        ok = i < m.tet_count();
      else if (b.width == 3)
        ok = i < m.particle_count();
      if (!ok) return Status::error(where + ": the object's range lies outside the model (compile bug)");
    }
    if (obj) {
      int base = obj->particle_begin;
      if (b.kind == ParamKind::spring_activation || b.kind == ParamKind::spring_rest || b.kind == ParamKind::spring_ke)
        base = obj->spring_begin;
      else if (b.kind == ParamKind::tet_mu || b.kind == ParamKind::tet_lambda || b.kind == ParamKind::tet_activation)
        base = obj->tet_begin;
      b.first_local = b.index[0] - base;
    }
    b.elements = int(b.index.size());
    b.steps = is_control(b.kind) ? task.horizon : 1;
    b.offset = p.size_;
    b.count = b.steps * b.elements * b.width;
    p.size_ += b.count;
    p.has_controls_ = p.has_controls_ || is_control(b.kind);
    p.blocks_.push_back(std::move(b));
  }
  return p;
}

template <class S>
const ParamBlock* ParametersT<S>::policy_block() const {
  for (const ParamBlock& b : blocks_)
    if (b.kind == ParamKind::policy) return &b;
  return nullptr;
}

template <class S>
std::vector<S> ParametersT<S>::initial(const scene::CompiledSceneT<S>& cs) const {
  const ModelT<S>& m = cs.model;
  std::vector<S> theta(size_, S(0));
  for (const ParamBlock& b : blocks_) {
    S* x = theta.data() + b.offset;
    for (int e = 0; e < b.elements; ++e) {
      int i = b.index[e];
      switch (b.kind) {
        case ParamKind::initial_position:
          for (int c = 0; c < 3; ++c) x[3 * e + c] = m.particle_q[i][c];
          break;
        case ParamKind::initial_velocity:
          for (int c = 0; c < 3; ++c) x[3 * e + c] = m.particle_qd[i][c];
          break;
        case ParamKind::spring_rest: x[e] = m.spring_rest[i]; break;
        case ParamKind::spring_ke: x[e] = m.spring_ke[i]; break;
        case ParamKind::tet_mu: x[e] = m.tet_mu[i]; break;
        case ParamKind::tet_lambda: x[e] = m.tet_lambda[i]; break;
        case ParamKind::contact_ke: x[e] = m.contact_ke; break;
        case ParamKind::contact_kd: x[e] = m.contact_kd; break;
        case ParamKind::contact_mu: x[e] = m.contact_mu; break;
        case ParamKind::control_force:      // zero inputs
        case ParamKind::spring_activation:  // zero inputs
        case ParamKind::tet_activation:     // zero inputs
        case ParamKind::policy:             // initialised by the policy
          break;
        default:  // robot parameters never reach a particle runner (create() refuses them)
          break;
      }
    }
  }
  clamp(theta);
  return theta;
}

template <class S>
void ParametersT<S>::clamp(std::vector<S>& theta) const {
  assert(int(theta.size()) == size_ && "theta does not match the parameters");
  for (const ParamBlock& b : blocks_) {
    S lo = S(std::max(b.lower, -1e30)), hi = S(std::min(b.upper, 1e30));
    // comparisons, not min/max: a NaN stays NaN, for the rollout's guard to report
    for (int k = b.offset; k < b.offset + b.count; ++k) {
      if (theta[k] < lo) theta[k] = lo;
      if (theta[k] > hi) theta[k] = hi;
    }
  }
}

template <class S>
void ParametersT<S>::apply(const std::vector<S>& theta, ModelT<S>& m, StateT<S>& init,
                           std::vector<ControlT<S>>& controls) const {
  assert(int(theta.size()) == size_ && "theta does not match the parameters");
  init = m.make_state();
  controls.clear();
  if (has_controls_) controls.assign(horizon_, m.make_control());
  for (const ParamBlock& b : blocks_) {
    const S* x = theta.data() + b.offset;
    for (int t = 0; t < b.steps; ++t)
      for (int e = 0; e < b.elements; ++e) {
        int i = b.index[e];
        const S* v = x + (t * b.elements + e) * b.width;
        switch (b.kind) {
          case ParamKind::initial_position: init.particle_q[i] = {v[0], v[1], v[2]}; break;
          case ParamKind::initial_velocity: init.particle_qd[i] = {v[0], v[1], v[2]}; break;
          case ParamKind::control_force: controls[t].particle_f[i] = {v[0], v[1], v[2]}; break;
          case ParamKind::spring_activation: controls[t].spring_act[i] = v[0]; break;
          case ParamKind::tet_activation: controls[t].tet_act[i] = v[0]; break;
          case ParamKind::spring_rest: m.spring_rest[i] = v[0]; break;
          case ParamKind::spring_ke: m.spring_ke[i] = v[0]; break;
          case ParamKind::tet_mu: m.tet_mu[i] = v[0]; break;
          case ParamKind::tet_lambda: m.tet_lambda[i] = v[0]; break;
          case ParamKind::contact_ke: m.contact_ke = v[0]; break;
          case ParamKind::contact_kd: m.contact_kd = v[0]; break;
          case ParamKind::contact_mu: m.contact_mu = v[0]; break;
          case ParamKind::policy: break;
          default: break;  // robot parameters (refused by create())
        }
      }
  }
}

template <class S>
void ParametersT<S>::gather(const StateT<S>& g0, const std::vector<ControlT<S>>& gc, const ModelGradT<S>& gm,
                            std::vector<S>& grad) const {
  grad.assign(size_, S(0));
  for (const ParamBlock& b : blocks_) {
    if (is_control(b.kind)) assert(int(gc.size()) == b.steps && "the rollout kept no control gradients");
    S* g = grad.data() + b.offset;
    for (int t = 0; t < b.steps; ++t)
      for (int e = 0; e < b.elements; ++e) {
        int i = b.index[e];
        S* v = g + (t * b.elements + e) * b.width;
        auto put3 = [&](const vec3<S>& a) { v[0] = a.x, v[1] = a.y, v[2] = a.z; };
        switch (b.kind) {
          case ParamKind::initial_position: put3(g0.particle_q[i]); break;
          case ParamKind::initial_velocity: put3(g0.particle_qd[i]); break;
          case ParamKind::control_force: put3(gc[t].particle_f[i]); break;
          case ParamKind::spring_activation: v[0] = gc[t].spring_act[i]; break;
          case ParamKind::tet_activation: v[0] = gc[t].tet_act[i]; break;
          case ParamKind::spring_rest: v[0] = gm.spring_rest[i]; break;
          case ParamKind::spring_ke: v[0] = gm.spring_ke[i]; break;
          case ParamKind::tet_mu: v[0] = gm.tet_mu[i]; break;
          case ParamKind::tet_lambda: v[0] = gm.tet_lambda[i]; break;
          case ParamKind::contact_ke: v[0] = gm.contact_ke; break;
          case ParamKind::contact_kd: v[0] = gm.contact_kd; break;
          case ParamKind::contact_mu: v[0] = gm.contact_mu; break;
          case ParamKind::policy: break;
          default: break;  // robot parameters (refused by create())
        }
      }
  }
}

template <class S>
const ParamBlock& ParametersT<S>::block_of(int i) const {
  assert(i >= 0 && i < size_ && "entry outside theta");
  for (const ParamBlock& b : blocks_)
    if (i < b.offset + b.count) return b;
  return blocks_.back();
}

template <class S>
std::string ParametersT<S>::entry_name(int i) const {
  const ParamBlock& b = block_of(i);
  int k = i - b.offset;
  int c = k % b.width;
  int e = (k / b.width) % b.elements;
  int t = k / (b.width * b.elements);
  // appended piece by piece: GCC 12 warns (-Wrestrict, bug 105329) on "[" + std::string
  std::string s = scene::to_string(b.kind);
  auto bracket = [&s](const std::string& x) {
    s += '[';
    s += x;
    s += ']';
  };
  if (b.kind == ParamKind::contact_ke || b.kind == ParamKind::contact_kd || b.kind == ParamKind::contact_mu) return s;
  if (b.kind == ParamKind::policy) {
    bracket(std::to_string(e));
    return s;
  }
  bracket(b.object);
  if (is_control(b.kind)) bracket("t=" + std::to_string(t));
  // elements are named by their index within the object
  bracket(std::to_string(b.index[e] - (b.index[0] - b.first_local)));
  if (b.width == 3) {
    s += '.';
    s += "xyz"[c];
  }
  return s;
}

template class ParametersT<float>;
template class ParametersT<double>;

}  // namespace adj::optim
