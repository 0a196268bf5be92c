#include "engine/optim/parameters.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <limits>
#include <tuple>

namespace adj::optim {

Status element_bounds(const scene::ParamSpec& spec, const std::vector<std::string>& names, const std::string& where,
                      ParamBlock& b) {
  for (auto [key, list, out] :
       {std::tuple{"lower", &spec.lower_each, &b.lower_each}, std::tuple{"upper", &spec.upper_each, &b.upper_each}}) {
    if (list->empty()) continue;
    if (int(list->size()) != b.elements) {
      std::string which;
      for (size_t i = 0; i < names.size() && i < 8; ++i) which += (i ? ", " : ": ") + names[i];
      if (names.size() > 8) which += ", ...";
      return Status::error(where + ": \"" + key + "\" lists " + std::to_string(list->size()) +
                           " bounds for the block's " + std::to_string(b.elements) + " elements (one each" + which +
                           ")");
    }
    *out = *list;
  }
  return Status::ok();
}

using scene::ParamKind;

Status block_frames(const scene::ParamSpec& spec, bool per_frame, int horizon, const std::string& where,
                    ParamBlock& b) {
  b.frames = per_frame ? horizon : 1;
  b.knots = spec.knots;
  b.steps = b.knots > 0 ? b.knots : b.frames;
  if (b.knots == 0) return Status::ok();
  if (!per_frame)
    return Status::error(where +
                         ": \"knots\" is for per-frame parameters (control_force, spring_activation, "
                         "tet_activation, actuator_control); this one has one value for the whole run");
  if (b.knots < 2 || b.knots > horizon)
    return Status::error(where + ": \"knots\" must be 2 .. " + std::to_string(horizon) +
                         " (the horizon: knots sit on the first and the last frame, at most one a frame), got " +
                         std::to_string(b.knots));
  return Status::ok();
}

int knot_frame(int k, int knots, int frames) {
  assert(knots >= 2 && knots <= frames && k >= 0 && k < knots && "knot outside the block");
  // round(k (frames - 1) / (knots - 1)) in integers: halves round up
  const long long num = 2LL * k * (frames - 1) + (knots - 1), den = 2LL * (knots - 1);
  return int(num / den);
}

ParamBlock frame_block(const ParamBlock& b) {
  ParamBlock f = b;
  if (b.knots == 0) return f;
  f.knots = 0;
  f.steps = b.frames;
  f.count = b.frames * b.elements * b.width;
  return f;
}

namespace {

// each frame t of a knotted block as (knot k, weight w): t = (1 - w) knot k + w knot k + 1
template <class Fn>
void for_each_frame(const ParamBlock& b, Fn&& fn) {
  for (int k = 0; k + 1 < b.knots; ++k) {
    const int f0 = knot_frame(k, b.knots, b.frames), f1 = knot_frame(k + 1, b.knots, b.frames);
    const int end = k + 2 == b.knots ? f1 + 1 : f1;  // the last segment holds the last frame
    for (int t = f0; t < end; ++t) fn(t, k, double(t - f0) / double(f1 - f0));
  }
}

}  // namespace

template <class S>
void knots_to_frames(const ParamBlock& b, const S* x, S* frames) {
  const int n = b.elements * b.width;  // entries a frame (a knot)
  if (b.knots == 0) {
    std::copy(x, x + b.count, frames);
    return;
  }
  for_each_frame(b, [&](int t, int k, double w) {
    const S* a = x + k * n;
    for (int i = 0; i < n; ++i) frames[t * n + i] = (S(1) - S(w)) * a[i] + S(w) * a[n + i];
  });
}

template <class S>
void frames_to_knots_grad(const ParamBlock& b, const S* frames, S* g) {
  const int n = b.elements * b.width;
  if (b.knots == 0) {
    std::copy(frames, frames + b.count, g);
    return;
  }
  std::fill(g, g + b.count, S(0));
  for_each_frame(b, [&](int t, int k, double w) {
    S* a = g + k * n;
    for (int i = 0; i < n; ++i) {
      a[i] += (S(1) - S(w)) * frames[t * n + i];
      a[n + i] += S(w) * frames[t * n + i];
    }
  });
}

template <class S>
void sample_knots(const ParamBlock& b, const S* frames, S* x) {
  const int n = b.elements * b.width;
  if (b.knots == 0) {
    std::copy(frames, frames + b.count, x);
    return;
  }
  for (int k = 0; k < b.knots; ++k) {
    const S* f = frames + knot_frame(k, b.knots, b.frames) * n;
    std::copy(f, f + n, x + k * n);
  }
}

#define ADJ_KNOTS(S)                                                   \
  template void knots_to_frames(const ParamBlock&, const S*, S*);      \
  template void frames_to_knots_grad(const ParamBlock&, const S*, S*); \
  template void sample_knots(const ParamBlock&, const S*, S*);
ADJ_KNOTS(float)
ADJ_KNOTS(double)
#undef ADJ_KNOTS

std::pair<int, int> domain_range(const scene::ObjectRange& r, FieldDomain d) {
  switch (d) {
    case FieldDomain::particle:
      return {r.particle_begin, r.particle_end};
    case FieldDomain::spring:
      return {r.spring_begin, r.spring_end};
    case FieldDomain::triangle:
      return {r.tri_begin, r.tri_end};
    case FieldDomain::edge:
      return {r.edge_begin, r.edge_end};
    case FieldDomain::tet:
      return {r.tet_begin, r.tet_end};
    case FieldDomain::body:
      return {r.body_begin, r.body_end};
    case FieldDomain::dof:
      return {r.dof_begin, r.dof_end};
    case FieldDomain::actuator:
      return {r.actuator_begin, r.actuator_end};
    case FieldDomain::scene:
      return {0, 1};
  }
  return {0, 0};
}

namespace {

std::vector<int> iota(int begin, int end) {
  std::vector<int> v;
  for (int i = begin; i < end; ++i) v.push_back(i);
  return v;
}

// the elements of [begin, end) a block of field f covers
template <class S>
std::vector<int> select_elements(const FieldInfo& f, const ModelT<S>& m, int begin, int end) {
  std::vector<int> v;
  const FieldRef<S> value = model_field(m, f.field);
  for (int i = begin; i < end; ++i) {
    if (f.select == FieldSelect::positive && !(value.at(i, 0) > S(0))) continue;
    if (f.select == FieldSelect::pd && m.rigid.actuator_type[i] != RIGID_ACTUATOR_PD) continue;
    v.push_back(i);
  }
  return v;
}

}  // namespace

// a block of a model field: its elements (and the bounds' default); errors say what is missing
template <class S>
Status field_block(const FieldInfo& f, const ModelT<S>& m, const scene::ObjectRange* obj, const std::string& where,
                   ParamBlock& b) {
  b.field = &f;
  b.width = f.width;
  if (f.select == FieldSelect::positive && b.lower == -std::numeric_limits<double>::infinity())
    b.lower = 1e-6;  // masses stay positive
  if (f.select == FieldSelect::nonneg && b.lower == -std::numeric_limits<double>::infinity())
    b.lower = 0;  // no negative damping or inertia
  if (f.domain == FieldDomain::scene) {
    b.index = {0};
    return Status::ok();
  }
  auto [begin, end] = domain_range(*obj, f.domain);
  if (end <= begin) return Status::error(where + ": the object has no " + domain_name(f.domain));
  if (end > domain_count(m, f.domain))
    return Status::error(where + ": the object's range lies outside the model (compile bug)");
  b.index = select_elements(f, m, begin, end);
  if (b.index.empty()) return Status::error(where + ": the object has no " + domain_name(f.domain) + " it covers");
  b.first_local = b.index[0] - begin;
  return Status::ok();
}

template Status field_block(const FieldInfo&, const ModelT<float>&, const scene::ObjectRange*, const std::string&,
                            ParamBlock&);
template Status field_block(const FieldInfo&, const ModelT<double>&, const scene::ObjectRange*, const std::string&,
                            ParamBlock&);

namespace {

// a model field's block: its elements; masses and inertia scale together
template <class S>
Status create_field(const ParamBuildT<S>& b, ParamBlock& block) {
  return field_block(*block.field, b.cs.model, b.object, b.where, block);
}

// a scene has one gravity: the particles' (ModelT::gravity) and the bodies' (its rigid model's,
// which also stands alone as an imported robot's model) are the same vector, so a gravity block
// of either side writes both and its gradient is the sum of both sides'
bool is_gravity(const FieldInfo* f) { return f && (f->field == Field::gravity || f->field == Field::robot_gravity); }

template <class S>
void initial_field(const scene::CompiledSceneT<S>& cs, const ParamBlock& b, S* x) {
  const FieldRef<S> f = model_field(cs.model, b.field->field);
  for (int e = 0; e < b.elements; ++e)
    for (int c = 0; c < b.width; ++c) x[b.width * e + c] = f.at(b.index[e], c);
}

template <class S>
void apply_field(const ParamBlock& b, const S* x, const ParamTargetT<S>& to) {
  if (is_gravity(b.field)) {
    to.model.gravity = to.model.rigid.gravity = vec3<S>(x[0], x[1], x[2]);
    return;
  }
  const FieldRef<S> f = model_field(to.model, b.field->field);
  for (int e = 0; e < b.elements; ++e) {
    const int i = b.index[e];
    for (int c = 0; c < b.width; ++c) f.at(i, c) = x[b.width * e + c];
    if (b.field->field == Field::body_mass) {
      // inertia scales with the mass (fixed geometry), as the solver's gradient assumes
      S scale = x[b.width * e] / to.base_mass[i];
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) to.model.rigid.body_inertia[i].m[r][c] = to.base_inertia[i].m[r][c] * scale;
    }
  }
}

// a field the rollout kept no gradient of (the bodies' fields without body_param_grads) reads 0
template <class S>
void gather_field(const ParamBlock& b, const ParamGradsT<S>& from, S* g) {
  if (is_gravity(b.field)) {
    for (int c = 0; c < 3; ++c) g[c] = from.model.gravity[c] + from.model.rigid.gravity[c];
    return;
  }
  const FieldRef<S> f = grad_field(from.model, b.field->field);
  for (int e = 0; e < b.elements; ++e)
    for (int c = 0; c < b.width; ++c) g[b.width * e + c] = f.count > b.index[e] ? f.at(b.index[e], c) : S(0);
}

// the particles' initial state and per-frame inputs: elements of [begin, end) of the object's
// particles, actuated springs or tets
template <class S>
Status check_range(const ParamBuildT<S>& b, ParamBlock& block, int model_count, int object_begin) {
  for (int i : block.index)
    if (i >= model_count) return Status::error(b.where + ": the object's range lies outside the model (compile bug)");
  block.first_local = block.index[0] - object_begin;
  return Status::ok();
}

template <class S>
Status create_particles(const ParamBuildT<S>& b, ParamBlock& block) {
  const scene::ObjectRange& o = *b.object;
  if (o.particle_end <= o.particle_begin) return Status::error(b.where + ": the object has no particles");
  block.index = iota(o.particle_begin, o.particle_end);
  block.width = 3;
  return check_range(b, block, b.cs.model.particle_count(), o.particle_begin);
}

template <class S>
Status create_springs(const ParamBuildT<S>& b, ParamBlock& block) {
  const scene::ObjectRange& o = *b.object;
  for (int s : b.cs.actuated_springs)
    if (s >= o.spring_begin && s < o.spring_end) block.index.push_back(s);
  if (block.index.empty()) return Status::error(b.where + ": the object has no actuated springs");
  return check_range(b, block, b.cs.model.spring_count(), o.spring_begin);
}

template <class S>
Status create_tets(const ParamBuildT<S>& b, ParamBlock& block) {
  const scene::ObjectRange& o = *b.object;
  if (o.tet_end <= o.tet_begin) return Status::error(b.where + ": the object has no tetrahedra");
  block.index = iota(o.tet_begin, o.tet_end);
  return check_range(b, block, b.cs.model.tet_count(), o.tet_begin);
}

template <class S>
Status create_policy(const ParamBuildT<S>& b, ParamBlock& block) {
  if (b.policy_size <= 0) return Status::error(b.where + ": the task has no policy (set has_policy and its layers)");
  block.index = iota(0, b.policy_size);
  if (b.object) block.first_local = -b.object->particle_begin;
  return Status::ok();
}

template <class S, bool velocity>
void initial_particles(const scene::CompiledSceneT<S>& cs, const ParamBlock& b, S* x) {
  const Array<vec3<S>>& v = velocity ? cs.model.particle_qd : cs.model.particle_q;
  for (int e = 0; e < b.elements; ++e)
    for (int c = 0; c < 3; ++c) x[3 * e + c] = v[b.index[e]][c];
}
template <class S, bool velocity>
void apply_particles(const ParamBlock& b, const S* x, const ParamTargetT<S>& to) {
  Array<vec3<S>>& v = velocity ? to.init.particle_qd : to.init.particle_q;
  for (int e = 0; e < b.elements; ++e) v[b.index[e]] = {x[3 * e], x[3 * e + 1], x[3 * e + 2]};
}
template <class S, bool velocity>
void gather_particles(const ParamBlock& b, const ParamGradsT<S>& from, S* g) {
  const Array<vec3<S>>& v = velocity ? from.initial.particle_qd : from.initial.particle_q;
  for (int e = 0; e < b.elements; ++e) {
    const vec3<S>& a = v[b.index[e]];
    g[3 * e] = a.x, g[3 * e + 1] = a.y, g[3 * e + 2] = a.z;
  }
}

template <class S>
void apply_force(const ParamBlock& b, const S* x, const ParamTargetT<S>& to) {
  for (int t = 0; t < b.steps; ++t)
    for (int e = 0; e < b.elements; ++e) {
      const S* v = x + (t * b.elements + e) * 3;
      to.controls[t].particle_f[b.index[e]] = {v[0], v[1], v[2]};
    }
}
template <class S>
void gather_force(const ParamBlock& b, const ParamGradsT<S>& from, S* g) {
  for (int t = 0; t < b.steps; ++t)
    for (int e = 0; e < b.elements; ++e) {
      const vec3<S>& a = from.controls[t].particle_f[b.index[e]];
      S* v = g + (t * b.elements + e) * 3;
      v[0] = a.x, v[1] = a.y, v[2] = a.z;
    }
}

// per-frame activations of springs (tets: false) or tets
template <class S, bool tets>
void apply_activation(const ParamBlock& b, const S* x, const ParamTargetT<S>& to) {
  for (int t = 0; t < b.steps; ++t)
    for (int e = 0; e < b.elements; ++e)
      (tets ? to.controls[t].tet_act : to.controls[t].spring_act)[b.index[e]] = x[t * b.elements + e];
}
template <class S, bool tets>
void gather_activation(const ParamBlock& b, const ParamGradsT<S>& from, S* g) {
  for (int t = 0; t < b.steps; ++t)
    for (int e = 0; e < b.elements; ++e)
      g[t * b.elements + e] = (tets ? from.controls[t].tet_act : from.controls[t].spring_act)[b.index[e]];
}

}  // namespace

template <class S>
std::vector<ParamRowT<S>> field_param_rows(FieldSide side) {
  std::vector<ParamRowT<S>> rows;
  const TermSide term_side = side == FieldSide::robot ? TermSide::bodies : TermSide::particles;
#define ADJ_X(decl, kind, field, fside, ...)                                                           \
  if (FieldSide::fside == side)                                                                        \
    rows.push_back({ParamKind::kind, term_side, &k_fields[int(Field::field)], false, &create_field<S>, \
                    &initial_field<S>, &apply_field<S>, &gather_field<S>});
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  return rows;
}

template <class S>
const std::vector<ParamRowT<S>>& particle_param_rows() {
  static const std::vector<ParamRowT<S>> rows = [] {
    const TermSide p = TermSide::particles;
    std::vector<ParamRowT<S>> r = {
        {ParamKind::initial_position, p, nullptr, false, &create_particles<S>, &initial_particles<S, false>,
         &apply_particles<S, false>, &gather_particles<S, false>},
        {ParamKind::initial_velocity, p, nullptr, false, &create_particles<S>, &initial_particles<S, true>,
         &apply_particles<S, true>, &gather_particles<S, true>},
        {ParamKind::control_force, p, nullptr, true, &create_particles<S>, nullptr, &apply_force<S>, &gather_force<S>},
        {ParamKind::spring_activation, p, nullptr, true, &create_springs<S>, nullptr, &apply_activation<S, false>,
         &gather_activation<S, false>},
        {ParamKind::tet_activation, p, nullptr, true, &create_tets<S>, nullptr, &apply_activation<S, true>,
         &gather_activation<S, true>},
        {ParamKind::policy, p, nullptr, false, &create_policy<S>, nullptr, nullptr, nullptr},
    };
    for (const ParamRowT<S>& f : field_param_rows<S>(FieldSide::particles)) r.push_back(f);
    return r;
  }();
  return rows;
}

template <class S>
const ParamRowT<S>* param_row(scene::ParamKind kind, TermSide side) {
  for (const ParamRowT<S>& r : side == TermSide::bodies ? body_param_rows<S>() : particle_param_rows<S>())
    if (r.kind == kind) return &r;
  return nullptr;
}

namespace {

// a block's row
template <class S>
const ParamRowT<S>& row_of(const ParamBlock& b) {
  return (b.side == TermSide::bodies ? body_param_rows<S>() : particle_param_rows<S>())[std::size_t(b.row)];
}

// the index of a row in its side's table
template <class S>
int row_index(const ParamRowT<S>& r) {
  const std::vector<ParamRowT<S>>& rows = r.side == TermSide::bodies ? body_param_rows<S>() : particle_param_rows<S>();
  return int(&r - rows.data());
}

}  // namespace

template <class S>
Result<ParametersT<S>> ParametersT<S>::create(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                              int policy_size) {
  ParametersT p;
  p.horizon_ = task.horizon;
  const TaskSides sides = split_task(cs, task);
  if (sides.robots)
    if (Status st = p.add_body_blocks(cs, sides.robot, sides.robot.has_policy ? policy_size : 0); !st) return st;
  p.robot_size_ = p.size_;
  // a robot task's particle side, only where it has entries
  if (!sides.robots || !sides.particles.parameters.empty())
    if (Status st = p.add_particle_blocks(cs, sides.particles, sides.particles.has_policy ? policy_size : 0); !st)
      return st;
  for (const ParamBlock& b : p.blocks_)
    if (b.field && b.field->field == Field::body_mass) {
      p.base_mass_ = cs.model.rigid.body_mass;
      p.base_inertia_ = cs.model.rigid.body_inertia;
    }
  return p;
}

template <class S>
Status ParametersT<S>::add_particle_blocks(const scene::CompiledSceneT<S>& cs, const scene::Task& task,
                                           int policy_size) {
  ParametersT& p = *this;
  if (task.horizon < 1)
    return Status::error("task '" + task.name + "': horizon must be at least 1 frame, got " +
                         std::to_string(task.horizon));
  std::vector<scene::ParamSpec> specs = task.parameters;
  bool has_policy_spec =
      std::any_of(specs.begin(), specs.end(), [](const scene::ParamSpec& s) { return s.kind == ParamKind::policy; });
  if (task.has_policy && !has_policy_spec) specs.push_back(scene::ParamSpec{ParamKind::policy, "", -1e30, 1e30});
  for (std::size_t n = 0; n < specs.size(); ++n) {
    const scene::ParamSpec& spec = specs[n];
    std::string where = "task '" + task.name + "': parameters[" + std::to_string(n) + "] (" +
                        scene::to_string(spec.kind) + (spec.object.empty() ? "" : " of '" + spec.object + "'") + ")";
    if (!(spec.lower <= spec.upper)) return Status::error(where + ": lower bound above upper bound");
    const bool scene_wide = scene::is_scene_wide(spec.kind);
    for (const ParamBlock& b : p.blocks_)
      if (b.side == TermSide::particles && b.kind == spec.kind &&
          b.object == (scene_wide ? std::string() : spec.object))
        return Status::error(where + ": listed twice");
    ParamBlock b;
    b.kind = spec.kind;
    b.lower = spec.lower;
    b.upper = spec.upper;
    const scene::ObjectRange* obj = nullptr;
    if (!scene_wide) {
      obj = cs.find(spec.object);
      if (!obj) return Status::error(where + ": no object named '" + spec.object + "'");
      b.object = spec.object;
    }
    const ParamRowT<S>* row = param_row<S>(spec.kind, TermSide::particles);
    if (!row)
      return Status::error(where + ": " + scene::to_string(spec.kind) + " is a robot parameter (name a robot object)");
    b.row = row_index(*row);
    b.field = row->field;
    if (Status st = row->create(ParamBuildT<S>{cs, obj, where, policy_size}, b); !st) return st;
    b.elements = int(b.index.size());
    if (Status st = element_bounds(spec, {}, where, b); !st) return st;
    if (Status st = block_frames(spec, row->per_step, task.horizon, where, b); !st) return st;
    b.offset = p.size_;
    b.count = b.steps * b.elements * b.width;
    p.size_ += b.count;
    p.has_controls_ = p.has_controls_ || row->per_step;
    // gravity also moves the bodies: their parameter gradients are needed
    p.has_body_fields_ = p.has_body_fields_ || (is_gravity(b.field) && cs.model.body_count() > 0);
    p.blocks_.push_back(std::move(b));
  }
  return Status::ok();
}

template <class S>
const ParamBlock* ParametersT<S>::policy_block() const {
  for (const ParamBlock& b : blocks_)
    if (b.kind == ParamKind::policy) return &b;
  return nullptr;
}

template <class S>
std::vector<S> ParametersT<S>::initial(const scene::CompiledSceneT<S>& cs) const {
  std::vector<S> theta(size_, S(0));
  std::vector<S> frames;
  for (const ParamBlock& b : blocks_) {
    const ParamRowT<S>& row = row_of<S>(b);
    if (!row.initial) continue;
    const ParamBlock f = frame_block(b);
    frames.assign(std::size_t(f.count), S(0));
    row.initial(cs, f, frames.data());
    sample_knots(b, frames.data(), theta.data() + b.offset);
  }
  clamp(theta);
  return theta;
}

template <class S>
void ParametersT<S>::clamp(std::vector<S>& theta) const {
  assert(int(theta.size()) == size_ && "theta does not match the parameters");
  for (const ParamBlock& b : blocks_) {
    // comparisons, not min/max: a NaN stays NaN, for the rollout's guard to report
    for (int k = b.offset; k < b.offset + b.count; ++k) {
      const S lo = S(std::max(entry_lower(b, k - b.offset), -1e30));
      const S hi = S(std::min(entry_upper(b, k - b.offset), 1e30));
      if (theta[k] < lo) theta[k] = lo;
      if (theta[k] > hi) theta[k] = hi;
    }
  }
}

template <class S>
void ParametersT<S>::apply(const std::vector<S>& theta, ModelT<S>& m, StateT<S>& init,
                           std::vector<ControlT<S>>& controls) const {
  apply_to(theta, base_mass_, base_inertia_, m, init, controls);
}

template <class S>
void ParametersT<S>::apply(const std::vector<S>& theta, const RigidModelT<S>& base, ModelT<S>& m, StateT<S>& init,
                           std::vector<ControlT<S>>& controls) const {
  apply_to(theta, base.body_mass, base.body_inertia, m, init, controls);
}

template <class S>
void ParametersT<S>::apply_to(const std::vector<S>& theta, const std::vector<S>& base_mass,
                              const std::vector<mat33<S>>& base_inertia, ModelT<S>& m, StateT<S>& init,
                              std::vector<ControlT<S>>& controls) const {
  assert(int(theta.size()) == size_ && "theta does not match the parameters");
  init = m.make_state();
  controls.clear();
  if (has_controls_) controls.assign(horizon_, m.make_control());
  const ParamTargetT<S> to{m, init, controls, base_mass, base_inertia};
  // the one place theta's knots become per-frame inputs
  std::vector<S> frames;
  for (const ParamBlock& b : blocks_) {
    const ParamRowT<S>& row = row_of<S>(b);
    if (!row.apply) continue;
    if (b.knots == 0) {
      row.apply(b, theta.data() + b.offset, to);
      continue;
    }
    const ParamBlock f = frame_block(b);
    frames.resize(std::size_t(f.count));
    knots_to_frames(b, theta.data() + b.offset, frames.data());
    row.apply(f, frames.data(), to);
  }
}

template <class S>
void ParametersT<S>::gather(const StateT<S>& g0, const std::vector<ControlT<S>>& gc, const ModelGradT<S>& gm,
                            std::vector<S>& grad) const {
  grad.assign(size_, S(0));
  const ParamGradsT<S> from{g0, gc, gm};
  std::vector<S> frames;
  for (const ParamBlock& b : blocks_) {
    if (is_control(b.kind)) assert(int(gc.size()) == b.frames && "the rollout kept no control gradients");
    const ParamRowT<S>& row = row_of<S>(b);
    if (!row.gather) continue;
    if (b.knots == 0) {
      row.gather(b, from, grad.data() + b.offset);
      continue;
    }
    // dL/d knot = the interpolation weights times dL/d frame
    const ParamBlock f = frame_block(b);
    frames.assign(std::size_t(f.count), S(0));
    row.gather(f, from, frames.data());
    frames_to_knots_grad(b, frames.data(), grad.data() + b.offset);
  }
}

template <class S>
const ParamBlock& ParametersT<S>::block_of(int i) const {
  assert(i >= 0 && i < size_ && "entry outside theta");
  for (const ParamBlock& b : blocks_)
    if (i < b.offset + b.count) return b;
  return blocks_.back();
}

std::string component_suffix(const ParamBlock& b, int c) {
  if (b.width != 3) return {};
  return {'.', "xyz"[c]};
}

template <class S>
std::string ParametersT<S>::entry_name(int i) const {
  const ParamBlock& b = block_of(i);
  int k = i - b.offset;
  if (b.side == TermSide::bodies) return entry_name_bodies(b, k);
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
  if (b.field && b.field->domain == FieldDomain::scene) return s + component_suffix(b, c);  // "gravity.y"

  if (b.kind == ParamKind::policy) {
    bracket(std::to_string(e));
    return s;
  }
  bracket(b.object);
  if (is_control(b.kind))
    bracket(b.knots > 0 ? "knot " + std::to_string(t) + ", t=" + std::to_string(knot_frame(t, b.knots, b.frames))
                        : "t=" + std::to_string(t));
  // elements are named by their index within the object
  bracket(std::to_string(b.index[e] - (b.index[0] - b.first_local)));
  return s + component_suffix(b, c);
}

template <class S>
bool task_names_robot(const scene::CompiledSceneT<S>& cs, const scene::Task& task) {
  auto robot = [&](const std::string& name) {
    const scene::ObjectRange* r = cs.find(name);
    return r && r->kind == scene::ObjectKind::robot;
  };
  for (const scene::ParamSpec& p : task.parameters)
    if (robot(p.object)) return true;
  for (const scene::LossTerm& l : task.loss)
    if (robot(l.object)) return true;
  return false;
}

// whether the robots have a model field of the kind (the rows are the same for either scalar)
static bool body_field(scene::ParamKind k) {
  const ParamRowT<float>* r = param_row<float>(k, TermSide::bodies);
  return r && r->field;
}

TaskSides split_task_impl(const scene::Task& task, bool robots, bool particles,
                          const std::function<bool(const std::string&)>& is_robot) {
  TaskSides s;
  s.robots = robots;
  s.robot = s.particles = task;
  s.robot.parameters.clear();
  s.robot.loss.clear();
  s.particles.parameters.clear();
  s.particles.loss.clear();
  s.robot.has_policy = task.has_policy && s.robots;
  s.particles.has_policy = task.has_policy && !s.robots;
  // in a scene of robots alone, every entry of a robot task is the robots'
  const bool all = s.robots && !particles;
  auto robot_param = [&](const scene::ParamSpec& p) {
    if (!s.robots) return false;
    if (all || p.object.empty()) return all || p.kind == scene::ParamKind::policy || body_field(p.kind);
    return is_robot(p.object);
  };
  auto robot_term = [&](const scene::LossTerm& l) {
    return s.robots && (all || l.object.empty() || is_robot(l.object));
  };
  for (const scene::ParamSpec& p : task.parameters) (robot_param(p) ? s.robot : s.particles).parameters.push_back(p);
  for (const scene::LossTerm& l : task.loss) (robot_term(l) ? s.robot : s.particles).loss.push_back(l);
  return s;
}

template <class S>
TaskSides split_task(const scene::CompiledSceneT<S>& cs, const scene::Task& task) {
  return split_task_impl(task, task_names_robot(cs, task), cs.has_particles(), [&](const std::string& name) {
    const scene::ObjectRange* r = cs.find(name);
    return r && r->kind == scene::ObjectKind::robot;
  });
}

template const std::vector<ParamRowT<float>>& particle_param_rows();
template const std::vector<ParamRowT<double>>& particle_param_rows();
template const ParamRowT<float>* param_row(scene::ParamKind, TermSide);
template const ParamRowT<double>* param_row(scene::ParamKind, TermSide);
template std::vector<ParamRowT<float>> field_param_rows(FieldSide);
template std::vector<ParamRowT<double>> field_param_rows(FieldSide);
template class ParametersT<float>;
template class ParametersT<double>;
template bool task_names_robot(const scene::CompiledSceneT<float>&, const scene::Task&);
template bool task_names_robot(const scene::CompiledSceneT<double>&, const scene::Task&);
template TaskSides split_task(const scene::CompiledSceneT<float>&, const scene::Task&);
template TaskSides split_task(const scene::CompiledSceneT<double>&, const scene::Task&);

}  // namespace adj::optim
