// The SGEMM kernel body that occupancy/02_resource_usage builds three ways.
//
// C = A x B for row-major A (m x k), B (k x n) and C (m x n). A block of 16 x 16 threads
// (the book's block shape) computes a 64 x 64 tile of C: each thread owns a 4 x 4 patch,
// held in 16 accumulator registers, so the kernel needs enough registers per thread
// (80 on sm_90 with nvcc 13.0) for the register limits of 02 to change its occupancy. A and B are
// staged through shared memory in 64 x 16 and 16 x 64 slices; every element of A loaded
// there is used by 16 threads, every element of B by 16. Any m, n, k >= 1 works: loads
// past an edge read 0 and stores past an edge are skipped.
#pragma once

#include <cstddef>

namespace occupancy {

constexpr int kSgemmThreadsPerSide = 16;                        // 16 x 16 = 256 threads per block
constexpr int kSgemmPatch = 4;                                  // each thread computes 4 x 4 outputs
constexpr int kSgemmTile = kSgemmThreadsPerSide * kSgemmPatch;  // 64 x 64 outputs per block
constexpr int kSgemmTileK = 16;                                 // depth of one shared-memory slice

__device__ __forceinline__ void sgemm_tile(const float* __restrict__ a, const float* __restrict__ b,
                                           float* __restrict__ c, int m, int n, int k) {
  constexpr int threads = kSgemmThreadsPerSide * kSgemmThreadsPerSide;
  // Rows of A's slice are 16 contiguous floats, so consecutive threads store and
  // read consecutive words: no bank conflicts either way.
  __shared__ float a_slice[kSgemmTile][kSgemmTileK];
  __shared__ float b_slice[kSgemmTileK][kSgemmTile];

  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int tid = ty * kSgemmThreadsPerSide + tx;
  const int row0 = blockIdx.y * kSgemmTile;
  const int col0 = blockIdx.x * kSgemmTile;

  float acc[kSgemmPatch][kSgemmPatch] = {};
  for (int k0 = 0; k0 < k; k0 += kSgemmTileK) {
#pragma unroll
    for (int l = 0; l < kSgemmTile * kSgemmTileK / threads; ++l) {
      const int i = tid + l * threads;
      const int ar = i / kSgemmTileK;
      const int ac = i % kSgemmTileK;
      a_slice[ar][ac] = (row0 + ar < m && k0 + ac < k) ? a[static_cast<std::size_t>(row0 + ar) * k + (k0 + ac)] : 0.0f;
      const int br = i / kSgemmTile;
      const int bc = i % kSgemmTile;
      b_slice[br][bc] = (k0 + br < k && col0 + bc < n) ? b[static_cast<std::size_t>(k0 + br) * n + (col0 + bc)] : 0.0f;
    }
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < kSgemmTileK; ++kk) {
      float a_val[kSgemmPatch];
      float b_val[kSgemmPatch];
#pragma unroll
      for (int p = 0; p < kSgemmPatch; ++p) {
        a_val[p] = a_slice[ty + p * kSgemmThreadsPerSide][kk];
        b_val[p] = b_slice[kk][tx + p * kSgemmThreadsPerSide];
      }
#pragma unroll
      for (int i = 0; i < kSgemmPatch; ++i)
#pragma unroll
        for (int j = 0; j < kSgemmPatch; ++j) acc[i][j] = fmaf(a_val[i], b_val[j], acc[i][j]);
    }
    __syncthreads();  // the slices are overwritten in the next iteration
  }

#pragma unroll
  for (int i = 0; i < kSgemmPatch; ++i) {
    const int row = row0 + ty + i * kSgemmThreadsPerSide;
#pragma unroll
    for (int j = 0; j < kSgemmPatch; ++j) {
      const int col = col0 + tx + j * kSgemmThreadsPerSide;
      if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = acc[i][j];
    }
  }
}

}  // namespace occupancy
