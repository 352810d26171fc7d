// Sizing a grid from the occupancy API, once for every stage that launches "one wave"
// (chapters/06_grid_stride_and_loads_in_flight.md): ask how many blocks of the kernel
// fit on one SM, multiply by the SM count, and launch no more blocks than have work.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "cuda_check.hpp"

namespace reduction {

// a / b rounded up (b > 0).
__host__ __device__ constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// Blocks of `kernel` that fit on one SM with `block` threads and `dynamic_smem` bytes
// of dynamic shared memory (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
template <typename Kernel>
int blocks_per_sm(Kernel kernel, int block, std::size_t dynamic_smem = 0) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, dynamic_smem));
  return per_sm;
}

// One wave: per_sm blocks (at least one) on each of sm_count SMs, but no more blocks
// than ceil(n / per_block), where each block takes per_block elements; at least one.
inline std::size_t resident_grid(int per_sm, int sm_count, std::size_t n, std::size_t per_block) {
  const std::size_t resident = static_cast<std::size_t>(std::max(per_sm, 1)) * static_cast<std::size_t>(sm_count);
  return std::max<std::size_t>(1, std::min(resident, ceil_div(n, per_block)));
}

}  // namespace reduction
