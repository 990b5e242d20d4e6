// CPU replicas of the reduction orders the kernels use, so floating-point reductions can be
// compared bit for bit instead of within a tolerance.
#pragma once

#include <cstddef>
#include <vector>

namespace gpuvp::workloads {

// Shared-memory tree as in the kernels: for stride = size/2 .. 1, v[t] = combine(v[t], v[t+stride])
// for t < stride. `values` holds one entry per thread; its size is a power of two.
template <typename T, typename Combine>
T tree_reduce(std::vector<T> values, Combine combine) {
  for (std::size_t stride = values.size() / 2; stride > 0; stride /= 2) {
    for (std::size_t t = 0; t < stride; ++t) values[t] = combine(values[t], values[t + stride]);
  }
  return values[0];
}

// Grid-stride accumulation per thread (thread g = block*block_size+t visits g, g+grid*block, ...)
// followed by the per-CTA tree: returns one partial per CTA. term(i) gives element i's value.
template <typename T, typename Term, typename Combine>
std::vector<T> grid_stride_partials(std::size_t n, std::size_t grid, std::size_t block, T identity, Term term,
                                    Combine combine) {
  std::vector<T> partials(grid);
  for (std::size_t b = 0; b < grid; ++b) {
    std::vector<T> per_thread(block, identity);
    for (std::size_t t = 0; t < block; ++t) {
      for (std::size_t i = b * block + t; i < n; i += grid * block) per_thread[t] = combine(per_thread[t], term(i));
    }
    partials[b] = tree_reduce(per_thread, combine);
  }
  return partials;
}

// Warp shuffle tree: lane l adds lane l+offset for offset 16, 8, 4, 2, 1; lane 0's value.
template <typename T, typename Combine>
T warp_shuffle_down_reduce(std::vector<T> lanes, Combine combine) {
  lanes.resize(32);
  for (std::size_t offset = 16; offset > 0; offset /= 2) {
    // Lanes read their partner's value from before this step, as shfl does.
    const std::vector<T> before = lanes;
    for (std::size_t l = 0; l + offset < 32; ++l) lanes[l] = combine(before[l], before[l + offset]);
  }
  return lanes[0];
}

}  // namespace gpuvp::workloads
