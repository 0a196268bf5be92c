#include "engine/solver/stability.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace adj {

namespace {

// the shortest stable step found so far, and what limits it
struct Limit {
  double step = std::numeric_limits<double>::infinity();
  std::string what;
  // a spring-like element of stiffness k [N/m] and damping c [N s/m] on masses whose inverse sum
  // is inv_m [1/kg]: the shorter of 2 / omega and 2 / (c inv_m)
  void add(double k, double c, double inv_m, const std::string& name) {
    if (!(inv_m > 0)) return;  // pinned: nothing moves
    double s = std::numeric_limits<double>::infinity();
    if (k > 0) s = std::min(s, 2.0 / std::sqrt(k * inv_m));
    if (c > 0) s = std::min(s, 2.0 / (c * inv_m));
    if (s < step) step = s, what = name;
  }
};

template <class S>
double inv_mass(const ModelT<S>& m, int p) {
  const double mass = double(m.particle_mass[std::size_t(p)]);
  return mass > 0 ? 1.0 / mass : 0.0;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char text[160];
  std::snprintf(text, sizeof text, f, a, b, c);
  return text;
}

}  // namespace

template <class S>
std::string stability_note(const ModelT<S>& m, double h, double dt) {
  Limit limit;
  for (int s = 0; s < m.spring_count(); ++s) {
    const Idx2 e = m.spring_indices[std::size_t(s)];
    limit.add(
        double(m.spring_ke[std::size_t(s)]), double(m.spring_kd[std::size_t(s)]), inv_mass(m, e.i) + inv_mass(m, e.j),
        "spring " + std::to_string(s) +
            fmt(" (ke %g N/m, kd %g N s/m)", double(m.spring_ke[std::size_t(s)]), double(m.spring_kd[std::size_t(s)])));
  }
  for (int t = 0; t < m.tri_count(); ++t) {  // a membrane: (lambda + 2 mu) [N/m] on its vertices
    const Idx3 e = m.tri_indices[std::size_t(t)];
    const double mu = double(m.tri_ke[std::size_t(t)]), lambda = double(m.tri_ka[std::size_t(t)]);
    const double inv_m = std::max({inv_mass(m, e.i), inv_mass(m, e.j), inv_mass(m, e.k)});
    limit.add(2 * (lambda + 2 * mu), 2 * double(m.tri_kd[std::size_t(t)]), inv_m,
              "triangle " + std::to_string(t) + fmt(" (stretch %g N/m, area %g N/m)", mu, lambda));
  }
  for (int t = 0; t < m.tet_count(); ++t) {  // a solid: (lambda + 2 mu) [Pa] over its size [m]
    const Idx4 e = m.tet_indices[std::size_t(t)];
    const double size = std::cbrt(std::max(double(m.tet_volume[std::size_t(t)]), 1e-30));
    const double mu = double(m.tet_mu[std::size_t(t)]), lambda = double(m.tet_lambda[std::size_t(t)]);
    const double inv_m = std::max({inv_mass(m, e.i), inv_mass(m, e.j), inv_mass(m, e.k), inv_mass(m, e.l)});
    limit.add(2 * (lambda + 2 * mu) * size, 2 * double(m.tet_kd[std::size_t(t)]) * size, inv_m,
              "tet " + std::to_string(t) + fmt(" (mu %g Pa, lambda %g Pa, %g m across)", mu, lambda, size));
  }
  // the ground and colliders push each particle alone
  double heaviest_inv = 0;
  for (int p = 0; p < m.particle_count(); ++p) heaviest_inv = std::max(heaviest_inv, inv_mass(m, p));
  if (m.particle_count() > 0 && m.contact_kf > 0)  // friction: a damping along the surface
    limit.add(0, double(m.contact_kf), heaviest_inv,
              fmt("the particles' contact friction (kf %g N s/m) on its lightest particle", double(m.contact_kf)));
  if (m.particle_count() > 0)
    limit.add(double(m.contact_ke), double(m.contact_kd), heaviest_inv,
              fmt("the particles' contact (ke %g N/m, kd %g N s/m) on its lightest particle", double(m.contact_ke),
                  double(m.contact_kd)));
  if (!(limit.step < h)) return "";
  const int substeps = int(std::ceil(dt / limit.step));
  return fmt("; the substep (%.3g s) is longer than the explicit step's stable limit for ", h) + limit.what +
         fmt(": about %.3g s or less, %.0f substeps a frame or more", limit.step, double(substeps));
}

template std::string stability_note(const ModelT<float>&, double, double);
template std::string stability_note(const ModelT<double>&, double, double);

}  // namespace adj
