// the device-resident rollout of cuda_rollout.h: states, controls and gradients on the
// device; the forward pass as one captured graph, the backward as a one-step graph
// replayed T times.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/cuda/cuda.h"
#include "engine/cuda/cuda_rollout.h"
#include "engine/cuda/device.cuh"
#include "engine/solver/grad_slots.h"
#include "engine/solver/kernels.h"

namespace adj {

using namespace cuda_detail;

namespace {

// a captured graph, instantiated (RAII)
struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() { reset(); }
  void reset() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
  }
  bool ready() const { return exec != nullptr; }
};

}  // namespace

template <class S>
struct CudaRolloutT<S>::Impl {
  cudaError_t error = cudaSuccess;
  const char* what = "";  // what was running when error was set
  cudaStream_t stream = nullptr;
  const ModelT<S>* host = nullptr;
  int n = 0, springs = 0, tets = 0, slots = 0;
  DeviceModel<S> model;
  DeviceGrid<S> grid;
  // states 0..T, back to back: state t is [t * n, (t + 1) * n)
  DeviceArray<vec3<S>> q_all, qd_all;
  // controls: 0, 1 or T of them, back to back
  int control_count = 0;
  DeviceArray<vec3<S>> control_f_all;
  DeviceArray<S> spring_act_all, tet_act_all;
  // forward scratch: intermediate substep states 1..K-1, forces
  std::vector<DeviceState<S>> fsub;
  DeviceArray<vec3<S>> f_slot, f_total;
  // backward: the step's input (bsub[0]), recomputed substeps and their total forces
  std::vector<DeviceState<S>> bsub;
  std::vector<DeviceArray<vec3<S>>> f_total_sub;
  DeviceArray<vec3<S>> step_control_f;
  DeviceArray<S> step_spring_act, step_tet_act;
  DeviceState<S> adj_top, adj_a, adj_b;
  DeviceArray<vec3<S>> adj_f, adj_q_slot, adj_qd_slot, dummy_q, dummy_qd;
  // gradient accumulators: one control's worth (per step when there are T controls) and the model
  DeviceArray<vec3<S>> adj_control_f, grad_control_f_all;
  DeviceArray<S> adj_spring_act, adj_tet_act, grad_spring_act_all, grad_tet_act_all;
  // the model gradient: every slot of grad_slots (engine/solver/grad_slots.h) in one buffer
  GradSlots grad_slots;
  DeviceArray<S> adj_model;
  Graph forward_graph, backward_graph;
  int launches = 0;
  bool initial_set = false;
  bool forward_done = false;
  bool backward_done = false;

  void check(cudaError_t e, const char* w) {
    if (e != cudaSuccess && error == cudaSuccess) {
      error = e;
      what = w;
    }
  }
  Status status() const {
    if (error == cudaSuccess) return Status::ok();
    return cuda_status(error, what);
  }
  CudaExec exec() { return CudaExec{&error, stream}; }
  vec3<S>* q(int t) const { return q_all.at(std::size_t(t) * n); }
  vec3<S>* qd(int t) const { return qd_all.at(std::size_t(t) * n); }
  void copy(void* dst, const void* src, std::size_t bytes) {
    if (bytes) check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream), "device copy");
  }
  GridView build_grid(const vec3<S>* positions) {
    if (host->particle_contact) grid.build(exec(), positions, n);
    return grid.view();
  }

  KernelArgs<S> args(S h, int control) {
    KernelArgs<S> a{};
    a.m = model.view;
    a.dt = h;
    if (control_count > 0) {
      a.control_f = control_f_all.at(std::size_t(control) * n);
      a.spring_act = spring_act_all.at(std::size_t(control) * springs);
      a.tet_act = tet_act_all.at(std::size_t(control) * tets);
    }
    a.f_slot = f_slot.get();
    a.f_total = f_total.get();
    return a;
  }

  // states 1..T from state 0
  void enqueue_forward(int T, int K, S h) {
    CudaExec ex = exec();
    for (int t = 0; t < T; ++t) {
      KernelArgs<S> a = args(h, control_count == 1 ? 0 : (control_count ? t : 0));
      for (int k = 0; k < K; ++k) {
        a.q = k == 0 ? q(t) : fsub[k].q.get();
        a.qd = k == 0 ? qd(t) : fsub[k].qd.get();
        a.q_out = k == K - 1 ? q(t + 1) : fsub[k + 1].q.get();
        a.qd_out = k == K - 1 ? qd(t + 1) : fsub[k + 1].qd.get();
        a.grid = build_grid(a.q);
        substep_forward(ex, a);
      }
    }
  }

  // one step backwards: from bsub[0] (the step's input), the step control (step_* or
  // the single control) and adj_top = dL/d(output) to adj_top = dL/d(input)
  void enqueue_backward_step(int K, S h) {
    CudaExec ex = exec();
    bool per_step = control_count > 1;
    if (per_step)
      for (DeviceArray<S>* z : {&adj_spring_act, &adj_tet_act}) check(z->zero(stream), "zero");
    if (per_step) check(adj_control_f.zero(stream), "zero");
    KernelArgs<S> a = args(h, 0);
    if (per_step) {
      a.control_f = step_control_f.get();
      a.spring_act = step_spring_act.get();
      a.tet_act = step_tet_act.get();
    }
    // recompute the substeps, keeping each one's total force
    for (int k = 0; k < K; ++k) {
      a.q = bsub[k].q.get();
      a.qd = bsub[k].qd.get();
      a.q_out = bsub[k + 1].q.get();
      a.qd_out = bsub[k + 1].qd.get();
      a.f_total = f_total_sub[k].get();
      a.grid = build_grid(a.q);
      substep_forward(ex, a);
    }
    a.q_out = dummy_q.get();
    a.qd_out = dummy_qd.get();
    a.adj_f = adj_f.get();
    a.adj_q_slot = adj_q_slot.get();
    a.adj_qd_slot = adj_qd_slot.get();
    if (control_count > 0) {
      a.adj_control_f = adj_control_f.get();
      a.adj_spring_act = adj_spring_act.get();
      a.adj_tet_act = adj_tet_act.get();
    }
    a.g = grad_view(grad_slots, adj_model.get());
    DeviceState<S>* upstream = &adj_top;
    for (int k = K - 1; k >= 0; --k) {
      DeviceState<S>* target = (upstream == &adj_a) ? &adj_b : &adj_a;
      a.q = bsub[k].q.get();
      a.qd = bsub[k].qd.get();
      a.adj_q_out = upstream->q.get();
      a.adj_qd_out = upstream->qd.get();
      a.adj_q_in = target->q.get();
      a.adj_qd_in = target->qd.get();
      a.f_total = f_total_sub[k].get();
      a.grid = build_grid(a.q);
      substep_adjoint(ex, a, /*recompute=*/false);
      upstream = target;
    }
    copy(adj_top.q.get(), upstream->q.get(), adj_top.q.bytes());
    copy(adj_top.qd.get(), upstream->qd.get(), adj_top.qd.bytes());
  }

  // capture `enqueue` into g (once) and launch it; without graphs, enqueue directly
  template <class F>
  void run(bool graphs, Graph& g, const F& enqueue, const char* name) {
    if (error != cudaSuccess) return;
    if (!graphs) {
      enqueue();
      return;
    }
    if (!g.ready()) {
      check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "graph capture");
      if (error != cudaSuccess) return;
      enqueue();
      cudaGraph_t graph = nullptr;
      cudaError_t e = cudaStreamEndCapture(stream, &graph);
      g.graph = graph;
      check(e, name);
      if (error != cudaSuccess) return;
      check(cudaGraphInstantiate(&g.exec, g.graph, 0), "graph instantiation");
      if (error != cudaSuccess) return;
    }
    check(cudaGraphLaunch(g.exec, stream), name);
    ++launches;
  }
};

template <class S>
CudaRolloutT<S>::CudaRolloutT(CudaRolloutOptions<S> options) : options_(options), impl_(std::make_unique<Impl>()) {
  if (options_.steps < 1) options_.steps = 1;
  if (options_.substeps < 1) options_.substeps = 1;
}

template <class S>
CudaRolloutT<S>::~CudaRolloutT() {
  // graphs and arrays free themselves; the stream last, after its work is done
  if (impl_->stream) {
    cudaStreamSynchronize(impl_->stream);
    impl_->forward_graph.reset();
    impl_->backward_graph.reset();
    cudaStreamDestroy(impl_->stream);
  }
}

template <class S>
Status CudaRolloutT<S>::upload(const ModelT<S>& m) {
  std::string reason;
  if (!cuda_available(&reason)) return Status::error("CUDA backend unavailable: " + reason);
  if (m.body_count() > 0)  // one physics: never the particles alone of a world with bodies
    return Status::error("CUDA rollout: the model has " + std::to_string(m.body_count()) +
                         " articulated bodies; the device-resident rollout steps particles only "
                         "(CudaSolver steps bodies and particles together)");
  if (m.integrator == INTEGRATOR_IMPLICIT)
    return Status::error("CUDA rollout: the implicit integrator (settings.integrator) runs on the CPU only");
  Impl& d = *impl_;
  if (!d.stream) {
    cudaError_t e = cudaStreamCreate(&d.stream);
    if (e != cudaSuccess) return cuda_status(e, "stream creation");
  }
  cudaStreamSynchronize(d.stream);
  d.error = cudaSuccess;
  d.forward_graph.reset();
  d.backward_graph.reset();
  d.host = &m;
  d.n = m.particle_count();
  d.springs = m.spring_count();
  d.tets = m.tet_count();
  d.slots = m.slot_count();
  const int n = d.n, T = options_.steps, K = options_.substeps;
  d.check(d.model.upload(m), "model upload");
  d.check(d.grid.alloc(n, m.grid_cell), "grid allocation");
  d.check(d.q_all.resize(std::size_t(T + 1) * n), "state allocation");
  d.check(d.qd_all.resize(std::size_t(T + 1) * n), "state allocation");
  d.fsub.resize(K);
  for (int k = 1; k < K; ++k) d.check(d.fsub[k].alloc(n), "substep allocation");
  d.check(d.f_slot.resize(d.slots), "force allocation");
  d.check(d.f_total.resize(n), "force allocation");
  if (options_.backward) {
    d.bsub.resize(K + 1);
    for (auto& s : d.bsub) d.check(s.alloc(n), "substep allocation");
    d.f_total_sub.resize(K);
    for (auto& f : d.f_total_sub) d.check(f.resize(n), "force allocation");
    for (DeviceState<S>* s : {&d.adj_top, &d.adj_a, &d.adj_b}) d.check(s->alloc(n), "adjoint allocation");
    for (DeviceArray<vec3<S>>* a : {&d.adj_q_slot, &d.adj_qd_slot}) d.check(a->resize(d.slots), "adjoint allocation");
    for (DeviceArray<vec3<S>>* a : {&d.adj_f, &d.dummy_q, &d.dummy_qd, &d.adj_control_f})
      d.check(a->resize(n), "adjoint allocation");
    d.check(d.adj_spring_act.resize(d.springs), "adjoint allocation");
    d.check(d.adj_tet_act.resize(d.tets), "adjoint allocation");
    d.grad_slots = grad_slots(m);
    d.check(d.adj_model.resize(std::size_t(d.grad_slots.size)), "adjoint allocation");
  }
  d.initial_set = d.forward_done = d.backward_done = false;
  d.control_count = 0;
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::set_initial(const StateT<S>& x0) {
  Impl& d = *impl_;
  if (!d.host) return Status::error("CUDA rollout: upload() a model first");
  if (x0.particle_count() != d.n || x0.particle_qd.size() != x0.particle_q.size())
    return Status::error("CUDA rollout: the initial state has " + std::to_string(x0.particle_count()) +
                         " particles, the model " + std::to_string(d.n));
  cudaStreamSynchronize(d.stream);
  d.check(d.q_all.upload_at(0, x0.particle_q.data(), d.n), "initial state upload");
  d.check(d.qd_all.upload_at(0, x0.particle_qd.data(), d.n), "initial state upload");
  d.initial_set = true;
  d.forward_done = d.backward_done = false;
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::set_controls(const std::vector<ControlT<S>>& controls) {
  Impl& d = *impl_;
  if (!d.host) return Status::error("CUDA rollout: upload() a model first");
  const int T = options_.steps, c = int(controls.size());
  if (c != 0 && c != 1 && c != T)
    return Status::error("CUDA rollout: expected 0, 1 or " + std::to_string(T) + " controls, got " + std::to_string(c));
  // zero-filled, each control's arrays copied in where given (empty = zero inputs)
  std::vector<vec3<S>> f(std::size_t(c) * d.n);
  std::vector<S> sa(std::size_t(c) * d.springs), ta(std::size_t(c) * d.tets);
  for (int k = 0; k < c; ++k) {
    const ControlT<S>& ck = controls[k];
    std::string where = "CUDA rollout: control " + std::to_string(k);
    if (!ck.particle_f.empty() && int(ck.particle_f.size()) != d.n)
      return Status::error(where + ": particle_f has " + std::to_string(ck.particle_f.size()) + " entries, expected " +
                           std::to_string(d.n));
    if (!ck.spring_act.empty() && int(ck.spring_act.size()) != d.springs)
      return Status::error(where + ": spring_act has " + std::to_string(ck.spring_act.size()) + " entries, expected " +
                           std::to_string(d.springs));
    if (!ck.tet_act.empty() && int(ck.tet_act.size()) != d.tets)
      return Status::error(where + ": tet_act has " + std::to_string(ck.tet_act.size()) + " entries, expected " +
                           std::to_string(d.tets));
    std::copy(ck.particle_f.begin(), ck.particle_f.end(), f.begin() + std::size_t(k) * d.n);
    std::copy(ck.spring_act.begin(), ck.spring_act.end(), sa.begin() + std::size_t(k) * d.springs);
    std::copy(ck.tet_act.begin(), ck.tet_act.end(), ta.begin() + std::size_t(k) * d.tets);
  }
  cudaStreamSynchronize(d.stream);
  // the graphs hold the old pointers
  d.forward_graph.reset();
  d.backward_graph.reset();
  d.control_count = c;
  d.check(d.control_f_all.upload(f), "control upload");
  d.check(d.spring_act_all.upload(sa), "control upload");
  d.check(d.tet_act_all.upload(ta), "control upload");
  if (c > 1 && options_.backward) {
    d.check(d.step_control_f.resize(d.n), "control allocation");
    d.check(d.step_spring_act.resize(d.springs), "control allocation");
    d.check(d.step_tet_act.resize(d.tets), "control allocation");
    d.check(d.grad_control_f_all.resize(std::size_t(c) * d.n), "gradient allocation");
    d.check(d.grad_spring_act_all.resize(std::size_t(c) * d.springs), "gradient allocation");
    d.check(d.grad_tet_act_all.resize(std::size_t(c) * d.tets), "gradient allocation");
  }
  d.forward_done = d.backward_done = false;
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::forward() {
  Impl& d = *impl_;
  if (!d.host || !d.initial_set) return Status::error("CUDA rollout: upload() a model and set_initial() first");
  const int T = options_.steps, K = options_.substeps;
  const S h = options_.dt / S(K);
  d.run(
      options_.graphs, d.forward_graph, [&] { d.enqueue_forward(T, K, h); }, "forward pass");
  d.forward_done = d.error == cudaSuccess;
  d.backward_done = false;
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::backward(const StateT<S>& adj_final) {
  Impl& d = *impl_;
  if (!options_.backward) return Status::error("CUDA rollout: built with options.backward = false");
  if (!d.forward_done) return Status::error("CUDA rollout: backward() needs a successful forward() first");
  if (adj_final.particle_count() != d.n || adj_final.particle_qd.size() != adj_final.particle_q.size())
    return Status::error("CUDA rollout: the seed dL/d(state T) does not match the model");
  const int T = options_.steps, K = options_.substeps;
  const S h = options_.dt / S(K);
  cudaStreamSynchronize(d.stream);
  d.check(d.adj_top.q.upload_at(0, adj_final.particle_q.data(), d.n), "seed upload");
  d.check(d.adj_top.qd.upload_at(0, adj_final.particle_qd.data(), d.n), "seed upload");
  for (DeviceArray<S>* z : {&d.adj_model, &d.adj_spring_act, &d.adj_tet_act}) d.check(z->zero(d.stream), "zero");
  d.check(d.adj_control_f.zero(d.stream), "zero");
  const bool per_step = d.control_count > 1;
  for (int t = T - 1; t >= 0 && d.error == cudaSuccess; --t) {
    d.copy(d.bsub[0].q.get(), d.q(t), d.bsub[0].q.bytes());
    d.copy(d.bsub[0].qd.get(), d.qd(t), d.bsub[0].qd.bytes());
    if (per_step) {
      d.copy(d.step_control_f.get(), d.control_f_all.at(std::size_t(t) * d.n), d.step_control_f.bytes());
      d.copy(d.step_spring_act.get(), d.spring_act_all.at(std::size_t(t) * d.springs), d.step_spring_act.bytes());
      d.copy(d.step_tet_act.get(), d.tet_act_all.at(std::size_t(t) * d.tets), d.step_tet_act.bytes());
    }
    d.run(
        options_.graphs, d.backward_graph, [&] { d.enqueue_backward_step(K, h); }, "backward step");
    if (per_step) {
      d.copy(d.grad_control_f_all.at(std::size_t(t) * d.n), d.adj_control_f.get(), d.adj_control_f.bytes());
      d.copy(d.grad_spring_act_all.at(std::size_t(t) * d.springs), d.adj_spring_act.get(), d.adj_spring_act.bytes());
      d.copy(d.grad_tet_act_all.at(std::size_t(t) * d.tets), d.adj_tet_act.get(), d.adj_tet_act.bytes());
    }
  }
  d.backward_done = d.error == cudaSuccess;
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::restart_from_final() {
  Impl& d = *impl_;
  if (!d.forward_done) return Status::error("CUDA rollout: restart_from_final() needs a forward() first");
  const int T = options_.steps;
  d.copy(d.q(0), d.q(T), std::size_t(d.n) * sizeof(vec3<S>));
  d.copy(d.qd(0), d.qd(T), std::size_t(d.n) * sizeof(vec3<S>));
  d.forward_done = d.backward_done = false;
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::synchronize() {
  Impl& d = *impl_;
  if (d.stream) d.check(cudaStreamSynchronize(d.stream), "synchronize");
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::download_state(int t, StateT<S>& out) const {
  Impl& d = *impl_;
  if (!d.forward_done && t != 0) return Status::error("CUDA rollout: no forward pass to download from");
  if (t < 0 || t > options_.steps)
    return Status::error("CUDA rollout: state " + std::to_string(t) + " out of range 0.." +
                         std::to_string(options_.steps));
  d.check(cudaStreamSynchronize(d.stream), "synchronize");
  d.check(d.q_all.download_range(std::size_t(t) * d.n, d.n, out.particle_q), "state download");
  d.check(d.qd_all.download_range(std::size_t(t) * d.n, d.n, out.particle_qd), "state download");
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::download_grad_initial(StateT<S>& out) const {
  Impl& d = *impl_;
  if (!d.backward_done) return Status::error("CUDA rollout: no backward pass to download from");
  d.check(cudaStreamSynchronize(d.stream), "synchronize");
  d.check(d.adj_top.q.download(out.particle_q), "gradient download");
  d.check(d.adj_top.qd.download(out.particle_qd), "gradient download");
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::download_grad_controls(std::vector<ControlT<S>>& out) const {
  Impl& d = *impl_;
  if (!d.backward_done) return Status::error("CUDA rollout: no backward pass to download from");
  d.check(cudaStreamSynchronize(d.stream), "synchronize");
  out.assign(d.control_count, ControlT<S>{});
  for (int k = 0; k < d.control_count; ++k) {
    ControlT<S>& c = out[k];
    if (d.control_count == 1) {
      d.check(d.adj_control_f.download(c.particle_f), "gradient download");
      d.check(d.adj_spring_act.download(c.spring_act), "gradient download");
      d.check(d.adj_tet_act.download(c.tet_act), "gradient download");
    } else {
      d.check(d.grad_control_f_all.download_range(std::size_t(k) * d.n, d.n, c.particle_f), "gradient download");
      d.check(d.grad_spring_act_all.download_range(std::size_t(k) * d.springs, d.springs, c.spring_act),
              "gradient download");
      d.check(d.grad_tet_act_all.download_range(std::size_t(k) * d.tets, d.tets, c.tet_act), "gradient download");
    }
  }
  return d.status();
}

template <class S>
Status CudaRolloutT<S>::download_grad_model(ModelGradT<S>& out) const {
  Impl& d = *impl_;
  if (!d.backward_done) return Status::error("CUDA rollout: no backward pass to download from");
  d.check(cudaStreamSynchronize(d.stream), "synchronize");
  // every field's slots in one download: per-element ones as they are, scene-wide ones summed
  // in element order (deterministic)
  std::vector<S> flat;
  d.check(d.adj_model.download(flat), "gradient download");
  RigidModelGradT<S> rigid = std::move(out.rigid);  // not the particle rollout's
  out = d.host->make_grad();
  out.rigid = std::move(rigid);
  if (int(flat.size()) == d.grad_slots.size) add_slots(d.grad_slots, flat.data(), out, /*per_element=*/true);
  return d.status();
}

template <class S>
const vec3<S>* CudaRolloutT<S>::device_positions(int t) const {
  if (t < 0 || t > options_.steps || !impl_->host) return nullptr;
  return impl_->q(t);
}

template <class S>
void* CudaRolloutT<S>::stream() const {
  return impl_->stream;
}

template <class S>
int CudaRolloutT<S>::particle_count() const {
  return impl_->n;
}

template <class S>
int CudaRolloutT<S>::graph_launches() const {
  return impl_->launches;
}

template <class S>
std::size_t CudaRolloutT<S>::device_bytes() const {
  const Impl& d = *impl_;
  std::size_t b = d.q_all.bytes() + d.qd_all.bytes() + d.f_slot.bytes() + d.f_total.bytes() + d.control_f_all.bytes() +
                  d.spring_act_all.bytes() + d.tet_act_all.bytes();
  for (const auto& s : d.fsub) b += s.q.bytes() + s.qd.bytes();
  for (const auto& s : d.bsub) b += s.q.bytes() + s.qd.bytes();
  for (const auto& f : d.f_total_sub) b += f.bytes();
  return b;
}

template class CudaRolloutT<float>;
template class CudaRolloutT<double>;

}  // namespace adj
