#include "app/gpu_view.h"

#include <chrono>
#include <cstring>
#include <vector>

#include "render/context.h"
#include "render/frame_loop.h"
#include "render/memory.h"
#include "render/vk_check.h"

#if defined(ADJ_HAS_CUDA) && defined(ADJ_RENDER_CUDA)
#include <cuda_runtime_api.h>

#include "engine/vis/vis_cuda.h"
#include "render/cuda_interop.h"
#define ADJ_GPU_VIEW_CUDA 1
#endif

namespace adj::app {

render::SharePath choose_share_path(const ShareCaps& caps, std::string* why) {
  using render::SharePath;
  auto say = [&](const char* s) {
    if (why) *why = s;
  };
  say("");
  if (!caps.cuda_backend) return SharePath::cpu_mapped;
#ifndef ADJ_GPU_VIEW_CUDA
  say("built without CUDA interop: staging copy");
  return SharePath::cuda_staging;
#else
  if (!caps.cuda_device_matches) {
    say("the Vulkan device is not the CUDA device (UUIDs differ): staging copy");
    return SharePath::cuda_staging;
  }
  if (!caps.export_memory) {
    say("the Vulkan device cannot export memory (no VK_KHR_external_memory_fd): staging copy");
    return SharePath::cuda_staging;
  }
  if (!caps.export_semaphores) {
    say("the Vulkan device cannot export timeline semaphores: staging copy");
    return SharePath::cuda_staging;
  }
  return SharePath::cuda_interop;
#endif
}

ShareCaps share_caps(const render::Context& ctx, bool cuda_backend) {
  ShareCaps c;
  c.cuda_backend = cuda_backend;
  c.export_memory = ctx.info().external_memory_fd;
  c.export_semaphores = ctx.info().external_semaphore_fd;
#ifdef ADJ_GPU_VIEW_CUDA
  if (cuda_backend) {
    auto id = render::cuda_device_uuid(0);
    c.cuda_device_matches = id && std::memcmp(id->data(), ctx.info().uuid.data(), 16) == 0;
  }
#endif
  return c;
}

namespace {

// one set of the buffers drawn in a frame
struct BufferSet {
  render::Buffer spheres, positions, normals;
#ifdef ADJ_GPU_VIEW_CUDA
  render::CudaBuffer cu_spheres, cu_positions, cu_normals;
#endif
};

}  // namespace

struct GpuView::Impl {
  std::vector<BufferSet> sets;  // host paths: one per frame in flight; interop: one
  const Model* model = nullptr;
  int begin = 0, end = 0, particle_count = 0;
  const vis::Surface* surface = nullptr;
  std::vector<vec3<float>> host_q;  // staging download
  State staging;
#ifdef ADJ_GPU_VIEW_CUDA
  render::ExportableSemaphore semaphore;
  render::CudaSemaphore cu_semaphore;
  float* radius = nullptr;  // device radii of [begin, end)
  vis::cuda::DeviceSurface device_surface;
#endif
};

GpuView::GpuView(render::Context& ctx, render::SharePath path)
    : ctx_(ctx), path_(path), impl_(std::make_unique<Impl>()) {
#ifdef ADJ_GPU_VIEW_CUDA
  if (path_ == render::SharePath::cuda_interop) {
    try {
      impl_->semaphore = render::create_exportable_timeline(ctx_, 1);
      impl_->cu_semaphore = render::cuda_import_timeline(render::export_semaphore_fd(ctx_, impl_->semaphore));
    } catch (const render::Error& e) {
      note_ = std::string("interop semaphore: ") + e.what() + "; staging copy instead";
      render::destroy(ctx_, impl_->semaphore);
      path_ = render::SharePath::cuda_staging;
    }
  }
#else
  if (path_ == render::SharePath::cuda_interop) {
    note_ = "built without CUDA interop: staging copy instead";
    path_ = render::SharePath::cuda_staging;
  }
#endif
}

namespace {

void release(render::Context& ctx, BufferSet& s) {
#ifdef ADJ_GPU_VIEW_CUDA
  for (render::CudaBuffer* c : {&s.cu_spheres, &s.cu_positions, &s.cu_normals}) render::cuda_release(*c);
#endif
  for (render::Buffer* b : {&s.spheres, &s.positions, &s.normals})
    if (b->buffer) render::destroy(ctx, *b);
}

}  // namespace

GpuView::~GpuView() {
  // teardown order (platform notes): CUDA work done, CUDA imports released, then Vulkan
#ifdef ADJ_GPU_VIEW_CUDA
  cudaDeviceSynchronize();
  for (BufferSet& s : impl_->sets)
    for (render::CudaBuffer* c : {&s.cu_spheres, &s.cu_positions, &s.cu_normals}) render::cuda_release(*c);
  render::cuda_release(impl_->cu_semaphore);
  if (impl_->radius) cudaFree(impl_->radius);
  vis::cuda::release(impl_->device_surface);
#endif
  vkDeviceWaitIdle(ctx_.device());
  for (BufferSet& s : impl_->sets) release(ctx_, s);
#ifdef ADJ_GPU_VIEW_CUDA
  render::destroy(ctx_, impl_->semaphore);
#endif
}

void GpuView::set_layout(const Model& model, int begin, int end, const vis::Surface* surface) {
  Impl& d = *impl_;
  vkDeviceWaitIdle(ctx_.device());  // frames in flight may still read the old buffers
#ifdef ADJ_GPU_VIEW_CUDA
  cudaDeviceSynchronize();
#endif
  for (BufferSet& s : d.sets) release(ctx_, s);
  d.model = &model;
  d.begin = begin;
  d.end = end;
  d.particle_count = model.particle_count();
  d.surface = surface;
  const bool interop = path_ == render::SharePath::cuda_interop;
  d.sets.assign(interop ? 1 : render::FrameLoop::k_frames_in_flight, BufferSet{});
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_VERTEX_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  const auto memory = interop ? render::BufferMemory::device_exportable : render::BufferMemory::host_mapped;
  auto make = [&](render::Buffer& b, VkDeviceSize bytes) {
    if (bytes) b = render::create_buffer(ctx_, bytes, usage, memory);
  };
  for (BufferSet& s : d.sets) {
    make(s.spheres, VkDeviceSize(end - begin) * sizeof(glm::vec4));
    if (surface) {
      make(s.positions, VkDeviceSize(d.particle_count) * sizeof(glm::vec3));
      make(s.normals, VkDeviceSize(d.particle_count) * sizeof(glm::vec3));
      // particles the surface does not touch keep a unit normal
      if (s.normals.mapped) {
        auto* n = static_cast<glm::vec3*>(s.normals.mapped);
        for (int i = 0; i < d.particle_count; ++i) n[i] = glm::vec3(0, 1, 0);
      }
    }
  }
#ifdef ADJ_GPU_VIEW_CUDA
  if (interop) {
    BufferSet& s = d.sets[0];
    auto import = [&](const render::Buffer& b, render::CudaBuffer& c) {
      if (b.buffer)
        c = render::cuda_import_buffer(render::export_memory_fd(ctx_, b), render::allocation_size(ctx_, b), b.size,
                                       true);
    };
    import(s.spheres, s.cu_spheres);
    import(s.positions, s.cu_positions);
    import(s.normals, s.cu_normals);
    if (d.radius) cudaFree(d.radius);
    d.radius = nullptr;
    if (end > begin) {
      std::vector<float> r(model.particle_radius.begin() + begin, model.particle_radius.begin() + end);
      if (cudaMalloc(reinterpret_cast<void**>(&d.radius), r.size() * sizeof(float)) != cudaSuccess ||
          cudaMemcpy(d.radius, r.data(), r.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
        throw render::Error("GpuView: cannot upload particle radii to the GPU");
    }
    vis::cuda::release(d.device_surface);
    if (surface) {
      if (Status st = vis::cuda::upload(*surface, d.device_surface); !st) throw render::Error(st.message());
      std::vector<glm::vec3> up(d.particle_count, glm::vec3(0, 1, 0));
      cudaMemcpy(s.cu_normals.pointer, up.data(), up.size() * sizeof(glm::vec3), cudaMemcpyHostToDevice);
    }
  }
#endif
}

void GpuView::write(const State& state, uint64_t frame) {
  Impl& d = *impl_;
  if (d.sets.empty() || !d.model) throw render::Error("GpuView: set_layout() first");
  if (state.particle_count() != d.particle_count)
    throw render::Error("GpuView: the state has " + std::to_string(state.particle_count()) + " particles, the layout " +
                        std::to_string(d.particle_count));
  BufferSet& s = d.sets[frame % d.sets.size()];
  if (!s.spheres.mapped && !s.positions.mapped && (s.spheres.buffer || s.positions.buffer))
    throw render::Error("GpuView: host writes need mapped buffers (the interop path writes with CUDA)");
  if (s.spheres.mapped) vis::write_spheres(*d.model, state, d.begin, d.end, static_cast<float*>(s.spheres.mapped));
  if (d.surface && s.positions.mapped) {
    vis::write_positions(state, 0, d.particle_count, static_cast<float*>(s.positions.mapped));
    vis::write_normals(state, *d.surface, static_cast<float*>(s.normals.mapped));
  }
}

void GpuView::write_device(const vec3<float>* q, void* stream, render::FrameLoop& loop) {
  Impl& d = *impl_;
  if (d.sets.empty() || !d.model) throw render::Error("GpuView: set_layout() first");
#ifdef ADJ_GPU_VIEW_CUDA
  auto cuda_check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw render::Error(std::string("GpuView, ") + what + ": " + cudaGetErrorString(e));
  };
  auto status_check = [](const Status& st) {
    if (!st) throw render::Error("GpuView: " + st.message());
  };
  if (path_ == render::SharePath::cuda_interop) {
    BufferSet& s = d.sets[0];
    const uint64_t k = interop_frame_++;
    auto cs = static_cast<cudaStream_t>(stream);
    render::cuda_wait(d.cu_semaphore, 2 * k + 1, cs);  // Vulkan is done with the previous frame
    if (s.cu_spheres.pointer)
      status_check(vis::cuda::write_spheres(q + d.begin, d.radius, 0, d.end - d.begin,
                                            static_cast<float*>(s.cu_spheres.pointer), stream));
    if (d.surface && s.cu_positions.pointer) {
      status_check(
          vis::cuda::write_positions(q, 0, d.particle_count, static_cast<float*>(s.cu_positions.pointer), stream));
      status_check(vis::cuda::write_normals(q, d.device_surface, static_cast<float*>(s.cu_normals.pointer), stream));
    }
    render::cuda_signal(d.cu_semaphore, 2 * k + 2, cs);
    loop.add_timeline_wait(d.semaphore.semaphore, 2 * k + 2, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    loop.add_timeline_signal(d.semaphore.semaphore, 2 * k + 3);
    return;
  }
  // staging: the whole state crosses the bus, then the host path
  auto t0 = std::chrono::steady_clock::now();
  d.staging.particle_q.resize(d.particle_count);
  cuda_check(cudaMemcpyAsync(d.staging.particle_q.data(), q, d.particle_count * sizeof(vec3<float>),
                             cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)),
             "download");
  cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "download");
  download_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  write(d.staging, loop.frame_index());
#else
  (void)q;
  (void)stream;
  (void)loop;
  throw render::Error("GpuView: built without CUDA, device positions cannot be read");
#endif
}

render::ArrayRef<glm::vec4> GpuView::spheres(uint64_t frame) const {
  if (impl_->sets.empty()) return {};
  const BufferSet& s = impl_->sets[frame % impl_->sets.size()];
  return render::ArrayRef<glm::vec4>::device(s.spheres.buffer, size_t(impl_->end - impl_->begin));
}

render::ArrayRef<glm::vec3> GpuView::positions(uint64_t frame) const {
  if (impl_->sets.empty() || !impl_->surface) return {};
  const BufferSet& s = impl_->sets[frame % impl_->sets.size()];
  return render::ArrayRef<glm::vec3>::device(s.positions.buffer, size_t(impl_->particle_count));
}

render::ArrayRef<glm::vec3> GpuView::normals(uint64_t frame) const {
  if (impl_->sets.empty() || !impl_->surface) return {};
  const BufferSet& s = impl_->sets[frame % impl_->sets.size()];
  return render::ArrayRef<glm::vec3>::device(s.normals.buffer, size_t(impl_->particle_count));
}

}  // namespace adj::app
