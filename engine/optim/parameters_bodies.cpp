// ParametersT's blocks on a robot's side (parameters.h): the initial joint coordinates and
// velocities, the per-frame actuator inputs and the robot side's model fields. One entry per
// element (every body field has width 1), entry (step, element) at offset + step * elements + element.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "engine/optim/parameters.h"

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
Status ParametersT<S>::add_body_blocks(const scene::CompiledSceneT<S>& cs, const scene::Task& task, int policy_size) {
  const RigidModelT<S>& m = cs.model.rigid;
  const std::string where = "task '" + task.name + "'";
  for (size_t i = 0; i < task.parameters.size(); ++i) {
    const scene::ParamSpec& spec = task.parameters[i];
    if (spec.kind == scene::ParamKind::policy) continue;  // below
    const std::string pw = where + ": parameters[" + std::to_string(i) + "] (" + scene::to_string(spec.kind) + ")";
    for (const ParamBlock& b : blocks_)
      if (b.kind == spec.kind && b.object == spec.object) return Status::error(pw + ": the same block twice");
    ParamBlock b;
    b.side = TermSide::bodies;
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
      for (int k : b.index) names.push_back(element_name(m, field->domain, k));
      has_body_fields_ = true;
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
          has_controls_ = true;
          break;
        default:
          return Status::error(pw +
                               ": not a robot parameter (robot tasks take joint_q, joint_qd, actuator_control, "
                               "actuator_kp, actuator_kd, body_mass, contact_ke/kd/mu)");
      }
    if (b.index.empty()) return Status::error(pw + ": \"" + spec.object + "\" has nothing this parameter covers");
    b.elements = int(b.index.size());
    if (Status st = element_bounds(spec, names, pw, b); !st) return st;
    b.offset = size_;
    b.count = b.steps * b.elements;
    b.names = std::move(names);
    size_ += b.count;
    blocks_.push_back(std::move(b));
  }
  if (policy_size > 0) {
    ParamBlock b;
    b.side = TermSide::bodies;
    b.kind = ParamKind::policy;
    b.elements = b.count = policy_size;
    b.lower = -std::numeric_limits<double>::infinity();
    b.upper = std::numeric_limits<double>::infinity();
    b.offset = size_;
    size_ += b.count;
    blocks_.push_back(std::move(b));
  }
  return Status::ok();
}

template <class S>
void ParametersT<S>::initial_bodies(const scene::CompiledSceneT<S>& cs, const ParamBlock& b, S* x) const {
  const RigidModelT<S>& m = cs.model.rigid;
  if (b.kind == ParamKind::policy) return;  // the policy initialises its weights
  for (int e = 0; e < b.elements; ++e) {
    const int i = b.index[e];
    if (b.field)
      x[e] = model_field(cs.model, b.field->field).at(i, 0);
    else if (b.kind == ParamKind::joint_q)
      x[e] = cs.model.joint_q[i];
    else if (b.kind == ParamKind::joint_qd)
      x[e] = cs.model.joint_qd[i];
    else if (b.kind == ParamKind::actuator_control && m.actuator_type[i] == RIGID_ACTUATOR_PD) {
      // PD targets start at the initial joint coordinates (the robot holds its pose); torque and
      // thrust inputs at zero
      const S q = cs.model.joint_q[m.joint_q_start[m.dof_joint[m.actuator_dof[i]]]];
      for (int t = 0; t < b.steps; ++t) x[t * b.elements + e] = q;
    }
  }
}

template <class S>
void ParametersT<S>::apply_bodies(const ParamBlock& b, const S* x, const std::vector<S>& base_mass,
                                  const std::vector<mat33<S>>& base_inertia, ModelT<S>& model, StateT<S>& init,
                                  std::vector<ControlT<S>>& controls) const {
  if (b.kind == ParamKind::policy) return;
  RigidModelT<S>& m = model.rigid;
  const FieldRef<S> f = b.field ? model_field(model, b.field->field) : FieldRef<S>{};
  for (int t = 0; t < b.steps; ++t)
    for (int e = 0; e < b.elements; ++e) {
      const S v = x[t * b.elements + e];
      const int i = b.index[e];
      if (b.field) {
        f.at(i, 0) = v;
        if (b.field->field == Field::body_mass) {
          // inertia scales with the mass (fixed geometry), as the solver's gradient assumes
          S scale = v / base_mass[i];
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) m.body_inertia[i].m[r][c] = base_inertia[i].m[r][c] * scale;
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

template <class S>
void ParametersT<S>::gather_bodies(const ParamBlock& b, const StateT<S>& gi, const std::vector<ControlT<S>>& gc,
                                   const ModelGradT<S>& gm, S* g) const {
  if (b.kind == ParamKind::policy) return;  // the policy's
  const FieldRef<S> f = b.field ? grad_field(gm, b.field->field) : FieldRef<S>{};
  for (int t = 0; t < b.steps; ++t)
    for (int e = 0; e < b.elements; ++e) {
      const int i = b.index[e];
      S v = S(0);
      if (b.field)
        v = f.count > i ? f.at(i, 0) : S(0);
      else if (b.kind == ParamKind::joint_q)
        v = gi.joint_q[i];
      else if (b.kind == ParamKind::joint_qd)
        v = gi.joint_qd[i];
      else if (b.kind == ParamKind::actuator_control)
        v = t < int(gc.size()) ? gc[t].joint_act[i] : S(0);
      g[t * b.elements + e] = v;
    }
}

template <class S>
std::string ParametersT<S>::entry_name_bodies(const ParamBlock& b, int k) const {
  if (b.kind == ParamKind::policy) return "policy[" + std::to_string(k) + "]";
  const int t = k / b.elements, e = k % b.elements;
  std::string s = scene::to_string(b.kind);
  if (!b.object.empty()) s += "[" + b.object + "]";
  if (b.steps > 1) s += "[t=" + std::to_string(t) + "]";
  if (!b.names[std::size_t(e)].empty()) s += "[" + b.names[std::size_t(e)] + "]";
  return s;
}

#define ADJ_BODY_PARAMETERS(S)                                                                                      \
  template Status ParametersT<S>::add_body_blocks(const scene::CompiledSceneT<S>&, const scene::Task&, int);        \
  template void ParametersT<S>::initial_bodies(const scene::CompiledSceneT<S>&, const ParamBlock&, S*) const;       \
  template void ParametersT<S>::apply_bodies(const ParamBlock&, const S*, const std::vector<S>&,                    \
                                             const std::vector<mat33<S>>&, ModelT<S>&, StateT<S>&,                  \
                                             std::vector<ControlT<S>>&) const;                                      \
  template void ParametersT<S>::gather_bodies(const ParamBlock&, const StateT<S>&, const std::vector<ControlT<S>>&, \
                                              const ModelGradT<S>&, S*) const;                                      \
  template std::string ParametersT<S>::entry_name_bodies(const ParamBlock&, int) const;
ADJ_BODY_PARAMETERS(float)
ADJ_BODY_PARAMETERS(double)

}  // namespace adj::optim
