#include "engine/optim/write_back.h"

#include "engine/optim/rigid_parameters.h"

#include <algorithm>

namespace adj::optim {

std::vector<std::string> write_back(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                    const scene::CompiledScene& cs, scene::Scene& doc) {
  std::vector<std::string> notes;
  for (const ParamBlock& b : blocks) {
    if (b.offset + b.count > int(theta.size())) {
      notes.push_back("parameters do not match their blocks: nothing written");
      break;
    }
    const scene::ObjectRange* range = cs.find(b.object);
    scene::Object* obj = nullptr;
    for (auto& o : doc.objects)
      if (o.name == b.object) obj = &o;
    auto entry = [&](int e, int c) { return double(theta[b.offset + e * b.width + c]); };
    using K = scene::ParamKind;
    switch (b.kind) {
      case K::contact_ke:
        doc.settings.contact.ke = entry(0, 0);
        break;
      case K::contact_kd:
        doc.settings.contact.kd = entry(0, 0);
        break;
      case K::contact_mu:
        doc.settings.contact.mu = entry(0, 0);
        break;
      case K::initial_position:
      case K::initial_velocity: {
        if (!obj || !range) break;
        bool vel = b.kind == K::initial_velocity;
        if (obj->kind == scene::ObjectKind::particles) {
          for (int e = 0; e < b.elements; ++e) {
            int local = b.index[e] - range->particle_begin;
            if (local < 0 || local >= int(obj->particles.particles.size())) continue;
            auto& p = obj->particles.particles[local];
            (vel ? p.velocity : p.position) = {entry(e, 0), entry(e, 1), entry(e, 2)};
          }
        } else if (obj->kind == scene::ObjectKind::cloth || obj->kind == scene::ObjectKind::soft) {
          // every particle's value, in the compiled order (entries the block does not list
          // keep the compiled scene's)
          const bool cloth = obj->kind == scene::ObjectKind::cloth;
          std::vector<scene::V3>& list = vel ? (cloth ? obj->cloth.particle_velocities : obj->soft.particle_velocities)
                                             : (cloth ? obj->cloth.particle_positions : obj->soft.particle_positions);
          const int n = range->particle_end - range->particle_begin;
          const auto& src = vel ? cs.model.particle_qd : cs.model.particle_q;
          list.resize(size_t(n));
          for (int i = 0; i < n; ++i) {
            const auto& p = src[size_t(range->particle_begin + i)];
            list[size_t(i)] = {double(p.x), double(p.y), double(p.z)};
          }
          for (int e = 0; e < b.elements; ++e) {
            int local = b.index[e] - range->particle_begin;
            if (local >= 0 && local < n) list[size_t(local)] = {entry(e, 0), entry(e, 1), entry(e, 2)};
          }
        }
        break;
      }
      case K::spring_rest:
      case K::spring_ke: {
        if (!obj || !range || obj->kind != scene::ObjectKind::particles) break;
        for (int e = 0; e < b.elements; ++e) {
          int local = b.index[e] - range->spring_begin;
          if (local < 0 || local >= int(obj->particles.springs.size())) continue;
          auto& s = obj->particles.springs[local];
          (b.kind == K::spring_rest ? s.rest : s.ke) = entry(e, 0);
        }
        break;
      }
      case K::control_force:
      case K::spring_activation:
      case K::tet_activation:
      case K::policy:
        break;  // the task keeps them (store_values)
      default:
        notes.push_back(std::string(scene::to_string(b.kind)) + (b.object.empty() ? "" : "[" + b.object + "]") +
                        ": not part of the scene document");
        break;
    }
  }
  return notes;
}

namespace {

bool stored_kind(scene::ParamKind k) {
  using K = scene::ParamKind;
  return k == K::control_force || k == K::spring_activation || k == K::tet_activation || k == K::actuator_control ||
         k == K::policy;
}

}  // namespace

int store_values(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta, scene::Task& task) {
  int stored = 0;
  for (const ParamBlock& b : blocks) {
    if (!stored_kind(b.kind) || b.offset + b.count > int(theta.size())) continue;
    scene::ParamValues* v = nullptr;
    for (auto& x : task.values)
      if (x.kind == b.kind && x.object == b.object) v = &x;
    if (!v) {
      task.values.push_back({b.kind, b.object, {}});
      v = &task.values.back();
    }
    v->values.assign(theta.begin() + b.offset, theta.begin() + b.offset + b.count);
    ++stored;
  }
  return stored;
}

template <class S>
std::vector<std::string> restore_values(const std::vector<ParamBlock>& blocks, const scene::Task& task,
                                        std::vector<S>& theta) {
  std::vector<std::string> notes;
  for (const scene::ParamValues& v : task.values) {
    const ParamBlock* b = nullptr;
    for (const ParamBlock& x : blocks)
      if (x.kind == v.kind && x.object == v.object) b = &x;
    const std::string name = std::string(scene::to_string(v.kind)) + (v.object.empty() ? "" : "[" + v.object + "]");
    if (!b) {
      notes.push_back(name + ": stored values for a parameter the task does not optimize; not used");
      continue;
    }
    if (int(v.values.size()) != b->count || b->offset + b->count > int(theta.size())) {
      notes.push_back(name + ": " + std::to_string(v.values.size()) + " stored values for " + std::to_string(b->count) +
                      " entries (horizon or layers changed); not used");
      continue;
    }
    for (int i = 0; i < b->count; ++i) theta[size_t(b->offset + i)] = S(v.values[size_t(i)]);
  }
  return notes;
}

template std::vector<std::string> restore_values(const std::vector<ParamBlock>&, const scene::Task&,
                                                 std::vector<float>&);
template std::vector<std::string> restore_values(const std::vector<ParamBlock>&, const scene::Task&,
                                                 std::vector<double>&);

}  // namespace adj::optim

namespace adj::optim {

namespace {

// the body's initial coordinates (velocity: dofs), created at rest with `count` entries
std::vector<double>& initial_of(scene::RobotObject& robot, const std::string& body, bool velocity, int count) {
  scene::RobotInitial* in = nullptr;
  for (auto& i : robot.initial)
    if (i.body == body) in = &i;
  if (!in) {
    robot.initial.push_back({body, {}, {}});
    in = &robot.initial.back();
  }
  std::vector<double>& v = velocity ? in->qd : in->q;
  if (int(v.size()) != count) {
    // a joint's rest coordinates: zeros, and identity quaternions (w first) for ball and free joints
    v.assign(size_t(count), 0.0);
    if (!velocity && count == 4) v[0] = 1.0;
    if (!velocity && count == 7) v[3] = 1.0;
  }
  return v;
}

}  // namespace

std::vector<std::string> write_back_robot(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                          const scene::CompiledScene& cs, scene::Scene& doc) {
  std::vector<std::string> notes;
  const RigidModel& m = cs.model.rigid;
  using K = scene::ParamKind;
  for (const ParamBlock& b : blocks) {
    if (b.offset + b.count > int(theta.size())) {
      notes.push_back("parameters do not match their blocks: nothing written");
      break;
    }
    auto entry = [&](int e) { return double(theta[size_t(b.offset + e * b.width)]); };
    if (b.kind == K::contact_ke || b.kind == K::contact_kd || b.kind == K::contact_mu) {
      auto& c = doc.settings.robot_contact;
      (b.kind == K::contact_ke ? c.ke : b.kind == K::contact_kd ? c.kd : c.mu) = entry(0);
      continue;
    }
    if (b.kind == K::actuator_control || b.kind == K::policy) continue;  // the task keeps them (store_values)
    const scene::ObjectRange* r = cs.find(b.object);
    scene::Object* obj = nullptr;
    for (auto& o : doc.objects)
      if (o.name == b.object) obj = &o;
    if (!r || !obj || obj->kind != scene::ObjectKind::robot) {
      notes.push_back(std::string(scene::to_string(b.kind)) + "[" + b.object + "]: no such robot in the scene");
      continue;
    }
    scene::RobotObject& rb = obj->robot;
    const bool urdf = !rb.urdf.empty();
    switch (b.kind) {
      case K::joint_q:
        for (int e = 0; e < b.elements; ++e) {
          const int q = b.index[size_t(e)];
          for (int j = r->body_begin; j < r->body_end; ++j) {
            // a fixed joint has no coordinates: its start is the next joint's
            const int nq = m.joint_q_start[size_t(j) + 1] - m.joint_q_start[size_t(j)];
            if (nq > 0 && m.joint_q_start[size_t(j)] == q)
              initial_of(rb, m.body_name[size_t(j)], false, nq)[0] = entry(e);
          }
        }
        break;
      case K::joint_qd:
        for (int e = 0; e < b.elements; ++e) {
          const int d = b.index[size_t(e)];
          const int j = m.dof_joint[size_t(d)];
          const int nv = m.joint_dof_start[size_t(j) + 1] - m.joint_dof_start[size_t(j)];
          initial_of(rb, m.body_name[size_t(j)], true, nv)[size_t(d - m.joint_dof_start[size_t(j)])] = entry(e);
        }
        break;
      case K::actuator_kp:
      case K::actuator_kd: {
        const bool kp = b.kind == K::actuator_kp;
        // a URDF robot's default actuators come first, then its listed ones
        const int defaults = (r->actuator_end - r->actuator_begin) - int(rb.actuators.size());
        double sum = 0, lo = 1e300, hi = -1e300;
        int shared = 0;
        for (int e = 0; e < b.elements; ++e) {
          const int local = b.index[size_t(e)] - r->actuator_begin;
          if (local >= defaults && local - defaults < int(rb.actuators.size())) {
            scene::RobotActuator& a = rb.actuators[size_t(local - defaults)];
            (kp ? a.kp : a.kd) = entry(e);
          } else if (local >= 0 && local < defaults) {
            sum += entry(e), lo = std::min(lo, entry(e)), hi = std::max(hi, entry(e));
            ++shared;
          }
        }
        if (shared > 0) {
          (kp ? rb.default_actuator.kp : rb.default_actuator.kd) = sum / shared;
          if (hi > lo)
            notes.push_back(b.object + ": the default actuators share one " + (kp ? "kp" : "kd") +
                            "; their optimized values (" + std::to_string(lo) + " .. " + std::to_string(hi) +
                            ") are saved as their mean");
        }
        break;
      }
      case K::joint_damping:
      case K::joint_armature: {
        const bool damping = b.kind == K::joint_damping;
        if (urdf) {
          notes.push_back(b.object + ": joint " + (damping ? "damping" : "armature") + " of a " +
                          (rb.mjcf ? "MJCF" : "URDF") + " robot lives in its file (" + rb.urdf + "); not written");
          break;
        }
        // a listed body's joint has one value for all its dofs: their mean
        for (int j = r->body_begin; j < r->body_end; ++j) {
          const int local = j - r->body_begin, d0 = m.joint_dof_start[size_t(j)], d1 = m.joint_dof_start[size_t(j) + 1];
          if (local >= int(rb.bodies.size())) break;
          double sum = 0;
          int n = 0;
          for (int e = 0; e < b.elements; ++e)
            if (b.index[size_t(e)] >= d0 && b.index[size_t(e)] < d1) sum += entry(e), ++n;
          if (n > 0) (damping ? rb.bodies[size_t(local)].damping : rb.bodies[size_t(local)].armature) = sum / n;
        }
        break;
      }
      case K::body_mass:
        if (urdf) {
          notes.push_back(b.object + ": body masses of a URDF robot live in its file (" + rb.urdf + "); not written");
          break;
        }
        for (int e = 0; e < b.elements; ++e) {
          const int j = b.index[size_t(e)];
          const int local = j - r->body_begin;
          if (local < 0 || local >= int(rb.bodies.size())) continue;
          scene::RobotBody& body = rb.bodies[size_t(local)];
          const double old = double(m.body_mass[size_t(j)]), now = entry(e);
          if (!(old > 0)) continue;
          const double scale = now / old;
          if (body.mass > 0) {  // given mass: inertia scales with it, as the optimizer scaled it
            body.mass = now;
            for (double& i : body.inertia) i *= scale;
          } else {
            for (scene::RobotShape& s : body.shapes) s.density *= scale;
          }
        }
        break;
      default:
        notes.push_back(std::string(scene::to_string(b.kind)) + "[" + b.object + "]: not a robot parameter");
        break;
    }
  }
  return notes;
}

std::vector<std::string> write_back_task(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                         const scene::CompiledScene& compiled, const scene::Task& task,
                                         scene::Scene& doc) {
  const bool robot_task = is_robot_task(compiled, task);
  std::vector<ParamBlock> robot, particles;
  for (const ParamBlock& b : blocks) {
    const scene::ObjectRange* r = compiled.find(b.object);
    const bool robot_side = r ? r->kind == scene::ObjectKind::robot : robot_task;
    (robot_side ? robot : particles).push_back(b);
  }
  std::vector<std::string> notes = write_back(particles, theta, compiled, doc);
  for (std::string& n : write_back_robot(robot, theta, compiled, doc)) notes.push_back(std::move(n));
  return notes;
}

}  // namespace adj::optim
