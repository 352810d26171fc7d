// Building blocks that one stage teaches in full and later stages use again. Each says
// which stage and chapter explain it; a stage that uses one needs only its name.
//
//   warp_sum, block_sum    stage 08 (chapters/08_warp_shuffles.md)
//   unrolled_thread_sum,   stage 10 (chapters/10_loop_unrolling.md)
//   tile_block_sum
//   Float4Split            stage 12 (chapters/12_vector_loads.md)
//   chunk_thread_sum       stage 13 (chapters/13_last_block.md)
//   block_sum_one_round    stage 13 (chapters/13_last_block.md)
//   ticket_grid            stage 13 (chapters/13_last_block.md)
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "grid.hpp"
#include "launch_shape.hpp"

namespace reduction {

// ---- stage 08: sums with warp shuffles ------------------------------------------------

// Lane 0 gets the sum of the warp's 32 values. All 32 lanes must call it.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Thread 0 gets the block's sum: each warp's sum, one value per warp through shared
// memory, then the first warp's sum of those. Every thread of the block must call it,
// and blockDim.x must be a multiple of 32. The barrier at the end keeps a second call
// in the same kernel from overwriting warp_sums while warp 0 still reads them.
// The library's block_reduce (single_pass/single_pass.cuh) is this sum for any type and
// operator, kept as its own copy because the library includes nothing from this folder;
// tests/gpu/test_safety.cu checks that the two give the same bits.
__device__ inline float block_sum(float v) {
  __shared__ float warp_sums[32];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
  }
  __syncthreads();
  return v;
}

// ---- stage 10: sizes known at compile time ---------------------------------------------

// One thread's grid-stride sum, kLoads loads per stride issued back to back into kLoads
// accumulators (the loop is unrolled: kLoads is a constant).
template <unsigned kBlock, int kLoads>
__device__ __forceinline__ float unrolled_thread_sum(const float* __restrict__ in, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = blockIdx.x * static_cast<std::size_t>(kBlock) + threadIdx.x;
  float sum[kLoads] = {};
  for (; i + (kLoads - 1) * stride < n; i += kLoads * stride) {
#pragma unroll
    for (int k = 0; k < kLoads; ++k) sum[k] += in[i + k * stride];
  }
  // Fewer than kLoads elements are left: loaded together as well (a missing one reads as
  // 0), so that the last round costs one trip to memory, not one per element.
  float last[kLoads];
#pragma unroll
  for (int k = 0; k < kLoads; ++k) last[k] = i + k * stride < n ? in[i + k * stride] : 0.0f;
#pragma unroll
  for (int k = 0; k < kLoads; ++k) sum[k] += last[k];
  float v = 0.0f;
#pragma unroll
  for (int k = 0; k < kLoads; ++k) v += sum[k];
  return v;
}

// Thread 0 gets the block's sum: each 32-thread tile (cooperative groups) shuffles to
// its first thread, then the first tile adds the kBlock / 32 tile sums in
// ceil(log2(kBlock / 32)) shuffles (lanes past the last tile add zeros, so any whole
// number of tiles works, 3 included). Every thread of the block must call it, once per
// kernel or with a __syncthreads() between two calls (tile_sums is reused).
template <unsigned kBlock>
__device__ __forceinline__ float tile_block_sum(float v) {
  namespace cg = cooperative_groups;
  static_assert(kBlock % 32 == 0 && kBlock <= 1024, "the block is a whole number of tiles");
  constexpr unsigned kTiles = kBlock / 32;
  constexpr unsigned kSpan = kTiles <= 1    ? 1
                             : kTiles <= 2  ? 2
                             : kTiles <= 4  ? 4
                             : kTiles <= 8  ? 8
                             : kTiles <= 16 ? 16
                                            : 32;
  __shared__ float tile_sums[kTiles];
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  block.sync();                       // outside every branch: the whole block reaches it
  if (tile.meta_group_rank() == 0) {  // the whole first tile enters
    v = tile.thread_rank() < kTiles ? tile_sums[tile.thread_rank()] : 0.0f;
#pragma unroll
    for (unsigned offset = kSpan / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  }
  return v;
}

// ---- stage 12: a float4 body between a scalar head and tail -----------------------------

// float4 loads need 16-byte aligned addresses; cudaMalloc gives them, but a caller's
// pointer into the middle of an array need not. The input splits into `head` scalar
// elements up to the first 16-byte boundary, `vectors` whole float4s, and a scalar tail
// from tail_begin() to n. The host and the kernels compute it the same way.
struct Float4Split {
  std::size_t head;
  std::size_t vectors;
  __host__ __device__ Float4Split(const float* in, std::size_t n) {
    const std::size_t misalign = (reinterpret_cast<std::uintptr_t>(in) % 16) / sizeof(float);
    head = misalign == 0 ? 0 : (4 - misalign < n ? 4 - misalign : n);
    vectors = (n - head) / 4;
  }
  __host__ __device__ std::size_t tail_begin() const { return head + vectors * 4; }
};

// ---- stage 13: one contiguous chunk per block, and a shorter block sum ------------------

// One thread's share of its block's chunk: block b reads the float4s [b * chunk,
// (b + 1) * chunk) of the body, its threads side by side, kUnroll 16-byte loads in
// flight per thread, into kUnroll accumulators. `chunk` is a multiple of kBlock,
// computed on the host (chunk_vectors), so the kernel does no 64-bit division. The
// first threads of the grid also add the scalar head and tail. Returns the thread's value.
template <int kBlock, int kUnroll>
__device__ __forceinline__ float chunk_thread_sum(const float* __restrict__ in, std::size_t n, std::size_t chunk) {
  const Float4Split split(in, n);
  const float4* body = reinterpret_cast<const float4*>(in + split.head);
  const std::size_t thread = blockIdx.x * static_cast<std::size_t>(kBlock) + threadIdx.x;

  float acc[kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) acc[u] = 0.0f;

  constexpr std::size_t kStep = static_cast<std::size_t>(kBlock) * kUnroll;
  const std::size_t begin = blockIdx.x * chunk;
  const std::size_t end = begin + chunk < split.vectors ? begin + chunk : split.vectors;
  std::size_t i = begin + threadIdx.x;
  for (; i + (kUnroll - 1) * kBlock < end; i += kStep) {
    float4 p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) p[u] = __ldg(body + i + u * kBlock);  // all loads first
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] = (((acc[u] + p[u].x) + p[u].y) + p[u].z) + p[u].w;
  }
  // Fewer than kUnroll vectors left for this thread: issued together as well, so they
  // cost one trip to memory, not one each (a missing vector reads as zeros, and the
  // additions come after every load).
  if (i < end) {
    float4 p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      p[u] = i + u * kBlock < end ? __ldg(body + i + u * kBlock) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] = (((acc[u] + p[u].x) + p[u].y) + p[u].z) + p[u].w;
  }
  if (thread < split.head) acc[0] += in[thread];
  if (thread < n - split.tail_begin()) acc[0] += in[split.tail_begin() + thread];

  float v = acc[0];
#pragma unroll
  for (int u = 1; u < kUnroll; ++u) v += acc[u];
  return v;
}

// Thread 0 gets the block's sum, with one barrier and one round of shuffles where
// block_sum has two of each: every thread stores its value, then warp 0 alone adds them.
// With kBlock / 32 values a lane, a multiple of 4 (kBlock >= 128), lane l reads float4s
// l, l + 32, ...: the values 4l..4l+3, then 128 + 4l..128 + 4l + 3, and so on
// (conflict-free 16-byte shared-memory reads); otherwise (kBlock 32 or 64) lane l reads
// the values l, l + 32. It adds them pairwise, and five shuffles add the lanes. The order is fixed and the depth is
// log2(kBlock), as in block_sum. kBlock: a power of two from 32 to 1024. Once per kernel, or with a
// __syncthreads() between two calls: `values` is reused, and warp 0 may still be
// reading it when the other warps have gone on. The library's block_reduce_one_round
// (single_pass/single_pass.cuh) is this sum for any type and operator, and the lab's
// block_sum_one_round takes it; tests/gpu/test_safety.cu checks that the two give the
// same bits.
template <int kBlock>
__device__ __forceinline__ float block_sum_one_round(float v) {
  static_assert(kBlock >= 32 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0, "a power of two from 32 to 1024");
  if constexpr (kBlock == 32) {
    return warp_sum(v);
  } else {
    constexpr int kPerLane = kBlock / 32;
    constexpr bool kVectors = kPerLane % 4 == 0;
    constexpr int kReads = kVectors ? kPerLane / 4 : kPerLane;
    __shared__ alignas(16) float values[kBlock];
    values[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
      float s[kReads];
#pragma unroll
      for (int j = 0; j < kReads; ++j) {
        if constexpr (kVectors) {
          const float4 q = reinterpret_cast<const float4*>(values)[j * 32 + threadIdx.x];
          s[j] = (q.x + q.y) + (q.z + q.w);
        } else {
          s[j] = values[j * 32 + threadIdx.x];
        }
      }
#pragma unroll
      for (int width = 1; width < kReads; width *= 2)
#pragma unroll
        for (int j = 0; j + width < kReads; j += 2 * width) s[j] += s[j + width];
      v = warp_sum(s[0]);
    }
    return v;
  }
}

// ---- stage 14: tagged slots ----------------------------------------------------------
// (chapters/14_tagged_slots.md; stage 18 finishes with them too)
//
// A slot is one 64-bit word: 0 when empty, or a block's partial (the float's bits in
// the low 32) with the tag kFull in the high 32. The block that reads the slots empties
// each one after reading it, so every launch leaves every slot it used at 0, whatever its
// grid: the next launch on the scratch finds nothing but empty slots, and a full slot
// can only be this launch's.

constexpr unsigned kFull = 1;

// A block's partial as a full slot's word.
__device__ __forceinline__ unsigned long long with_tag(float v) {
  return (static_cast<unsigned long long>(kFull) << 32) | __float_as_uint(v);
}

// Stores the full word into *slot, relaxed at GPU scope: one 8-byte store, no fence.
__device__ __forceinline__ void store_tagged(unsigned long long* slot, float v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slot), "l"(with_tag(v)) : "memory");
}

// Reads *slot through L2 (relaxed.gpu) until it is full, empties it, and returns its
// partial. Only the one block that adds the slots may call it, once per slot.
__device__ __forceinline__ float await_tagged(unsigned long long* slot) {
  unsigned long long word = 0;
  do {
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(slot) : "memory");
  } while (static_cast<unsigned>(word >> 32) != kFull);
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(slot), "l"(0ull) : "memory");  // empty for the next launch
  return __uint_as_float(static_cast<unsigned>(word));
}

// Host: float4s per block for `grid` blocks, an even share of the body rounded up to a
// whole number of blocks of threads.
inline std::size_t chunk_vectors(const float* in, std::size_t n, unsigned grid, int block) {
  const std::size_t b = static_cast<std::size_t>(block);
  return ceil_div(ceil_div(Float4Split(in, n).vectors, grid), b) * b;
}

// Host: the grid of a single-pass kernel. Enough blocks to fill the GPU (`per_sm`
// resident blocks per SM, from the occupancy API, capped at kTargetThreadsPerSm), but
// no more than give every thread kMinVectorsPerThread float4s. Chapter 13 explains the
// cap, and the shapes experiment (lab/notes/90_lab_notes.md) measures other grids.
// The arithmetic is shape::ticket_grid (launch_shape.hpp), a host function of the device.
using shape::kMinVectorsPerThread;
using shape::kTargetThreadsPerSm;

inline unsigned ticket_grid(const common::DeviceInfo& device, std::size_t n, int block, int per_sm) {
  return shape::ticket_grid(device, n, block, per_sm);
}

// The same where only the SM count is known (the SM's limits then bound nothing).
inline unsigned ticket_grid(std::size_t n, int block, int per_sm, int sm_count) {
  common::DeviceInfo device;
  device.sm_count = sm_count;
  return shape::ticket_grid(device, n, block, per_sm);
}

}  // namespace reduction
