#include "app/editor/robot_sim.h"

namespace adj::editor {

RigidControl robot_hold_control(const RigidModel& m, const RigidState& initial) {
  RigidControl c = m.make_control();
  for (int a = 0; a < m.actuator_count(); ++a) {
    if (m.actuator_type[size_t(a)] != RIGID_ACTUATOR_PD) continue;
    const int j = m.dof_joint[size_t(m.actuator_dof[size_t(a)])];
    const int type = m.joint_type[size_t(j)];
    if (type != RIGID_JOINT_REVOLUTE && type != RIGID_JOINT_PRISMATIC) continue;
    const size_t q = size_t(m.joint_q_start[size_t(j)]);
    if (q < initial.joint_q.size()) c.act[size_t(a)] = initial.joint_q[q];
  }
  return c;
}

void RobotSim::clear() {
  solver_.reset();
  cur_ = next_ = {};
  control_ = {};
  contacts_ = {};
}

void RobotSim::reset(const scene::CompiledScene& cs) {
  if (!cs.has_robots()) return clear();
  solver_ = std::make_unique<RigidSolver>(RigidSolverOptions{.substeps = cs.substeps});
  cur_ = next_ = cs.rigid_initial;
  control_ = robot_hold_control(cs.rigid, cs.rigid_initial);
  contacts_ = {};
  (void)rigid_contacts(cs.rigid, cur_, control_, contacts_);  // a bad state shows up at the first step
}

Status RobotSim::step(const scene::CompiledScene& cs) {
  if (!solver_) return Status::ok();
  if (Status st = solver_->step(cs.rigid, cur_, next_, control_, cs.frame_dt); !st) return st;
  std::swap(cur_, next_);
  return rigid_contacts(cs.rigid, cur_, control_, contacts_);
}

}  // namespace adj::editor
