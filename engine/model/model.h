// Model (static topology and parameters of one world: particles, elements, colliders and the
// articulated bodies), ModelGrad (gradients of model parameters) and Contacts (for drawing);
// State and Control in engine/model/state.h. Structure of arrays; every array lists its
// meaning, unit and length. A scene without robots has an empty `rigid` part; one without
// particles has empty particle arrays: a stage with nothing to do costs nothing.
#pragma once

#include <cstddef>

#include "engine/core/array.h"
#include "engine/core/math.h"
#include "engine/model/rigid_model.h"
#include "engine/model/state.h"

namespace adj {

// gradients of the differentiable fields, the same names as in ModelT (one per row of
// engine/model/field_table.h; zero() and make_grad() are generated from it)
template <class S>
struct ModelGradT {
  Array<S> particle_mass;    // dL/dmass, (particle_count)
  Array<S> spring_ke;        // dL/dke, (spring_count)
  Array<S> spring_kd;        // dL/dkd, (spring_count)
  Array<S> spring_rest;      // dL/drest length, (spring_count)
  Array<S> tri_ke;           // dL/d stretch modulus, (tri_count)
  Array<S> tri_ka;           // dL/d area modulus, (tri_count)
  Array<S> tri_kd;           // dL/d strain-rate damping, (tri_count)
  Array<S> edge_ke;          // dL/d bending stiffness, (edge_count)
  Array<S> tet_mu;           // dL/dmu, (tet_count)
  Array<S> tet_lambda;       // dL/dlambda, (tet_count)
  S tri_lift = 0;            // dL/d lift coefficient
  S tri_drag = 0;            // dL/d drag coefficient
  vec3<S> gravity;           // dL/d gravity (the particles')
  S contact_ke = 0;          // dL/dcontact stiffness
  S contact_kd = 0;          // dL/dcontact damping
  S contact_mu = 0;          // dL/dfriction coefficient
  RigidModelGradT<S> rigid;  // the articulated bodies' parameters (masses, gains, their contact)

  void zero();
};

// contacts of one step, for the UI to draw
template <class S>
struct ContactsT {
  Array<vec3<S>> point;   // contact points on the collider surface [m], (contact_count)
  Array<vec3<S>> normal;  // unit normals pointing out of the collider, (contact_count)
  Array<vec3<S>> force;   // force on the particle [N], (contact_count)
  Array<int> particle;    // particle index, (contact_count)
  Array<int> other;       // shape index, or -1 - particle index for particle pairs, (contact_count)
  // the articulated bodies' contacts and joint forces (against the ground, colliders and each
  // other), and the body-particle contacts; empty without robots
  RigidContactsT<S> bodies;
  rigid::CouplingContactsT<S> body_particle;

  int contact_count() const { return int(point.size()); }
  void clear();
};

// how the particle stages integrate: semi-implicit Euler (engine/solver/semi_implicit.cpp) or
// backward Euler with contact inside the solve (engine/solver/implicit.h)
enum Integrator : int { INTEGRATOR_EXPLICIT = 0, INTEGRATOR_IMPLICIT = 1 };

template <class S>
struct ModelT {
  // particles
  Array<vec3<S>> particle_q;              // initial positions [m], (particle_count)
  Array<vec3<S>> particle_qd;             // initial velocities [m/s], (particle_count)
  Array<S> particle_mass;                 // mass [kg], 0 = pinned (kinematic), (particle_count)
  Array<S> particle_radius;               // contact radius [m], (particle_count)
  vec3<S> gravity{S(0), S(-9.81), S(0)};  // [m/s^2]
  S particle_damping = 0;                 // global velocity damping [1/s]
  int integrator = INTEGRATOR_EXPLICIT;   // the particles' Integrator (settings.integrator)

  // springs
  Array<Idx2> spring_indices;  // particle pairs, (spring_count)
  Array<S> spring_ke;          // stiffness [N/m], (spring_count)
  Array<S> spring_kd;          // damping [N s/m], (spring_count)
  Array<S> spring_rest;        // rest length [m], (spring_count)

  // triangles (cloth membranes, StVK) and their aerodynamics
  Array<Idx3> tri_indices;   // particle triples, (tri_count)
  Array<mat22<S>> tri_pose;  // inverse rest shape in the triangle's plane, (tri_count)
  Array<S> tri_area;         // rest area [m^2], (tri_count)
  Array<S> tri_ke;           // stretch/shear modulus mu [N/m], (tri_count)
  Array<S> tri_ka;           // area modulus lambda [N/m], (tri_count)
  Array<S> tri_kd;           // strain-rate damping [N s/m], (tri_count)
  S tri_lift = 0;            // aerodynamic lift coefficient
  S tri_drag = 0;            // aerodynamic drag coefficient

  // bending edges: i, j opposite vertices, k, l the shared edge
  Array<Idx4> edge_indices;  // (edge_count)
  Array<S> edge_rest_angle;  // rest dihedral angle [rad], (edge_count)
  Array<S> edge_ke;          // bending stiffness [N m/rad], (edge_count)
  Array<S> edge_kd;          // bending damping, (edge_count)

  // tetrahedra (Neo-Hookean FEM)
  Array<Idx4> tet_indices;   // (tet_count)
  Array<mat33<S>> tet_pose;  // inverse rest edge matrix, (tet_count)
  Array<S> tet_volume;       // rest volume [m^3], (tet_count)
  Array<S> tet_mu;           // Lame mu [Pa], (tet_count)
  Array<S> tet_lambda;       // Lame lambda [Pa], (tet_count)
  Array<S> tet_kd;           // strain-rate damping [Pa s], (tet_count)

  // colliders (static)
  Array<int> shape_type;         // GeomType (engine/collision/geometry.h), (shape_count)
  Array<vec3<S>> shape_pos;      // position [m], (shape_count)
  Array<mat33<S>> shape_rot;     // rotation, local to world, (shape_count)
  Array<vec3<S>> shape_size;     // per-type size (see GeomType), (shape_count)
  Array<int> shape_mesh_start;   // first triangle in mesh_tris, (shape_count)
  Array<int> shape_mesh_count;   // triangle count, (shape_count)
  Array<vec3<S>> mesh_vertices;  // world-space collider mesh vertices [m], (mesh_vertex_count)
  Array<Idx3> mesh_tris;         // collider mesh triangles, (mesh_tri_count)

  // contact (particle-shape, particle-particle, body-particle; engine/collision/contact_law.h)
  S contact_ke = S(kContactKe);    // normal stiffness [N/m]
  S contact_kd = S(kContactKd);    // normal damping [N s/m]
  S contact_kf = S(kContactKf);    // friction stiffness [N s/m] (kf h/m < 2 for stability); 0 = off
  S contact_mu = S(kContactMu);    // Coulomb coefficient
  S contact_eps = S(kContactEps);  // friction smoothing width around zero slip [m/s]
  bool particle_contact = false;   // particle-particle contact through the hash grid
  S grid_cell = 0;                 // hash grid cell size [m] (>= 2 max radius), set by finalize

  // particle incidence (CSR): force slots of each particle, in a fixed order
  Array<int> incidence_start;  // (particle_count + 1)
  Array<int> incidence_slot;   // slot indices, (slot_count)
  // particle-particle exclusions (CSR, sorted): topological neighbours never collide
  Array<int> exclude_start;  // (particle_count + 1)
  Array<int> exclude_list;   // particle indices

  // articulated bodies: joints, bodies, body shapes, actuators and their contact parameters
  // (engine/model/rigid_model.h), with the initial joint state; empty without robots
  RigidModelT<S> rigid;
  Array<S> joint_q;   // initial generalized positions, (rigid.q_count())
  Array<S> joint_qd;  // initial generalized velocities, (rigid.dof_count())

  int particle_count() const { return int(particle_q.size()); }
  int body_count() const { return rigid.body_count(); }
  int spring_count() const { return int(spring_indices.size()); }
  int tri_count() const { return int(tri_indices.size()); }
  int edge_count() const { return int(edge_indices.size()); }
  int tet_count() const { return int(tet_indices.size()); }
  int shape_count() const { return int(shape_type.size()); }
  // force slot layout: springs, then triangles, bending edges, tetrahedra
  int spring_slot() const { return 0; }
  int tri_slot() const { return 2 * spring_count(); }
  int edge_slot() const { return tri_slot() + 3 * tri_count(); }
  int tet_slot() const { return edge_slot() + 4 * edge_count(); }
  int slot_count() const { return tet_slot() + 4 * tet_count(); }

  StateT<S> make_state() const;      // initial positions and velocities (particles and joints)
  ControlT<S> make_control() const;  // zero inputs
  // inputs that hold the initial pose: PD targets at the initial revolute/prismatic joint
  // coordinates, everything else zero (what `adjoint run`, `render` and the editor play with)
  ControlT<S> make_hold_control() const;
  ModelGradT<S> make_grad() const;  // zero gradients
};

using Model = ModelT<float>;
using ModelGrad = ModelGradT<float>;
using Contacts = ContactsT<float>;

}  // namespace adj
