// the model upload and the device hash grid of device.cuh
#include <cub/device/device_radix_sort.cuh>

#include "engine/cuda/device.cuh"
#include "engine/solver/model_view.h"

namespace adj::cuda_detail {

template <class S>
cudaError_t DeviceModel<S>::upload(const ModelT<S>& m) {
  cudaError_t first = cudaSuccess;
  auto up = [&](auto& d, const auto& a) {
    cudaError_t e = d.upload(a);
    if (e != cudaSuccess && first == cudaSuccess) first = e;
    return a.empty() ? nullptr : d.get();
  };
  ModelView<S> v = make_view(m);
  v.particle_q = up(particle_q, m.particle_q);
  v.particle_mass = up(particle_mass, m.particle_mass);
  v.particle_radius = up(particle_radius, m.particle_radius);
  v.spring_indices = up(spring_indices, m.spring_indices);
  v.spring_ke = up(spring_ke, m.spring_ke);
  v.spring_kd = up(spring_kd, m.spring_kd);
  v.spring_rest = up(spring_rest, m.spring_rest);
  v.tri_indices = up(tri_indices, m.tri_indices);
  v.tri_pose = up(tri_pose, m.tri_pose);
  v.tri_area = up(tri_area, m.tri_area);
  v.tri_ke = up(tri_ke, m.tri_ke);
  v.tri_ka = up(tri_ka, m.tri_ka);
  v.tri_kd = up(tri_kd, m.tri_kd);
  v.edge_indices = up(edge_indices, m.edge_indices);
  v.edge_rest_angle = up(edge_rest, m.edge_rest_angle);
  v.edge_ke = up(edge_ke, m.edge_ke);
  v.edge_kd = up(edge_kd, m.edge_kd);
  v.tet_indices = up(tet_indices, m.tet_indices);
  v.tet_pose = up(tet_pose, m.tet_pose);
  v.tet_volume = up(tet_volume, m.tet_volume);
  v.tet_mu = up(tet_mu, m.tet_mu);
  v.tet_lambda = up(tet_lambda, m.tet_lambda);
  v.tet_kd = up(tet_kd, m.tet_kd);
  v.shape_type = up(shape_type, m.shape_type);
  v.shape_pos = up(shape_pos, m.shape_pos);
  v.shape_rot = up(shape_rot, m.shape_rot);
  v.shape_size = up(shape_size, m.shape_size);
  v.shape_mesh_start = up(shape_mesh_start, m.shape_mesh_start);
  v.shape_mesh_count = up(shape_mesh_count, m.shape_mesh_count);
  v.mesh_vertices = up(mesh_vertices, m.mesh_vertices);
  v.mesh_tris = up(mesh_tris, m.mesh_tris);
  v.incidence_start = up(incidence_start, m.incidence_start);
  v.incidence_slot = up(incidence_slot, m.incidence_slot);
  v.exclude_start = up(exclude_start, m.exclude_start);
  v.exclude_list = up(exclude_list, m.exclude_list);
  view = v;
  return first;
}

namespace {

// particle i: its integer cell and its bucket (the sort key)
template <class S>
struct GridKeys {
  const vec3<S>* q;
  S inv_cell;
  int table_size;
  Idx3* cell;
  int* key;
  int* index;
  ADJ_HD void operator()(int i) const {
    Idx3 c = grid_cell_of(q[i], inv_cell);
    cell[i] = c;
    key[i] = grid_hash(c.i, c.j, c.k, table_size);
    index[i] = i;
  }
};

// bucket b: the first sorted position whose key is >= b (b = table_size: n)
struct GridStarts {
  const int* key_sorted;
  int n;
  int* cell_start;
  ADJ_HD void operator()(int b) const {
    int lo = 0, hi = n;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (key_sorted[mid] < b)
        lo = mid + 1;
      else
        hi = mid;
    }
    cell_start[b] = lo;
  }
};

}  // namespace

template <class S>
cudaError_t DeviceGrid<S>::alloc(int n, S cell) {
  cell_size = cell;
  table_size = grid_table_size(n);
  bits = 0;
  while ((1 << bits) < table_size) ++bits;
  cudaError_t e = cudaSuccess;
  for (DeviceArray<int>* a : {&key, &key_sorted, &index, &sorted})
    if (e == cudaSuccess) e = a->resize(n);
  if (e == cudaSuccess) e = cell_start.resize(table_size + 1);
  if (e == cudaSuccess) e = this->cell.resize(n);
  if (e != cudaSuccess) return e;
  std::size_t temp_bytes = 0;
  e = cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, key.get(), key_sorted.get(), index.get(), sorted.get(), n, 0,
                                      bits);
  if (e == cudaSuccess) e = temp.resize(temp_bytes ? temp_bytes : 1);
  return e;
}

template <class S>
void DeviceGrid<S>::build(const CudaExec& exec, const vec3<S>* q, int n) {
  if (n <= 0 || *exec.error != cudaSuccess) return;
  exec.launch(n, GridKeys<S>{q, S(1) / cell_size, table_size, cell.get(), key.get(), index.get()});
  std::size_t temp_bytes = temp.size();
  cudaError_t e = cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, key.get(), key_sorted.get(), index.get(),
                                                  sorted.get(), n, 0, bits, exec.stream);
  if (e != cudaSuccess && *exec.error == cudaSuccess) *exec.error = e;
  exec.launch(table_size + 1, GridStarts{key_sorted.get(), n, cell_start.get()});
}

template struct DeviceModel<float>;
template struct DeviceModel<double>;
template struct DeviceGrid<float>;
template struct DeviceGrid<double>;

}  // namespace adj::cuda_detail
