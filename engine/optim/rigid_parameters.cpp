#include "engine/optim/rigid_parameters.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace adj::optim {

using scene::ParamKind;

namespace {

// "knee", "root.3": a dof named by its joint's body (and its index within a multi-dof joint)
template <class S>
std::string dof_name(const RigidModelT<S>& m, int d) {
  const int j = m.dof_joint[d];
  std::string name = m.body_name[j];
  if (m.joint_dof_start[j + 1] - m.joint_dof_start[j] > 1) {
    name += '.';
    name += std::to_string(d - m.joint_dof_start[j]);
  }
  return name;
}

// an element of a robot field domain, for entry names
template <class S>
std::string element_name(const RigidModelT<S>& m, FieldDomain d, int i) {
  switch (d) {
    case FieldDomain::body:
      return m.body_name[i];
    case FieldDomain::dof:
      return dof_name(m, i);
    case FieldDomain::actuator:
      return m.body_name[m.dof_joint[m.actuator_dof[i]]];
    default:
      return "";
  }
}

}  // namespace

template <class S>
Result<RigidParametersT<S>> RigidParametersT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                                        int policy_size) {
  RigidParametersT p;
  p.horizon_ = task.horizon;
  const RigidModelT<S>& m = cs.model.rigid;
  const std::string where = "task '" + task.name + "'";
  for (size_t i = 0; i < task.parameters.size(); ++i) {
    const scene::ParamSpec& spec = task.parameters[i];
    if (spec.kind == scene::ParamKind::policy) continue;  // below
    const std::string pw = where + ": parameters[" + std::to_string(i) + "] (" + scene::to_string(spec.kind) + ")";
    for (const ParamBlock& b : p.blocks_)
      if (b.kind == spec.kind && b.object == spec.object) return Status::error(pw + ": the same block twice");
    ParamBlock b;
    b.kind = spec.kind;
    b.object = spec.object;
    b.lower = spec.lower;
    b.upper = spec.upper;
    if (!(b.lower <= b.upper)) return Status::error(pw + ": lower bound above the upper bound");
    std::vector<std::string> names;
    const FieldInfo* field = field_of(spec.kind, FieldSide::robot);
    const bool scene_wide = field && field->domain == FieldDomain::scene;
    const scene::ObjectRange* r = nullptr;
    if (!scene_wide) {
      r = cs.find(spec.object);
      if (!r || r->kind != scene::ObjectKind::robot)
        return Status::error(pw + ": \"" + spec.object + "\" is not a robot");
    }
    if (field) {  // a model field of the bodies
      Status st = field_block(*field, cs.model, r, pw, b);
      if (!st) return st;
      for (int i : b.index) names.push_back(element_name(m, field->domain, i));
      p.has_model_ = true;
    } else
      switch (spec.kind) {
        case ParamKind::joint_q:
          for (int j = r->body_begin; j < r->body_end; ++j)
            if (m.joint_type[j] == RIGID_JOINT_REVOLUTE || m.joint_type[j] == RIGID_JOINT_PRISMATIC) {
              b.index.push_back(m.joint_q_start[j]);
              names.push_back(m.body_name[j]);
            }
          break;
        case ParamKind::joint_qd:
          for (int d = r->dof_begin; d < r->dof_end; ++d) {
            b.index.push_back(d);
            names.push_back(dof_name(m, d));
          }
          break;
        case ParamKind::actuator_control:
          for (int a = r->actuator_begin; a < r->actuator_end; ++a) {
            b.index.push_back(a);
            names.push_back(element_name(m, FieldDomain::actuator, a));
          }
          b.steps = task.horizon;
          p.has_controls_ = true;
          break;
        default:
          return Status::error(pw +
                               ": not a robot parameter (robot tasks take joint_q, joint_qd, actuator_control, "
                               "actuator_kp, actuator_kd, body_mass, contact_ke/kd/mu)");
      }
    if (b.index.empty()) return Status::error(pw + ": \"" + spec.object + "\" has nothing this parameter covers");
    b.elements = int(b.index.size());
    if (Status st = element_bounds(spec, names, pw, b); !st) return st;
    b.offset = p.size_;
    b.count = b.steps * b.elements;
    p.size_ += b.count;
    p.blocks_.push_back(b);
    p.names_.push_back(names);
  }
  if (policy_size > 0) {
    ParamBlock b;
    b.kind = ParamKind::policy;
    b.elements = b.count = policy_size;
    b.lower = -std::numeric_limits<double>::infinity();
    b.upper = std::numeric_limits<double>::infinity();
    b.offset = p.size_;
    p.size_ += b.count;
    p.blocks_.push_back(b);
    p.names_.push_back({});
  }
  return p;
}

template <class S>
std::vector<S> RigidParametersT<S>::initial(const scene::CompiledSceneT<S>& cs) const {
  std::vector<S> theta(size_, S(0));
  const RigidModelT<S>& m = cs.model.rigid;
  for (const ParamBlock& b : blocks_)
    for (int e = 0; e < b.elements && b.kind != ParamKind::policy; ++e) {
      S v = S(0);
      if (b.field)
        v = model_field(cs.model, b.field->field).at(b.index[e], 0);
      else if (b.kind == ParamKind::joint_q)
        v = cs.model.joint_q[b.index[e]];
      else if (b.kind == ParamKind::joint_qd)
        v = cs.model.joint_qd[b.index[e]];
      else
        continue;  // controls start at zero
      theta[b.offset + e] = v;
    }
  // PD targets start at the initial joint coordinates (the robot holds its pose); torque and
  // thrust inputs at zero
  for (const ParamBlock& b : blocks_) {
    if (b.kind != ParamKind::actuator_control) continue;
    for (int e = 0; e < b.elements; ++e) {
      int a = b.index[e];
      if (m.actuator_type[a] != RIGID_ACTUATOR_PD) continue;
      S q = cs.model.joint_q[m.joint_q_start[m.dof_joint[m.actuator_dof[a]]]];
      for (int t = 0; t < b.steps; ++t) theta[b.offset + t * b.elements + e] = q;
    }
  }
  clamp(theta);
  return theta;
}

template <class S>
void RigidParametersT<S>::clamp(std::vector<S>& theta) const {
  for (const ParamBlock& b : blocks_)
    for (int k = b.offset; k < b.offset + b.count; ++k)
      theta[k] = S(std::clamp(double(theta[k]), entry_lower(b, k - b.offset), entry_upper(b, k - b.offset)));
}

template <class S>
void RigidParametersT<S>::apply(const std::vector<S>& theta, const RigidModelT<S>& base, ModelT<S>& model,
                                StateT<S>& init, std::vector<ControlT<S>>& controls) const {
  assert(int(theta.size()) == size_ && "theta does not match the parameters");
  RigidModelT<S>& m = model.rigid;
  if (has_controls_) controls.assign(horizon_, m.make_control());
  for (const ParamBlock& b : blocks_) {
    if (b.kind == ParamKind::policy) continue;
    const FieldRef<S> f = b.field ? model_field(model, b.field->field) : FieldRef<S>{};
    for (int t = 0; t < b.steps; ++t)
      for (int e = 0; e < b.elements; ++e) {
        S v = theta[b.offset + t * b.elements + e];
        int i = b.index[e];
        if (b.field) {
          f.at(i, 0) = v;
          if (b.field->field == Field::body_mass) {
            // inertia scales with the mass (fixed geometry), as the solver's gradient assumes
            S scale = v / base.body_mass[i];
            for (int r = 0; r < 3; ++r)
              for (int c = 0; c < 3; ++c) m.body_inertia[i].m[r][c] = base.body_inertia[i].m[r][c] * scale;
          }
        } else if (b.kind == ParamKind::joint_q) {
          init.joint_q[i] = v;
        } else if (b.kind == ParamKind::joint_qd) {
          init.joint_qd[i] = v;
        } else if (b.kind == ParamKind::actuator_control) {
          controls[t].joint_act[i] = v;
        }
      }
  }
}

template <class S>
void RigidParametersT<S>::gather(const StateT<S>& gi, const std::vector<ControlT<S>>& gc, const ModelGradT<S>& gm,
                                 std::vector<S>& grad) const {
  grad.assign(size_, S(0));
  for (const ParamBlock& b : blocks_) {
    if (b.kind == ParamKind::policy) continue;
    const FieldRef<S> f = b.field ? grad_field(gm, b.field->field) : FieldRef<S>{};
    for (int t = 0; t < b.steps; ++t)
      for (int e = 0; e < b.elements; ++e) {
        int i = b.index[e];
        S g = S(0);
        if (b.field)
          g = f.count > i ? f.at(i, 0) : S(0);
        else if (b.kind == ParamKind::joint_q)
          g = gi.joint_q[i];
        else if (b.kind == ParamKind::joint_qd)
          g = gi.joint_qd[i];
        else if (b.kind == ParamKind::actuator_control)
          g = t < int(gc.size()) ? gc[t].joint_act[i] : S(0);
        grad[b.offset + t * b.elements + e] = g;
      }
  }
}

template <class S>
const ParamBlock& RigidParametersT<S>::block_of(int i) const {
  for (const ParamBlock& b : blocks_)
    if (i >= b.offset && i < b.offset + b.count) return b;
  assert(false && "entry outside theta");
  return blocks_.front();
}

template <class S>
std::string RigidParametersT<S>::entry_name(int i) const {
  const ParamBlock& b = block_of(i);
  size_t bi = size_t(&b - blocks_.data());
  if (b.kind == ParamKind::policy) return "policy[" + std::to_string(i - b.offset) + "]";
  int k = i - b.offset, t = k / b.elements, e = k % b.elements;
  std::string s = scene::to_string(b.kind);
  if (!b.object.empty()) s += "[" + b.object + "]";
  if (b.steps > 1) s += "[t=" + std::to_string(t) + "]";
  if (!names_[bi][e].empty()) s += "[" + names_[bi][e] + "]";
  return s;
}

template class RigidParametersT<float>;
template class RigidParametersT<double>;

}  // namespace adj::optim
