#include "engine/optim/write_back.h"

#include "engine/optim/parameters.h"

#include <algorithm>

namespace adj::optim {

namespace {

using namespace adj::scene;  // the field table's doc column names the document's types

// the writers the doc column of engine/model/field_table.h names: each puts one block of
// model-field values into the document, with a note where the document holds less
struct DocWriter {
  const ParamBlock& b;
  const std::vector<float>& theta;
  const CompiledScene& cs;
  Scene& doc;
  std::vector<std::string>& notes;
  const ObjectRange* range = nullptr;
  Object* obj = nullptr;

  double entry(int e, int c = 0) const { return double(theta[size_t(b.offset + e * b.width + c)]); }
  std::string name() const { return std::string(to_string(b.kind)) + (b.object.empty() ? "" : "[" + b.object + "]"); }
  bool is(ObjectKind k) const { return obj && range && obj->kind == k; }
  // the entries' mean, with a note when one document value stands for differing ones
  double mean(const char* holder) {
    double sum = 0, lo = 1e300, hi = -1e300;
    for (int e = 0; e < b.elements; ++e) sum += entry(e), lo = std::min(lo, entry(e)), hi = std::max(hi, entry(e));
    if (hi > lo)
      notes.push_back(name() + ": " + holder + " holds one value; the optimized ones (" + std::to_string(lo) + " .. " +
                      std::to_string(hi) + ") are saved as their mean");
    return b.elements > 0 ? sum / b.elements : 0.0;
  }
  void missing() { notes.push_back(name() + ": not part of the scene document for this object"); }

  // per spring of a particles object
  void springs(double Spring::*field) {
    if (!is(ObjectKind::particles)) return missing();
    for (int e = 0; e < b.elements; ++e) {
      int local = b.index[size_t(e)] - range->spring_begin;
      if (local >= 0 && local < int(obj->particles.springs.size()))
        obj->particles.springs[size_t(local)].*field = entry(e);
    }
  }
  // a cloth's material (one value per object)
  void cloth(double ClothMaterialSpec::*field) {
    if (!is(ObjectKind::cloth)) return missing();
    obj->cloth.material.*field = mean("the cloth's material");
  }
  // scene-wide in the model, per cloth in the document: every cloth's material
  void every_cloth(double ClothMaterialSpec::*field) {
    const double v = entry(0);
    for (Object& o : doc.objects)
      if (o.kind == ObjectKind::cloth) o.cloth.material.*field = v;
    if (!(v > 0))
      notes.push_back(name() + ": " + std::to_string(v) + " is saved, but a scene reads values <= 0 as off");
  }
  void soft(double SoftMaterialSpec::*field) {
    if (!is(ObjectKind::soft)) return missing();
    obj->soft.material.*field = mean("the soft body's material");
  }
  // particles: per particle; cloth: its particle_mass; soft: its density, scaled by the mean ratio
  void particle_masses() {
    if (is(ObjectKind::particles)) {
      for (int e = 0; e < b.elements; ++e) {
        int local = b.index[size_t(e)] - range->particle_begin;
        if (local >= 0 && local < int(obj->particles.particles.size()))
          obj->particles.particles[size_t(local)].mass = entry(e);
      }
    } else if (is(ObjectKind::cloth)) {
      obj->cloth.particle_mass = mean("the cloth's particle_mass");
    } else if (is(ObjectKind::soft)) {
      double ratio = 0;
      for (int e = 0; e < b.elements; ++e)
        ratio += entry(e) / double(cs.model.particle_mass[size_t(b.index[size_t(e)])]);
      obj->soft.material.density *= b.elements > 0 ? ratio / b.elements : 1.0;
      notes.push_back(name() + ": saved as the density, scaled by the masses' mean ratio");
    } else {
      missing();
    }
  }
  void gravity() { doc.settings.gravity = {entry(0, 0), entry(0, 1), entry(0, 2)}; }
  void contact(double ContactSettings::*field) { doc.settings.contact.*field = entry(0); }
  void robot_contact(double RobotContactSettings::*field) { doc.settings.robot_contact.*field = entry(0); }
  void body_masses();
  void actuator_gains(double RobotActuator::*field);
  void joint_dofs(double RobotBody::*field);
};

// a per-dof value of the listed bodies' joints (damping, armature): the mean over each joint's
// dofs; a URDF robot's joints live in its file (a note)
void DocWriter::joint_dofs(double RobotBody::*field) {
  if (!is(ObjectKind::robot)) return missing();
  RobotObject& rb = obj->robot;
  if (!rb.urdf.empty()) {
    notes.push_back(name() + ": the joints of a URDF robot live in its file (" + rb.urdf + "); not written");
    return;
  }
  const RigidModel& m = cs.model.rigid;
  for (int j = range->body_begin; j < range->body_end; ++j) {
    const int local = j - range->body_begin;
    double sum = 0;
    int count = 0;
    for (int e = 0; e < b.elements; ++e)
      if (m.dof_joint[size_t(b.index[size_t(e)])] == j) sum += entry(e), ++count;
    if (count > 0 && local < int(rb.bodies.size())) rb.bodies[size_t(local)].*field = sum / count;
  }
}

// listed bodies: the given mass (inertia scaled with it) or the shapes' densities scaled to it
void DocWriter::body_masses() {
  if (!is(ObjectKind::robot)) return missing();
  RobotObject& rb = obj->robot;
  if (!rb.urdf.empty()) {
    notes.push_back(b.object + ": body masses of a URDF robot live in its file (" + rb.urdf + "); not written");
    return;
  }
  for (int e = 0; e < b.elements; ++e) {
    const int j = b.index[size_t(e)];
    const int local = j - range->body_begin;
    if (local < 0 || local >= int(rb.bodies.size())) continue;
    RobotBody& body = rb.bodies[size_t(local)];
    const double old = double(cs.model.rigid.body_mass[size_t(j)]), now = entry(e);
    if (!(old > 0)) continue;
    const double scale = now / old;
    if (body.mass > 0) {  // given mass: inertia scales with it, as the optimizer scaled it
      body.mass = now;
      for (double& i : body.inertia) i *= scale;
    } else {
      for (RobotShape& s : body.shapes) s.density *= scale;
    }
  }
}

// listed actuators; a URDF robot's default actuators (first) share one default_actuator, which
// gets their mean (a note says so when they differ)
void DocWriter::actuator_gains(double RobotActuator::*field) {
  if (!is(ObjectKind::robot)) return missing();
  RobotObject& rb = obj->robot;
  const int defaults = (range->actuator_end - range->actuator_begin) - int(rb.actuators.size());
  double sum = 0, lo = 1e300, hi = -1e300;
  int shared = 0;
  for (int e = 0; e < b.elements; ++e) {
    const int local = b.index[size_t(e)] - range->actuator_begin;
    if (local >= defaults && local - defaults < int(rb.actuators.size())) {
      rb.actuators[size_t(local - defaults)].*field = entry(e);
    } else if (local >= 0 && local < defaults) {
      sum += entry(e), lo = std::min(lo, entry(e)), hi = std::max(hi, entry(e));
      ++shared;
    }
  }
  if (shared == 0) return;
  rb.default_actuator.*field = sum / shared;
  const char* gain = field == &RobotActuator::kp ? "kp" : "kd";
  if (hi > lo)
    notes.push_back(b.object + ": the default actuators share one " + gain + "; their optimized values (" +
                    std::to_string(lo) + " .. " + std::to_string(hi) + ") are saved as their mean");
}

// a model-field block through its row's writer
void write_field(const ParamBlock& b, const std::vector<float>& theta, const CompiledScene& cs, Scene& doc,
                 std::vector<std::string>& notes) {
  DocWriter w{b, theta, cs, doc, notes};
  w.range = cs.find(b.object);
  for (Object& o : doc.objects)
    if (o.name == b.object) w.obj = &o;
  switch (b.field->field) {
#define ADJ_X(decl, kind, field, side, domain, slots, width, select, model, grad, doc, ...) \
  case Field::field:                                                                        \
    w.doc;                                                                                  \
    break;
    ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  }
}

bool fits(const ParamBlock& b, const std::vector<float>& theta, std::vector<std::string>& notes) {
  if (b.offset + b.count <= int(theta.size())) return true;
  notes.push_back("parameters do not match their blocks: nothing written");
  return false;
}

}  // namespace

std::vector<std::string> write_back(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                    const scene::CompiledScene& cs, scene::Scene& doc) {
  std::vector<std::string> notes;
  for (const ParamBlock& b : blocks) {
    if (!fits(b, theta, notes)) break;
    if (b.field) {
      write_field(b, theta, cs, doc, notes);
      continue;
    }
    const scene::ObjectRange* range = cs.find(b.object);
    scene::Object* obj = nullptr;
    for (auto& o : doc.objects)
      if (o.name == b.object) obj = &o;
    auto entry = [&](int e, int c) { return double(theta[b.offset + e * b.width + c]); };
    using K = scene::ParamKind;
    switch (b.kind) {
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
    // per-frame values, with knots too (the frames between them interpolated)
    std::vector<float> frames(std::size_t(frame_block(b).count));
    knots_to_frames(b, theta.data() + b.offset, frames.data());
    v->values.assign(frames.begin(), frames.end());
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
    // stored values are per frame; knots start at the values on their frames
    const int frames = frame_block(*b).count;
    if (int(v.values.size()) != frames || b->offset + b->count > int(theta.size())) {
      notes.push_back(name + ": " + std::to_string(v.values.size()) + " stored values for " + std::to_string(frames) +
                      " entries (horizon or layers changed); not used");
      continue;
    }
    const std::vector<S> stored(v.values.begin(), v.values.end());
    sample_knots(*b, stored.data(), theta.data() + b->offset);
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
    if (!fits(b, theta, notes)) break;
    if (b.field) {
      write_field(b, theta, cs, doc, notes);
      continue;
    }
    auto entry = [&](int e) { return double(theta[size_t(b.offset + e * b.width)]); };
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
      default:
        notes.push_back(std::string(scene::to_string(b.kind)) + "[" + b.object + "]: not a robot parameter");
        break;
    }
  }
  return notes;
}

std::vector<std::string> write_back_task(const std::vector<ParamBlock>& blocks, const std::vector<float>& theta,
                                         const scene::CompiledScene& compiled, scene::Scene& doc) {
  // each block to the side it acts on: its object's, or for a scene-wide model field (contact,
  // gravity) the side of the field the task's parameters bound it to
  std::vector<ParamBlock> robot, particles;
  for (const ParamBlock& b : blocks) {
    const scene::ObjectRange* r = compiled.find(b.object);
    const bool robot_side = r ? r->kind == scene::ObjectKind::robot : b.field && b.field->side == FieldSide::robot;
    (robot_side ? robot : particles).push_back(b);
  }
  std::vector<std::string> notes = write_back(particles, theta, compiled, doc);
  for (std::string& n : write_back_robot(robot, theta, compiled, doc)) notes.push_back(std::move(n));
  return notes;
}

}  // namespace adj::optim
