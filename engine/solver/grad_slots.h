// The adjoint kernels' gradient slots (ModelGradView) laid out from engine/model/field_table.h,
// over host or device memory, and their reduction into a ModelGrad. The CPU solver points the
// per-element fields straight at the ModelGrad's arrays and keeps the scene-wide partials in
// scratch; the CUDA backends keep every slot in one device buffer (one memset zeroes it, one
// download fetches it).
#pragma once

#include "engine/model/fields.h"
#include "engine/solver/kernels.h"

namespace adj {

// where each particle-side field's slots lie in a flat buffer of S
struct GradSlots {
  int offset[k_field_count] = {};
  int count[k_field_count] = {};  // entries: (slots domain count) x width; 0 for the robot side
  int size = 0;
};

template <class S>
GradSlots grad_slots(const ModelT<S>& m) {
  GradSlots s;
  for (const FieldInfo& f : k_fields) {
    const int i = int(f.field);
    s.offset[i] = s.size;
    s.count[i] = f.side == FieldSide::particles ? domain_count(m, f.slots) * f.width : 0;
    s.size += s.count[i];
  }
  return s;
}

// every field's slots in `flat` (s.size entries)
template <class S>
ModelGradView<S> grad_view(const GradSlots& s, S* flat) {
  ModelGradView<S> v{};
#define ADJ_X(decl, kind, field, side, ...) \
  ADJ_FIELD_PARTICLES_##side(v.field = s.count[int(Field::field)] ? flat + s.offset[int(Field::field)] : nullptr;)
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  return v;
}

// per-element fields straight into g's arrays (accumulated there); scene-wide fields into
// `partials` (s.size entries, zeroed by the caller; add_slots sums them)
template <class S>
ModelGradView<S> grad_view(ModelGradT<S>& g, const GradSlots& s, S* partials) {
  ModelGradView<S> v = grad_view(s, partials);
#define ADJ_X(decl, kind, field, side, domain, ...)                                   \
  ADJ_FIELD_PARTICLES_##side(if (FieldDomain::domain != FieldDomain::scene) v.field = \
                                 grad_field(g, Field::field).scalars;)
  ADJ_MODEL_FIELDS(ADJ_X)
#undef ADJ_X
  return v;
}

// add the slots of `flat` into g: scene-wide fields summed in element order (deterministic);
// per-element ones elementwise when the buffer holds them (per_element)
template <class S>
void add_slots(const GradSlots& s, const S* flat, ModelGradT<S>& g, bool per_element) {
  for (const FieldInfo& f : k_fields) {
    const int i = int(f.field);
    if (f.side != FieldSide::particles || s.count[i] == 0) continue;
    const S* x = flat + s.offset[i];
    const int n = s.count[i] / f.width;
    FieldRef<S> r = grad_field(g, f.field);
    if (f.domain == FieldDomain::scene) {
      for (int c = 0; c < f.width; ++c) {
        S sum = S(0);
        for (int e = 0; e < n; ++e) sum += x[e * f.width + c];
        r.at(0, c) += sum;
      }
    } else if (per_element) {
      for (int e = 0; e < n && e < r.count; ++e)
        for (int c = 0; c < f.width; ++c) r.at(e, c) += x[e * f.width + c];
    }
  }
}

}  // namespace adj
