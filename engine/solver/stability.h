// Why an explicit step blew up: the semi-implicit step of a spring of stiffness k between
// masses is stable while h < 2 / omega, omega^2 = k (1/m_i + 1/m_j), and its damping c while
// h < 2 m / c. Every particle element is read as such a spring (membranes and tets by their
// modulus over their size), the ground contact as one per particle, and the most restrictive
// one against the substep is named with the step it allows and the substeps a frame it needs.
// An estimate (factors of about 2 on shapes other than a spring), meant for the message of a
// step that went non-finite, where the first non-finite force names only the symptom.
//
//   std::string why = stability_note(model, dt / substeps, dt);  // "" when no element is too stiff
#pragma once

#include <string>

#include "engine/model/model.h"

namespace adj {

// the element whose stable step is shortest against substep h (frame dt), as "; the substep ...
// is longer than ... of spring 12 (...): at most X s, N substeps a frame or more"; "" when
// every element's stable step is longer than h
template <class S>
std::string stability_note(const ModelT<S>& model, double h, double dt);

}  // namespace adj
