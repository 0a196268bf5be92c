#include "engine/io/mujoco_dynamics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "engine/articulation/rigid_dynamics.h"
#include "engine/io/mjcf.h"
#include "engine/io/urdf.h"

namespace adj {

namespace {

using rigid::quat;

const char* mujoco_type(int t) {
  switch (t) {
    case RIGID_JOINT_REVOLUTE:
      return "hinge";
    case RIGID_JOINT_PRISMATIC:
      return "slide";
    case RIGID_JOINT_BALL:
      return "ball";
    default:
      return "free";
  }
}

// a unit quaternion from 4 numbers; false when they are (nearly) zero or not finite
bool unit_quat(const double* v, quat<double>& q) {
  double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
  if (!(n > 1e-12) || !std::isfinite(n)) return false;
  q = {v[0] / n, v[1] / n, v[2] / n, v[3] / n};
  return true;
}

// the engine state of MuJoCo's (qpos, qvel) and the velocity map T (qd = T qvel; engine rows,
// MuJoCo columns; constant, as both put a free joint's linear velocity in a fixed frame)
struct EngineState {
  std::vector<double> q, qd, T;
};

Status to_engine(const RigidModelT<double>& m, const MujocoLayout& layout, const MujocoDynamics& out,
                 const std::vector<double>& qpos, const std::vector<double>& qvel, EngineState& e) {
  const int nve = m.dof_count();
  StateT<double> s0 = m.make_state();
  e.q.assign(s0.joint_q.begin(), s0.joint_q.end());
  e.qd.assign(std::size_t(nve), 0.0);
  e.T.assign(std::size_t(nve) * std::size_t(out.nv), 0.0);
  auto T = [&](int r, int c) -> double& { return e.T[std::size_t(r) * std::size_t(out.nv) + std::size_t(c)]; };
  for (std::size_t k = 0; k < layout.joints.size(); ++k) {
    const MujocoJointMap& j = layout.joints[k];
    const int b = j.body, qa = m.joint_q_start[b], da = m.joint_dof_start[b];
    const int ma = out.joint_qposadr[k], va = out.joint_dofadr[k];
    const std::string who = "joint \"" + j.name + "\"";
    switch (m.joint_type[b]) {
      case RIGID_JOINT_REVOLUTE:
      case RIGID_JOINT_PRISMATIC:
        e.q[qa] = qpos[ma] - j.ref;
        e.qd[da] = qvel[va];
        T(da, va) = 1;
        break;
      case RIGID_JOINT_BALL: {
        quat<double> r;
        if (!unit_quat(&qpos[ma], r)) return Status::error(who + ": qpos quaternion is zero or not finite");
        e.q[qa] = r.w, e.q[qa + 1] = r.x, e.q[qa + 2] = r.y, e.q[qa + 3] = r.z;
        for (int i = 0; i < 3; ++i) e.qd[da + i] = qvel[va + i], T(da + i, va + i) = 1;
        break;
      }
      case RIGID_JOINT_FREE: {
        if (m.joint_parent[b] != -1) return Status::error(who + ": a free joint must hang from the world");
        quat<double> r;
        if (!unit_quat(&qpos[ma + 3], r)) return Status::error(who + ": qpos quaternion is zero or not finite");
        // world pose -> coordinates in the joint frame (pJ, RJ)
        const mat33<double> R = rigid::qmat(r), RJt = transpose(m.joint_rot[b]);
        const vec3<double> p = RJt * (vec3<double>(qpos[ma], qpos[ma + 1], qpos[ma + 2]) - m.joint_pos[b]);
        const quat<double> ql = rigid_matrix_quat(RJt * R);
        const double qv[7] = {p.x, p.y, p.z, ql.w, ql.x, ql.y, ql.z};
        for (int i = 0; i < 7; ++i) e.q[qa + i] = qv[i];
        // both conventions: linear velocity in the joint frame (MuJoCo's world frame, rotated
        // by RJ), angular velocity in the body frame
        const vec3<double> vl = RJt * vec3<double>(qvel[va], qvel[va + 1], qvel[va + 2]);
        for (int i = 0; i < 3; ++i) {
          e.qd[da + i] = vl[i];
          e.qd[da + 3 + i] = qvel[va + 3 + i];
          T(da + 3 + i, va + 3 + i) = 1;
          for (int c = 0; c < 3; ++c) T(da + i, va + c) = RJt.m[i][c];
        }
        break;
      }
      default:
        return Status::error(who + ": a fixed joint has no coordinates");
    }
  }
  return Status::ok();
}

// the generalized forces of the engine's actuators (joint torques, PD and velocity servos;
// thrust through `body_force`, which maps body forces to joint space)
template <class W, class BodyForce>
std::vector<double> actuator_forces(const RigidModelT<double>& m, const rigid::Params<double>& par,
                                    const std::vector<double>& q, const std::vector<double>& qd,
                                    const std::vector<double>& act, W& w, BodyForce&& body_force) {
  std::vector<double> f(std::size_t(m.dof_count()), 0.0);
  bool thrust = false;
  for (int k = 0; k < m.actuator_count(); ++k) {
    const int d = m.actuator_dof[k];
    const double a = act[std::size_t(k)];
    switch (m.actuator_type[k]) {
      case RIGID_ACTUATOR_TORQUE:
        f[d] += m.actuator_gear[k] * a;
        break;
      case RIGID_ACTUATOR_PD:
        f[d] += par.actuator_kp[k] * (a - q[m.joint_q_start[m.dof_joint[d]]]) - par.actuator_kd[k] * qd[d];
        break;
      case RIGID_ACTUATOR_VELOCITY:
        f[d] += par.actuator_kd[k] * (a - qd[d]);
        break;
      default:
        thrust = true;
    }
  }
  if (thrust) {
    std::fill(w.fext.begin(), w.fext.end(), rigid::svec<double>{});
    rigid::thrust(m, act.data(), w);
    std::vector<double> ft = body_force();
    for (std::size_t d = 0; d < f.size(); ++d) f[d] += ft[d];
  }
  return f;
}

// joint damping and springs (passive) and the limit penalties, engine coordinates
void joint_passive(const RigidModelT<double>& m, const std::vector<double>& q, const std::vector<double>& qd,
                   std::vector<double>& passive, std::vector<double>& limit, std::vector<double>& equality) {
  passive.assign(std::size_t(m.dof_count()), 0.0);
  limit.assign(std::size_t(m.dof_count()), 0.0);
  equality.assign(std::size_t(m.dof_count()), 0.0);
  for (int c = 0; c < m.coupling_count(); ++c) {
    const int a = m.coupling_joint[c], b = m.coupling_leader[c];
    const int da = m.joint_dof_start[a], db = m.joint_dof_start[b];
    const double r = m.coupling_ratio[c];
    const double e = q[m.joint_q_start[a]] - r * q[m.joint_q_start[b]] - m.coupling_offset[c];
    const double f = m.coupling_ke[c] * e + m.coupling_kd[c] * (qd[da] - r * qd[db]);
    equality[da] -= f;
    equality[db] += r * f;
  }
  for (int d = 0; d < m.dof_count(); ++d) passive[d] = -m.dof_damping[d] * qd[d];
  for (int j = 0; j < m.body_count(); ++j) {
    int t = m.joint_type[j];
    if (t != RIGID_JOINT_REVOLUTE && t != RIGID_JOINT_PRISMATIC) continue;
    const int d = m.joint_dof_start[j];
    const double x = q[m.joint_q_start[j]];
    passive[d] -= m.joint_stiffness[j] * (x - m.joint_spring_q[j]);
    const double lo = m.joint_lower[j] - x, hi = x - m.joint_upper[j], eps = m.joint_limit_eps;
    limit[d] = m.joint_limit_ke[j] * (rigid::ramp(lo, eps) - rigid::ramp(hi, eps)) -
               m.joint_limit_kd[j] * qd[d] * (rigid::ramp_slope(lo, eps) + rigid::ramp_slope(hi, eps));
  }
}

}  // namespace

// Shepperd: the largest of w, x, y, z first
quat<double> rigid_matrix_quat(const mat33<double>& R) {
  const auto& a = R.m;
  const double t = a[0][0] + a[1][1] + a[2][2];
  if (t > 0) {
    double s = std::sqrt(t + 1) * 2;
    return {s / 4, (a[2][1] - a[1][2]) / s, (a[0][2] - a[2][0]) / s, (a[1][0] - a[0][1]) / s};
  }
  if (a[0][0] > a[1][1] && a[0][0] > a[2][2]) {
    double s = std::sqrt(1 + a[0][0] - a[1][1] - a[2][2]) * 2;
    return {(a[2][1] - a[1][2]) / s, s / 4, (a[0][1] + a[1][0]) / s, (a[0][2] + a[2][0]) / s};
  }
  if (a[1][1] > a[2][2]) {
    double s = std::sqrt(1 + a[1][1] - a[0][0] - a[2][2]) * 2;
    return {(a[0][2] - a[2][0]) / s, (a[0][1] + a[1][0]) / s, s / 4, (a[1][2] + a[2][1]) / s};
  }
  double s = std::sqrt(1 + a[2][2] - a[0][0] - a[1][1]) * 2;
  return {(a[1][0] - a[0][1]) / s, (a[0][2] + a[2][0]) / s, (a[1][2] + a[2][1]) / s, s / 4};
}

MujocoLayout mujoco_layout_of(const RigidModelT<double>& m) {
  MujocoLayout l;
  for (int b = 0; b < m.body_count(); ++b)
    if (rigid_joint_dof_count(m.joint_type[b]) > 0) l.joints.push_back({m.body_name[b], b, 0.0});
  for (int a = 0; a < m.actuator_count(); ++a) l.actuators.push_back({"actuator " + std::to_string(a), a});
  return l;
}

std::vector<double> mujoco_qpos0(const RigidModelT<double>& m, const MujocoLayout& layout) {
  std::vector<double> q;
  for (const MujocoJointMap& j : layout.joints) {
    switch (m.joint_type[j.body]) {
      case RIGID_JOINT_REVOLUTE:
      case RIGID_JOINT_PRISMATIC:
        q.push_back(j.ref);
        break;
      case RIGID_JOINT_BALL:
        q.insert(q.end(), {1.0, 0.0, 0.0, 0.0});
        break;
      case RIGID_JOINT_FREE: {
        const vec3<double>& p = m.joint_pos[j.body];
        const quat<double> r = rigid_matrix_quat(m.joint_rot[j.body]);
        q.insert(q.end(), {p.x, p.y, p.z, r.w, r.x, r.y, r.z});
        break;
      }
      default:
        break;
    }
  }
  return q;
}

Result<MujocoDynamics> mujoco_dynamics(const RigidModelT<double>& m, const MujocoLayout& layout,
                                       const std::vector<double>& qpos, const std::vector<double>& qvel,
                                       const std::vector<double>& ctrl, const DynamicsOptions& opt) {
  const int nb = m.body_count(), nve = m.dof_count();
  MujocoDynamics out;
  for (const MujocoJointMap& j : layout.joints) {
    if (j.body < 0 || j.body >= nb) return Status::error("joint \"" + j.name + "\": no such body");
    const int t = m.joint_type[j.body];
    if (t == RIGID_JOINT_FIXED) return Status::error("joint \"" + j.name + "\": a fixed joint has no coordinates");
    out.joint_names.push_back(j.name);
    out.joint_types.push_back(mujoco_type(t));
    out.joint_qposadr.push_back(out.nq);
    out.joint_dofadr.push_back(out.nv);
    out.nq += rigid_joint_q_count(t);
    out.nv += rigid_joint_dof_count(t);
  }
  if (out.nv != nve)
    return Status::error("the layout covers " + std::to_string(out.nv) + " of the model's " + std::to_string(nve) +
                         " degrees of freedom");
  out.nu = int(layout.actuators.size());
  auto count = [](const char* what, std::size_t got, int want) {
    return Status::error(std::string(what) + " has " + std::to_string(got) + " numbers; the model needs " +
                         std::to_string(want));
  };
  if (int(qpos.size()) != out.nq) return count("qpos", qpos.size(), out.nq);
  if (int(qvel.size()) != out.nv) return count("qvel", qvel.size(), out.nv);
  if (int(ctrl.size()) != out.nu) return count("ctrl", ctrl.size(), out.nu);
  for (double x : qpos)
    if (!std::isfinite(x)) return Status::error("qpos is not finite");
  for (double x : qvel)
    if (!std::isfinite(x)) return Status::error("qvel is not finite");

  EngineState e;
  if (Status s = to_engine(m, layout, out, qpos, qvel, e); !s) return s;
  std::vector<double> act(std::size_t(m.actuator_count()), 0.0);
  for (const MujocoActuatorMap& a : layout.actuators) {
    if (a.actuator < 0 || a.actuator >= m.actuator_count())
      return Status::error("actuator \"" + a.name + "\": no such engine actuator");
    double c = ctrl[std::size_t(&a - layout.actuators.data())];
    if (a.ctrl_limited) c = std::clamp(c, a.ctrl_lower, a.ctrl_upper);
    act[std::size_t(a.actuator)] = a.scale * c + a.offset;
  }

  // engine coordinates: kinematics, mass matrix, bias, body forces through RNEA
  const rigid::Params<double> par = rigid::lift_params<double>(m);
  rigid::Work<double> w;
  w.resize(nb, m.q_count(), nve);
  rigid::kinematics(m, par, e.q.data(), e.qd.data(), w);
  const double* no_qdd = nullptr;
  auto clear_fext = [&] { std::fill(w.fext.begin(), w.fext.end(), rigid::svec<double>{}); };
  const std::size_t nvs = std::size_t(nve);
  std::vector<double> bias(nvs), tmp(nvs);
  clear_fext();
  rigid::rnea(m, m.gravity, e.qd.data(), no_qdd, w, bias.data());
  // J^T fext of the body forces in w.fext: bias (fext = 0) - rnea(fext)
  auto body_force = [&] {
    rigid::rnea(m, m.gravity, e.qd.data(), no_qdd, w, tmp.data());
    std::vector<double> f(nvs);
    for (int d = 0; d < nve; ++d) f[d] = bias[d] - tmp[d];
    return f;
  };
  std::vector<double> contact(std::size_t(nve), 0.0);
  if (opt.contact) {
    rigid::contact(m, par, w, static_cast<RigidContactsT<double>*>(nullptr));
    contact = body_force();
  }
  std::vector<double> actuator = actuator_forces(m, par, e.q, e.qd, act, w, body_force);
  std::vector<double> passive, limit, equality;
  joint_passive(m, e.q, e.qd, passive, limit, equality);
  if (!opt.limits) std::fill(limit.begin(), limit.end(), 0.0);
  if (!opt.equality) std::fill(equality.begin(), equality.end(), 0.0);
  rigid::crba(m, par, w);

  // to MuJoCo's coordinates: f -> T^T f, M -> T^T M T
  const int nv = out.nv;
  auto Tt = [&](const std::vector<double>& f) {
    std::vector<double> r(std::size_t(nv), 0.0);
    for (int d = 0; d < nve; ++d)
      for (int k = 0; k < nv; ++k) r[k] += e.T[std::size_t(d) * nv + k] * f[d];
    return r;
  };
  out.qfrc_bias = Tt(bias);
  out.qfrc_passive = Tt(passive);
  out.qfrc_actuator = Tt(actuator);
  out.qfrc_limit = Tt(limit);
  out.qfrc_equality = Tt(equality);
  out.qfrc_contact = Tt(contact);
  std::vector<double> MT(std::size_t(nve) * nv, 0.0);
  for (int r = 0; r < nve; ++r)
    for (int c = 0; c < nv; ++c)
      for (int k = 0; k < nve; ++k)
        MT[std::size_t(r) * nv + c] += w.M[std::size_t(r) * nve + k] * e.T[std::size_t(k) * nv + c];
  out.qM.assign(std::size_t(nv) * nv, 0.0);
  for (int r = 0; r < nv; ++r)
    for (int c = 0; c < nv; ++c)
      for (int k = 0; k < nve; ++k)
        out.qM[std::size_t(r) * nv + c] += e.T[std::size_t(k) * nv + r] * MT[std::size_t(k) * nv + c];

  // forward dynamics
  std::vector<double> L(out.qM.size(), 0.0);
  if (!rigid::cholesky(out.qM, L, nv))
    return Status::error(
        "the mass matrix is not positive definite (a body with no mass and inertia at the end of a chain?)");
  out.qacc.resize(std::size_t(nv));
  for (int d = 0; d < nv; ++d)
    out.qacc[d] = out.qfrc_passive[d] + out.qfrc_actuator[d] + out.qfrc_limit[d] + out.qfrc_equality[d] +
                  out.qfrc_contact[d] - out.qfrc_bias[d];
  rigid::cholesky_solve(L, nv, out.qacc.data(), out.qacc.data());
  // MuJoCo's total mass leaves out what is welded to the world (fused into its world body)
  std::vector<char> moving(std::size_t(nb), 0);
  for (int b = 0; b < nb; ++b) {
    const int p = m.joint_parent[b];
    moving[b] = m.joint_type[b] != RIGID_JOINT_FIXED || (p >= 0 && moving[p]);
    if (moving[b]) out.total_mass += m.body_mass[b];
  }
  out.gravity = {m.gravity.x, m.gravity.y, m.gravity.z};
  return out;
}

Result<RobotFileModel> load_robot_file(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  RigidBuilder b;
  b.ground = false;
  b.gravity = {0, 0, -9.81};
  RobotFileModel out;
  if (ext == ".urdf") {
    UrdfOptions opt;
    opt.default_actuators = false;
    opt.balance_inertia = true;  // as the editor imports a file: repaired, with a warning naming the link
    auto imp = rigid_import_urdf(path, b, opt);
    if (!imp) return imp.status();
    out.warnings = imp->warnings;
    auto m = b.finalize<double>();
    if (!m) return Status::error(path + ": " + m.status().message());
    out.model = std::move(m.value());
    for (std::size_t i = 0; i < imp->bodies.size(); ++i) {
      const int body = imp->bodies[i];
      if (rigid_joint_dof_count(out.model.joint_type[body]) > 0)
        out.layout.joints.push_back({imp->joints[i], body, 0.0});
    }
    return out;
  }
  if (ext == ".xml" || ext == ".mjcf") {
    MjcfOptions mo;
    mo.balance_inertia = true;  // as the editor imports a file: repaired, with a warning naming the element
    auto imp = rigid_import_mjcf(path, b, mo);
    if (!imp) return imp.status();
    b.gravity = imp->gravity;
    out.warnings = imp->warnings;
    out.timestep = imp->timestep;
    out.layout = imp->layout;
    auto m = b.finalize<double>();
    if (!m) return Status::error(path + ": " + m.status().message());
    out.model = std::move(m.value());
    return out;
  }
  return Status::error(path + ": not a robot file (.urdf, .xml or .mjcf)");
}

}  // namespace adj
