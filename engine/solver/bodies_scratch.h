// SolverT's articulation scratch (SolverT<S>::Bodies): the articulation stage for models of
// bodies only (ArticulationStageT, articulation_stage.h, with its step records and tangent step) and the coupled step's
// arena and buffers (engine/solver/coupled_kernels.h). Internal to engine/solver: the coupled
// step (coupled.cpp) and the tangent step (particle_tangent.cpp) use it.
#pragma once

#include <vector>

#include "engine/articulation/body_particle.h"
#include "engine/solver/articulation_stage.h"
#include "engine/solver/coupled_kernels.h"
#include "engine/solver/solver.h"
#include "engine/solver/team.h"

namespace adj {

template <class S>
struct SolverT<S>::Bodies {
  ArticulationStageT<S> rigid;      // the articulation alone (models without particles)
  CoupledScratch<S> sc;             // each substep's articulation scratch and joint state, the adjoint's buffers
  std::vector<double> arena;        // sc's memory (doubles: 8-byte aligned)
  std::vector<vec3<S>> pf, adj_pf;  // control + pair force on each particle, its adjoint
  std::vector<rigid::CouplingPair<S>> pairs;      // (shape, particle) slots of the pair forces
  std::vector<rigid::CouplingPairGrad<S>> grads;  // ... and of their adjoints
  std::vector<S> adj_joint_out;                   // dL/d the output's joint state, (q_count + dof_count)
  TeamChoice forward_team, adjoint_team;          // one thread or the team, by measured time

  // sized for a model and a substep count (the arena carved anew each step: its spans move
  // when it grows)
  void fit(const ModelT<S>& pm, const rigid::RigidViewT<S>& rv, int substeps) {
    sc.carve(nullptr, rv, substeps);
    if (arena.size() * sizeof(double) < sc.bytes) arena.assign(sc.bytes / sizeof(double) + 1, 0.0);
    sc.carve(reinterpret_cast<char*>(arena.data()), rv, substeps);
    const std::size_t np = std::size_t(pm.particle_count()), slots = std::size_t(rv.shape_count()) * np;
    pf.resize(np);
    adj_pf.resize(np);
    pairs.resize(slots);
    grads.resize(slots);
  }
};

}  // namespace adj
