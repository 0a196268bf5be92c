// uniform hash grid for particle-particle contact: particles bucketed by hashed cell,
// each bucket listing particles in increasing index order (deterministic neighbour order)
#pragma once

#include "engine/core/math.h"

namespace adj {

ADJ_HD inline int grid_hash(int ix, int iy, int iz, int table_size) {
  unsigned h = (unsigned(ix) * 73856093u) ^ (unsigned(iy) * 19349663u) ^ (unsigned(iz) * 83492791u);
  return int(h & unsigned(table_size - 1));
}

template <class S>
ADJ_HD inline Idx3 grid_cell_of(const vec3<S>& x, S inv_cell) {
  // clamp so a wild (or non-finite) position cannot overflow the integer cell
  S lim = S(1e6);
  S cx = x.x * inv_cell, cy = x.y * inv_cell, cz = x.z * inv_cell;
  if (!(cx > -lim && cx < lim)) cx = 0;
  if (!(cy > -lim && cy < lim)) cy = 0;
  if (!(cz > -lim && cz < lim)) cz = 0;
  return {int(::floor(cx)), int(::floor(cy)), int(::floor(cz))};
}

// the grid as kernels see it
struct GridView {
  int table_size;          // buckets, a power of two
  const int* cell_start;   // (table_size + 1)
  const int* sorted;       // particle indices by bucket, (particle_count)
  const Idx3* cell;        // integer cell of each particle, (particle_count)
};

// host build (serial counting sort, O(n)); the arrays must be sized by the caller
template <class S>
inline void build_hash_grid(const vec3<S>* q, int n, S cell_size, int table_size, int* cell_start, int* sorted,
                            Idx3* cell, int* scratch /* (table_size) */) {
  S inv = S(1) / cell_size;
  for (int b = 0; b <= table_size; ++b) cell_start[b] = 0;
  for (int i = 0; i < n; ++i) {
    cell[i] = grid_cell_of(q[i], inv);
    cell_start[grid_hash(cell[i].i, cell[i].j, cell[i].k, table_size) + 1]++;
  }
  for (int b = 0; b < table_size; ++b) {
    cell_start[b + 1] += cell_start[b];
    scratch[b] = cell_start[b];
  }
  for (int i = 0; i < n; ++i) sorted[scratch[grid_hash(cell[i].i, cell[i].j, cell[i].k, table_size)]++] = i;
}

inline int grid_table_size(int particle_count) {
  int t = 64;
  while (t < 2 * particle_count) t *= 2;
  return t;
}

}  // namespace adj
