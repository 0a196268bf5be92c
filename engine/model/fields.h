// What engine/model/field_table.h's list becomes over Model and ModelGrad: one Field per row,
// its description (side, domain, width, label, units) and references to its value and its
// gradient, so that code over "every differentiable field" is one loop, not one case per kind.
//
//   for (const FieldInfo& f : k_fields) grad_field(g, f.field).at(e, c) ...
#pragma once

#include "engine/model/field_table.h"
#include "engine/model/model.h"

namespace adj {

enum class Field {
#define ADJ_X(decl, kind, field, ...) field,
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
};

#define ADJ_X(...) +1
inline constexpr int k_field_count = 0 ADJ_MODEL_FIELDS(ADJ_X);
#undef ADJ_X

enum class FieldSide { particles, robot };
enum class FieldDomain { particle, spring, triangle, edge, tet, body, dof, actuator, scene };
enum class FieldSelect { all, positive, pd, nonneg };

struct FieldInfo {
  Field field;
  const char* kind;  // the parameter kind's name (scene::to_string of it)
  FieldSide side;
  FieldDomain domain;  // elements the value is indexed by (scene: one value)
  FieldDomain slots;   // particle side: elements whose kernels write the gradient slots
  int width;           // entries per element
  FieldSelect select;  // elements of an object a parameter block covers
  const char* label;
  const char* units;
};

// clang-format off
inline constexpr FieldInfo k_fields[] = {
#define ADJ_X(decl, kind, field, side, domain, slots, width, select, model, grad, doc, label, units) \
  {Field::field, #kind, FieldSide::side, FieldDomain::domain, FieldDomain::slots, width, FieldSelect::select, label, units},
    ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
};
// clang-format on

inline const FieldInfo& field_info(Field f) { return k_fields[int(f)]; }

// "springs", "triangles", ... (for messages)
inline const char* domain_name(FieldDomain d) {
  switch (d) {
    case FieldDomain::particle:
      return "particles";
    case FieldDomain::spring:
      return "springs";
    case FieldDomain::triangle:
      return "triangles";
    case FieldDomain::edge:
      return "bending edges";
    case FieldDomain::tet:
      return "tetrahedra";
    case FieldDomain::body:
      return "bodies";
    case FieldDomain::dof:
      return "joint dofs";
    case FieldDomain::actuator:
      return "actuators";
    case FieldDomain::scene:
      return "scene";
  }
  return "?";
}

// elements of a domain in the model (scene: 1)
template <class S>
int domain_count(const ModelT<S>& m, FieldDomain d) {
  switch (d) {
    case FieldDomain::particle:
      return m.particle_count();
    case FieldDomain::spring:
      return m.spring_count();
    case FieldDomain::triangle:
      return m.tri_count();
    case FieldDomain::edge:
      return m.edge_count();
    case FieldDomain::tet:
      return m.tet_count();
    case FieldDomain::body:
      return m.rigid.body_count();
    case FieldDomain::dof:
      return m.rigid.dof_count();
    case FieldDomain::actuator:
      return m.rigid.actuator_count();
    case FieldDomain::scene:
      return 1;
  }
  return 0;
}

// a field's storage: per-element scalars, per-element vectors, or one value (count 1)
template <class S>
struct FieldRef {
  S* scalars = nullptr;
  vec3<S>* vectors = nullptr;
  int count = 0;  // elements
  S& at(int e, int c) const { return vectors ? vectors[e][c] : scalars[e]; }
};

template <class S>
FieldRef<S> field_ref(Array<S>& a) {
  return {data_or_null(a), nullptr, int(a.size())};
}
template <class S>
FieldRef<S> field_ref(Array<vec3<S>>& a) {
  return {nullptr, data_or_null(a), int(a.size())};
}
template <class S>
FieldRef<S> field_ref(S& x) {
  return {&x, nullptr, 1};
}
template <class S>
FieldRef<S> field_ref(vec3<S>& v) {
  return {nullptr, &v, 1};
}

// the value of a field in the model
template <class S>
FieldRef<S> model_field(ModelT<S>& m, Field f) {
  switch (f) {
#define ADJ_X(decl, kind, field, side, domain, slots, width, select, model, ...) \
  case Field::field:                                                             \
    return field_ref(m.model);
    ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  }
  return {};
}
// read only
template <class S>
FieldRef<S> model_field(const ModelT<S>& m, Field f) {
  return model_field(const_cast<ModelT<S>&>(m), f);
}

// its gradient
template <class S>
FieldRef<S> grad_field(ModelGradT<S>& g, Field f) {
  switch (f) {
#define ADJ_X(decl, kind, field, side, domain, slots, width, select, model, grad, ...) \
  case Field::field:                                                                   \
    return field_ref(g.grad);
    ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  }
  return {};
}
template <class S>
FieldRef<S> grad_field(const ModelGradT<S>& g, Field f) {
  return grad_field(const_cast<ModelGradT<S>&>(g), f);
}

}  // namespace adj
