// ParametersT's blocks on a robot's side (parameters.h): the initial joint coordinates and
// velocities, the per-frame actuator inputs and the robot side's model fields. Entry (step,
// element, component) at offset + (step * elements + element) * width + component: width 1 but
// for gravity's 3.
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

// a model field's block, its elements named
template <class S>
Status create_field(const ParamBuildT<S>& b, ParamBlock& block) {
  if (Status st = field_block(*block.field, b.cs.model, b.object, b.where, block); !st) return st;
  for (int k : block.index) block.names.push_back(element_name(b.cs.model.rigid, block.field->domain, k));
  return Status::ok();
}

// the robot's revolute and prismatic coordinates
template <class S>
Status create_joint_q(const ParamBuildT<S>& b, ParamBlock& block) {
  const RigidModelT<S>& m = b.cs.model.rigid;
  for (int j = b.object->body_begin; j < b.object->body_end; ++j)
    if (m.joint_type[j] == RIGID_JOINT_REVOLUTE || m.joint_type[j] == RIGID_JOINT_PRISMATIC) {
      block.index.push_back(m.joint_q_start[j]);
      block.names.push_back(m.body_name[j]);
    }
  return Status::ok();
}

template <class S>
Status create_joint_qd(const ParamBuildT<S>& b, ParamBlock& block) {
  for (int d = b.object->dof_begin; d < b.object->dof_end; ++d) {
    block.index.push_back(d);
    block.names.push_back(dof_name(b.cs.model.rigid, d));
  }
  return Status::ok();
}

template <class S>
Status create_actuators(const ParamBuildT<S>& b, ParamBlock& block) {
  for (int a = b.object->actuator_begin; a < b.object->actuator_end; ++a) {
    block.index.push_back(a);
    block.names.push_back(element_name(b.cs.model.rigid, FieldDomain::actuator, a));
  }
  return Status::ok();
}

// the initial joint coordinates (velocities: qd true)
template <class S, bool qd>
void initial_joints(const scene::CompiledSceneT<S>& cs, const ParamBlock& b, S* x) {
  for (int e = 0; e < b.elements; ++e) x[e] = (qd ? cs.model.joint_qd : cs.model.joint_q)[b.index[e]];
}
template <class S, bool qd>
void apply_joints(const ParamBlock& b, const S* x, const ParamTargetT<S>& to) {
  for (int e = 0; e < b.elements; ++e) (qd ? to.init.joint_qd : to.init.joint_q)[b.index[e]] = x[e];
}
template <class S, bool qd>
void gather_joints(const ParamBlock& b, const ParamGradsT<S>& from, S* g) {
  for (int e = 0; e < b.elements; ++e) g[e] = (qd ? from.initial.joint_qd : from.initial.joint_q)[b.index[e]];
}

// PD targets start at the initial joint coordinates (the robot holds its pose); torque and
// thrust inputs at zero
template <class S>
void initial_actuators(const scene::CompiledSceneT<S>& cs, const ParamBlock& b, S* x) {
  const RigidModelT<S>& m = cs.model.rigid;
  for (int e = 0; e < b.elements; ++e) {
    const int i = b.index[e];
    if (m.actuator_type[i] != RIGID_ACTUATOR_PD) continue;
    const S q = cs.model.joint_q[m.joint_q_start[m.dof_joint[m.actuator_dof[i]]]];
    for (int t = 0; t < b.steps; ++t) x[t * b.elements + e] = q;
  }
}
template <class S>
void apply_actuators(const ParamBlock& b, const S* x, const ParamTargetT<S>& to) {
  for (int t = 0; t < b.steps; ++t)
    for (int e = 0; e < b.elements; ++e) to.controls[t].joint_act[b.index[e]] = x[t * b.elements + e];
}
// frames the rollout kept no control gradient of read 0
template <class S>
void gather_actuators(const ParamBlock& b, const ParamGradsT<S>& from, S* g) {
  for (int t = 0; t < b.steps; ++t)
    for (int e = 0; e < b.elements; ++e)
      g[t * b.elements + e] = t < int(from.controls.size()) ? from.controls[t].joint_act[b.index[e]] : S(0);
}

}  // namespace

template <class S>
const std::vector<ParamRowT<S>>& body_param_rows() {
  static const std::vector<ParamRowT<S>> rows = [] {
    const TermSide b = TermSide::bodies;
    std::vector<ParamRowT<S>> r = {
        {ParamKind::joint_q, b, nullptr, false, &create_joint_q<S>, &initial_joints<S, false>, &apply_joints<S, false>,
         &gather_joints<S, false>},
        {ParamKind::joint_qd, b, nullptr, false, &create_joint_qd<S>, &initial_joints<S, true>, &apply_joints<S, true>,
         &gather_joints<S, true>},
        {ParamKind::actuator_control, b, nullptr, true, &create_actuators<S>, &initial_actuators<S>,
         &apply_actuators<S>, &gather_actuators<S>},
        {ParamKind::policy, b, nullptr, false, nullptr, nullptr, nullptr, nullptr},  // appended by add_body_blocks
    };
    for (ParamRowT<S> f : field_param_rows<S>(FieldSide::robot)) {
      f.create = &create_field<S>;  // the same block, its elements named
      r.push_back(f);
    }
    return r;
  }();
  return rows;
}

template <class S>
Status ParametersT<S>::add_body_blocks(const scene::CompiledSceneT<S>& cs, const scene::Task& task, int policy_size) {
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
    const ParamRowT<S>* row = param_row<S>(spec.kind, TermSide::bodies);
    const bool scene_wide = row && row->field && row->field->domain == FieldDomain::scene;
    const scene::ObjectRange* r = nullptr;
    if (!scene_wide) {
      r = cs.find(spec.object);
      if (!r || r->kind != scene::ObjectKind::robot)
        return Status::error(pw + ": \"" + spec.object + "\" is not a robot");
    }
    if (!row || !row->create)
      return Status::error(pw +
                           ": not a robot parameter (robot tasks take joint_q, joint_qd, actuator_control, "
                           "actuator_kp, actuator_kd, body_mass, contact_ke/kd/mu, gravity)");
    b.row = int(row - body_param_rows<S>().data());
    b.field = row->field;
    if (Status st = row->create(ParamBuildT<S>{cs, r, pw, 0}, b); !st) return st;
    has_body_fields_ = has_body_fields_ || row->field;
    if (Status st = block_frames(spec, row->per_step, task.horizon, pw, b); !st) return st;
    has_controls_ = has_controls_ || row->per_step;
    if (b.index.empty()) return Status::error(pw + ": \"" + spec.object + "\" has nothing this parameter covers");
    b.elements = int(b.index.size());
    if (Status st = element_bounds(spec, b.names, pw, b); !st) return st;
    b.offset = size_;
    b.count = b.steps * b.elements * b.width;
    size_ += b.count;
    blocks_.push_back(std::move(b));
  }
  if (policy_size > 0) {
    ParamBlock b;
    b.side = TermSide::bodies;
    b.kind = ParamKind::policy;
    b.row = int(param_row<S>(ParamKind::policy, TermSide::bodies) - body_param_rows<S>().data());
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
std::string ParametersT<S>::entry_name_bodies(const ParamBlock& b, int k) const {
  if (b.kind == ParamKind::policy) return "policy[" + std::to_string(k) + "]";
  const int c = k % b.width, e = (k / b.width) % b.elements, t = k / (b.width * b.elements);
  std::string s = scene::to_string(b.kind);
  if (!b.object.empty()) s += "[" + b.object + "]";
  if (b.knots > 0)
    s += "[knot " + std::to_string(t) + ", t=" + std::to_string(knot_frame(t, b.knots, b.frames)) + "]";
  else if (b.steps > 1)
    s += "[t=" + std::to_string(t) + "]";
  if (!b.names[std::size_t(e)].empty()) s += "[" + b.names[std::size_t(e)] + "]";
  return s + component_suffix(b, c);
}

#define ADJ_BODY_PARAMETERS(S)                                                                               \
  template Status ParametersT<S>::add_body_blocks(const scene::CompiledSceneT<S>&, const scene::Task&, int); \
  template std::string ParametersT<S>::entry_name_bodies(const ParamBlock&, int) const;                      \
  template const std::vector<ParamRowT<S>>& body_param_rows();
ADJ_BODY_PARAMETERS(float)
ADJ_BODY_PARAMETERS(double)

}  // namespace adj::optim
