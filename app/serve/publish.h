// What the optimize commands publish to their viewers besides their own records
// (app/serve/run_server.h): a snapshot of the parameters and one rollout's states with each
// frame's contacts, the gradient the editor draws as arrows, and the rollouts of a policy
// method's first training copies. Built on the run's thread, only for the iterations that
// publish one; reading the run's states changes nothing it computes.
#pragma once

#include <algorithm>
#include <vector>

#include "app/serve/run_server.h"
#include "engine/articulation/rigid_queries.h"
#include "engine/model/model.h"
#include "engine/model/state.h"
#include "engine/optim/parameters.h"
#include "engine/solver/solver.h"

namespace adj::app {

namespace publish_detail {

inline void put(std::vector<float>& out, const auto& v) { out.insert(out.end(), {float(v.x), float(v.y), float(v.z)}); }

// contacts into a frame's flat arrays, thinned to at most wire::k_max_frame_contacts (every
// k-th, so the same contacts are kept for the same rollout)
template <class C>
wire::FrameContacts frame_contacts(const C& c) {
  wire::FrameContacts out;
  const int n = c.contact_count(), kept = std::min(n, wire::k_max_frame_contacts);
  const int stride = kept > 0 ? (n + kept - 1) / kept : 1;
  for (int i = 0; i < n; i += stride) {
    put(out.point, c.point[std::size_t(i)]);
    put(out.normal, c.normal[std::size_t(i)]);
    put(out.force, c.force[std::size_t(i)]);
  }
  return out;
}

template <class S>
void put_frames(const std::vector<StateT<S>>& frames, std::vector<std::vector<float>>& pq,
                std::vector<std::vector<float>>& jq) {
  pq.reserve(frames.size());
  jq.reserve(frames.size());
  for (const StateT<S>& s : frames) {
    std::vector<float>& p = pq.emplace_back();
    p.reserve(s.particle_q.size() * 3);
    for (const auto& x : s.particle_q) put(p, x);
    jq.emplace_back(s.joint_q.begin(), s.joint_q.end());
  }
}

}  // namespace publish_detail

// the snapshot of an iteration: its parameters and the states of its rollout; with `model`
// (the one world the frames are states of), each frame's contacts as the editor draws them
// (engine compute_contacts for the particles, rigid_contacts for the robots' bodies), at the
// model's own contact parameters
template <class S>
RunSnapshot rollout_snapshot(int iteration, const std::vector<S>& theta, const std::vector<StateT<S>>& frames,
                             const ModelT<S>* model = nullptr) {
  RunSnapshot out;
  out.iteration = iteration;
  out.parameters.assign(theta.begin(), theta.end());
  publish_detail::put_frames(frames, out.particle_q, out.joint_q);
  if (!model) return out;
  const bool particles = model->particle_count() > 0, bodies = model->rigid.body_count() > 0;
  ContactsT<S> c;
  RigidContactsT<S> rc;
  const ControlT<S> control = model->make_control();
  for (const StateT<S>& s : frames) {
    if (particles && s.particle_count() == model->particle_count()) {
      compute_contacts(*model, s, c);
      out.contacts.push_back(publish_detail::frame_contacts(c));
    }
    if (bodies && s.joint_q.size() == model->joint_q.size() && rigid_contacts(model->rigid, s, control, rc))
      out.body_contacts.push_back(publish_detail::frame_contacts(rc));
  }
  // none when the frames are not of this model, or no frame has a contact of that kind
  auto none = [&](const std::vector<wire::FrameContacts>& c) {
    return c.size() != frames.size() || std::all_of(c.begin(), c.end(), [](const auto& x) { return x.count() == 0; });
  };
  if (none(out.contacts)) out.contacts.clear();
  if (none(out.body_contacts)) out.body_contacts.clear();
  return out;
}

// the gradient of the iteration as the editor draws it: dL/dtheta of the blocks drawn as arrows
// (initial positions and velocities, per-frame control forces of particles: 3 entries an
// element), and |dL/dx_t| over the horizon (the gradient's health along the rollout)
template <class S>
void add_gradient(RunSnapshot& out, const std::vector<optim::ParamBlock>& blocks, const std::vector<S>& grad,
                  const std::vector<S>& step_grad_norms) {
  using K = scene::ParamKind;
  out.step_grad_norms.assign(step_grad_norms.begin(), step_grad_norms.end());
  for (const optim::ParamBlock& b : blocks) {
    const bool arrows = b.kind == K::initial_position || b.kind == K::initial_velocity || b.kind == K::control_force;
    if (!arrows || b.width != 3 || std::size_t(b.offset + b.count) > grad.size()) continue;
    // one entry a frame: a knotted block's knots interpolated (how each frame's input moves under
    // a gradient step on the knots)
    std::vector<S> frames(std::size_t(optim::frame_block(b).count));
    optim::knots_to_frames(b, grad.data() + b.offset, frames.data());
    out.gradient_blocks.push_back({scene::to_string(b.kind), int(out.gradient.size()), b.frames, b.elements, b.index});
    out.gradient.insert(out.gradient.end(), frames.begin(), frames.end());
  }
}

// the rollouts of a policy method's first training copies (copy k: copies[k], frame by frame)
template <class S>
void add_worlds(RunSnapshot& out, const std::vector<std::vector<StateT<S>>>& copies) {
  for (std::size_t k = 0; k < copies.size() && k < std::size_t(wire::k_max_worlds); ++k) {
    if (copies[k].empty()) continue;
    wire::WorldFrames& w = out.worlds.emplace_back();
    w.copy = int(k);
    publish_detail::put_frames(copies[k], w.particle_q, w.joint_q);
  }
}

}  // namespace adj::app
