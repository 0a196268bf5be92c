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
  coupled_.reset();
  cur_ = next_ = {};
  control_ = {};
  contacts_ = {};
}

void RobotSim::reset(const scene::CompiledScene& cs) {
  if (!cs.has_robots()) return clear();
  solver_ = std::make_unique<RigidSolver>(RigidSolverOptions{.substeps = cs.substeps});
  coupled_.reset();
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

Status RobotSim::step_coupled(const scene::CompiledScene& cs, const State& particles, State& particles_next,
                              const Control& particle_control, int thread_count) {
  if (!solver_) return Status::error("no robots to couple");
  if (!coupled_)
    coupled_ = std::make_unique<CoupledSolverT<float>>(
        CoupledSolverOptions{.substeps = cs.substeps, .thread_count = thread_count});
  in_.particles = particles;
  in_.rigid = cur_;
  coupled_control_.particles = particle_control;
  coupled_control_.rigid = control_;
  if (Status st = coupled_->step(cs.model, cs.rigid, in_, out_, coupled_control_, cs.frame_dt); !st) return st;
  std::swap(particles_next, out_.particles);
  std::swap(cur_, out_.rigid);
  return rigid_contacts(cs.rigid, cur_, control_, contacts_);
}

}  // namespace adj::editor
