// CPU vs CUDA parity over 200 steps (forward states and gradients, relative 1e-4).
// Exits with 77 (ctest: skipped) when no CUDA device is present.
#include <cmath>
#include <functional>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/cuda/cuda.h"
#include "tests/engine/scenes.h"

using namespace adj;

namespace {

constexpr int kSkip = 77;

// max |a - b| / max |a| over all components
double rel_diff(const std::vector<vec3<double>>& a, const std::vector<vec3<double>>& b) {
  double num = 0, den = 1e-12;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      num = std::max(num, std::fabs(a[i][k] - b[i][k]));
      den = std::max(den, std::fabs(a[i][k]));
    }
  return num / den;
}

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 1e-12;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(a[i]));
  }
  return num / den;
}

struct Grads {
  std::vector<StateT<double>> states;
  StateT<double> adj;
  ModelGradT<double> model;
  std::vector<double> act;
};

template <class Solver>
bool run(Solver& solver, const ModelT<double>& m, int T, double dt, Grads& g, std::string& err,
         const std::function<Status(Solver&, const StateT<double>&, StateT<double>&, const ControlT<double>&)>& step,
         const std::function<Status(Solver&, const StateT<double>&, const ControlT<double>&, const StateT<double>&,
                                    StateT<double>&, ControlT<double>&, ModelGradT<double>&)>& adjoint) {
  ControlT<double> c = m.make_control();
  for (std::size_t k = 0; k < c.spring_act.size(); ++k) c.spring_act[k] = 0.1 * std::sin(double(k));
  for (std::size_t k = 0; k < c.tet_act.size(); ++k) c.tet_act[k] = 0.05 * std::cos(double(k));
  g.states.assign(1, m.make_state());
  for (int t = 0; t < T; ++t) {
    StateT<double> next;
    Status st = step(solver, g.states.back(), next, c);
    if (!st) return err = "forward step " + std::to_string(t) + ": " + st.message(), false;
    g.states.push_back(next);
  }
  g.adj = m.make_state();
  g.adj.zero();
  for (auto& v : g.adj.particle_q) v = vec3<double>(0.3, 1.0, -0.2);
  g.model = m.make_grad();
  ControlT<double> gc = m.make_control();
  for (int t = T - 1; t >= 0; --t) {
    StateT<double> prev;
    Status st = adjoint(solver, g.states[t], c, g.adj, prev, gc, g.model);
    if (!st) return err = "adjoint step " + std::to_string(t) + ": " + st.message(), false;
    g.adj = prev;
  }
  g.act = gc.spring_act;
  g.act.insert(g.act.end(), gc.tet_act.begin(), gc.tet_act.end());
  (void)dt;
  return true;
}

}  // namespace

int main() {
  std::string reason;
  if (!cuda_available(&reason)) {
    std::printf("skipped: %s\n", reason.c_str());
    return kSkip;
  }
  struct Scene {
    const char* name;
    ModelT<double> model;
    int substeps;
    double dt;
  };
  std::vector<Scene> scenes = {{"cloth", test::cloth_scene(), 4, 1.0 / 120},
                               {"soft", test::soft_scene(), 2, 1.0 / 200},
                               {"robot", test::robot_scene(), 1, 1.0 / 250},
                               {"pile", test::pile_scene(), 2, 1.0 / 200},
                               {"colliders", test::colliders_scene(), 2, 1.0 / 200}};
  const int T = 200;
  int failures = 0;
  for (Scene& s : scenes) {
    SolverOptions opt{s.substeps, 0, true};
    SolverT<double> cpu(opt);
    CudaSolverT<double> gpu(opt);
    Status up = gpu.upload(s.model);
    if (!up) {
      std::printf("%s: upload failed: %s\n", s.name, up.message().c_str());
      ++failures;
      continue;
    }
    double dt = s.dt;
    const ModelT<double>& m = s.model;
    Grads a, b;
    std::string err;
    bool ok_cpu = run<SolverT<double>>(
        cpu, m, T, dt, a, err,
        [&](SolverT<double>& sv, const StateT<double>& in, StateT<double>& out, const ControlT<double>& c) {
          return sv.step(m, in, out, c, dt);
        },
        [&](SolverT<double>& sv, const StateT<double>& in, const ControlT<double>& c, const StateT<double>& ao,
            StateT<double>& ai, ControlT<double>& ac, ModelGradT<double>& am) {
          return sv.step_adjoint(m, in, c, dt, ao, ai, ac, am);
        });
    bool ok_gpu = ok_cpu && run<CudaSolverT<double>>(
        gpu, m, T, dt, b, err,
        [&](CudaSolverT<double>& sv, const StateT<double>& in, StateT<double>& out, const ControlT<double>& c) {
          return sv.step(in, out, c, dt);
        },
        [&](CudaSolverT<double>& sv, const StateT<double>& in, const ControlT<double>& c, const StateT<double>& ao,
            StateT<double>& ai, ControlT<double>& ac, ModelGradT<double>& am) {
          return sv.step_adjoint(in, c, dt, ao, ai, ac, am);
        });
    if (!ok_cpu || !ok_gpu) {
      std::printf("%s: %s\n", s.name, err.c_str());
      ++failures;
      continue;
    }
    double dq = rel_diff(a.states.back().particle_q, b.states.back().particle_q);
    double dv = rel_diff(a.states.back().particle_qd, b.states.back().particle_qd);
    double gq = rel_diff(a.adj.particle_q, b.adj.particle_q);
    double gv = rel_diff(a.adj.particle_qd, b.adj.particle_qd);
    double gm = rel_diff(a.model.particle_mass, b.model.particle_mass);
    double ga = rel_diff(a.act, b.act);
    double gc = std::fabs(a.model.contact_ke - b.model.contact_ke) / std::max(1e-12, std::fabs(a.model.contact_ke));
    bool ok = dq <= 1e-4 && dv <= 1e-4 && gq <= 1e-4 && gv <= 1e-4 && gm <= 1e-4 && ga <= 1e-4 && gc <= 1e-4;
    std::printf("%-10s %s  q %.2e qd %.2e | dq0 %.2e dqd0 %.2e dmass %.2e dact %.2e dcontact_ke %.2e\n", s.name,
                ok ? "ok  " : "FAIL", dq, dv, gq, gv, gm, ga, gc);
    failures += ok ? 0 : 1;
  }
  return failures ? 1 : 0;
}
