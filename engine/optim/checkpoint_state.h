// The pieces of a training state as a checkpoint holds them (engine/optim/checkpoint.h):
// random engines as their standard text (exact, and the same in every C++ library), and the
// copies' states as columns: "<prefix>.particle_q", ".particle_qd", ".joint_q", ".joint_qd",
// one copy after another. SHAC and PPO both store their episodes this way.
#pragma once

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/math.h"
#include "engine/model/state.h"
#include "engine/optim/checkpoint.h"

namespace adj::optim {

inline std::string engine_text(const std::mt19937_64& rng) {
  std::ostringstream s;
  s << rng;
  return s.str();
}

inline bool engine_from_text(const std::string& text, std::mt19937_64& rng) {
  std::istringstream s(text);
  s >> rng;
  return !s.fail();
}

template <class S>
inline std::vector<S> flatten_vec3(const Array<vec3<S>>& v) {
  static_assert(sizeof(vec3<S>) == 3 * sizeof(S));
  std::vector<S> out(v.size() * 3);
  for (std::size_t k = 0; k < v.size(); ++k) out[3 * k] = v[k].x, out[3 * k + 1] = v[k].y, out[3 * k + 2] = v[k].z;
  return out;
}

template <class S>
inline void unflatten_vec3(const S* p, Array<vec3<S>>& v) {
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = vec3<S>(p[3 * k], p[3 * k + 1], p[3 * k + 2]);
}

// a state's four arrays, appended to the checkpoint's ("<prefix>.joint_q", ...) one copy after another
template <class S>
struct StateColumns {
  std::vector<S> particle_q, particle_qd, joint_q, joint_qd;
  void add(const StateT<S>& s) {
    auto pq = flatten_vec3(s.particle_q), pqd = flatten_vec3(s.particle_qd);
    particle_q.insert(particle_q.end(), pq.begin(), pq.end());
    particle_qd.insert(particle_qd.end(), pqd.begin(), pqd.end());
    joint_q.insert(joint_q.end(), s.joint_q.begin(), s.joint_q.end());
    joint_qd.insert(joint_qd.end(), s.joint_qd.begin(), s.joint_qd.end());
  }
  void put(Checkpoint& ck, const std::string& prefix) const {
    ck.put(prefix + ".particle_q", particle_q);
    ck.put(prefix + ".particle_qd", particle_qd);
    ck.put(prefix + ".joint_q", joint_q);
    ck.put(prefix + ".joint_qd", joint_qd);
  }
  // copy i's state, shaped like `like`
  StateT<S> at(int i, const StateT<S>& like) const {
    StateT<S> s = like;
    const std::size_t np = like.particle_q.size() * 3, nq = like.joint_q.size(), nd = like.joint_qd.size();
    unflatten_vec3(particle_q.data() + i * np, s.particle_q);
    unflatten_vec3(particle_qd.data() + i * np, s.particle_qd);
    std::copy_n(joint_q.begin() + long(i * nq), nq, s.joint_q.begin());
    std::copy_n(joint_qd.begin() + long(i * nd), nd, s.joint_qd.begin());
    return s;
  }
  Status get(const Checkpoint& ck, const std::string& prefix, int copies, const StateT<S>& like) {
    const long long n = copies;
    Status st = ck.get(prefix + ".particle_q", particle_q, n * 3 * like.particle_count());
    if (st) st = ck.get(prefix + ".particle_qd", particle_qd, n * 3 * like.particle_count());
    if (st) st = ck.get(prefix + ".joint_q", joint_q, n * like.q_count());
    if (st) st = ck.get(prefix + ".joint_qd", joint_qd, n * like.dof_count());
    return st;
  }
};

}  // namespace adj::optim
